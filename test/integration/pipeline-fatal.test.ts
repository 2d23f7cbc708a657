// A session ended by the server mid-statement (pg_terminate_backend, a shutdown, a failover)
// ends with a FATAL error and a closed socket, never ReadyForQuery: the call must fail at
// once and its connection must not be lost to the pool.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { realPostgres, withClient } from '../helpers/postgres.js';

const pg = await realPostgres('test/integration/pipeline-fatal.test.ts (FATAL mid-statement)');

describe.skipIf(!pg)('a backend terminated mid-statement', () => {
  let db: Database;
  const statement = (sql: string) => ({
    sql,
    params: [],
    offset: 0,
    limit: 10,
    maxBytes: 100_000,
    readOnly: true,
    timeoutMs: 20_000,
    principal: ANONYMOUS,
  });

  beforeAll(async () => {
    db = await createDatabase(
      {
        url: pg!.url,
        poolSize: 1,
        embedded: { dataDir: '', demo: false },
      },
      pino({ level: 'silent' }),
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  it('fails the call promptly and leaves the pool usable', async () => {
    const marker = `fatal_${process.pid}_${Date.now()}`;
    const started = Date.now();
    const running = db.runStatement(statement(`select pg_sleep(15), '${marker}'`));
    running.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    await withClient(pg!.adminUrl, (client) =>
      client.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where query like '%' || $1 || '%' and pid <> pg_backend_pid()`,
        [marker],
      ),
    );
    await expect(running).rejects.toMatchObject({ category: 'unavailable' });
    expect(Date.now() - started).toBeLessThan(10_000);
    // The pool of one got its slot back: the next call runs.
    const next = await db.runStatement(statement('select 1'));
    expect(next.rows).toEqual([[1]]);
  });
});
