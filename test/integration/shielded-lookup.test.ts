// A lookup behind a savepoint on a plain pg client (what a table's details are read through):
// when the lookup fails because its connection is gone, the caller learns that, not that the
// savepoint could not be rolled back afterwards; and outside a transaction, where a savepoint
// cannot exist, it refuses to run rather than fail with PostgreSQL's bare complaint.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { shieldedQuery } from '../../src/db/shielded.js';
import { realPostgres } from '../helpers/postgres.js';

const info = await realPostgres('test/integration/shielded-lookup.test.ts (shielded lookups)');

describe.skipIf(!info)('a shielded lookup on a pg client', () => {
  const clients: pg.Client[] = [];
  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: info!.url });
    client.on('error', () => undefined);
    await client.connect();
    clients.push(client);
    return client;
  };
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => undefined)));
  });

  it("reports the lookup's own error when its connection is terminated", async () => {
    const client = await connect();
    await client.query('BEGIN');
    const failure = await shieldedQuery(
      client,
      'SELECT pg_catalog.pg_terminate_backend(pg_catalog.pg_backend_pid())',
    ).catch((error: unknown) => error);
    expect(failure).toMatchObject({
      code: '57P01',
      message: expect.stringMatching(/terminating connection due to administrator command/),
    });
  });

  it('refuses to run outside a transaction, and says why', async () => {
    const client = await connect();
    await expect(shieldedQuery(client, 'SELECT 1 AS one')).rejects.toThrow(
      'a shielded lookup needs an open transaction (BEGIN first)',
    );
    // Nothing was left behind: the connection is idle and usable.
    const { rows } = await client.query('SELECT 2 AS two');
    expect(rows).toEqual([{ two: 2 }]);
  });
});
