// Write confirmations across instances: two servers on one PostgreSQL state database and one
// server.stateSecret, the database they serve open to writes. A confirm nonce a preview gave on
// one instance runs its write once: replayed on the other instance (or on the first) it is
// refused, and the write has happened exactly once.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';
import { startInstances } from '../helpers/cluster.js';
import { serverEnv, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres(
  'test/e2e/shared-nonces.test.ts (write confirmations, two instances)',
);

const text = (result: any): string =>
  (result.content as { type: string; text?: string }[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

describe.skipIf(!pg)('write confirmation nonces on several instances', () => {
  const state = throwawayDatabase(pg!, 'pgmcp_nonce_state');
  const served = throwawayDatabase(pg!, 'pgmcp_nonce_data');
  let instances: HttpServer[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    await withClient(served.url, (c) => c.query('CREATE TABLE ledger (id int, note text)'));
    const env = serverEnv({
      PGMCP_STATE_URL: state.url,
      PGMCP_STATE_SECRET: 'shared-nonces-share-this-secret',
    });
    instances = await startInstances(2, ['--database', served.url, '--allow-writes'], { env });
    for (const instance of instances) {
      // Without elicitation: a write is previewed and confirmed by calling again with the nonce.
      const client = new Client({ name: 'pgmcp-e2e-nonces', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(instance.url)));
      clients.push(client);
    }
  }, 180_000);
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(instances.map((i) => i.stop()));
  }, 60_000);

  const rowsWith = async (note: string): Promise<number> =>
    withClient(served.url, async (c) => {
      const { rows } = await c.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM ledger WHERE note = $1',
        [note],
      );
      return rows[0]!.n;
    });

  const preview = async (client: Client, note: string): Promise<string> => {
    const result = await client.callTool({
      name: 'query_database',
      arguments: { query: 'INSERT INTO ledger VALUES (1, $1)', params: [note] },
    });
    expect(result.isError, text(result)).toBeFalsy();
    const confirmation = (result.structuredContent as any)?.confirmation as { nonce: string };
    expect(confirmation?.nonce, text(result)).toEqual(expect.any(String));
    return confirmation.nonce;
  };
  const confirm = (client: Client, note: string, nonce: string) =>
    client.callTool({
      name: 'query_database',
      arguments: { query: 'INSERT INTO ledger VALUES (1, $1)', params: [note], confirm: nonce },
    });

  it('a nonce confirmed on one instance is refused on the other', { timeout: 60_000 }, async () => {
    const [a, b] = clients as [Client, Client];
    const nonce = await preview(a, 'first');
    const ran = await confirm(a, 'first', nonce);
    expect(ran.isError, text(ran)).toBeFalsy();
    expect(await rowsWith('first')).toBe(1);

    const replayed = await confirm(b, 'first', nonce);
    expect(replayed.isError).toBe(true);
    expect(text(replayed)).toContain('The write was not run: the confirm nonce was already used.');
    expect(await rowsWith('first')).toBe(1);
  });

  it('a nonce one instance issued runs on the other, once', { timeout: 60_000 }, async () => {
    const [a, b] = clients as [Client, Client];
    const nonce = await preview(a, 'second');
    const ran = await confirm(b, 'second', nonce);
    expect(ran.isError, text(ran)).toBeFalsy();
    for (const client of [a, b]) {
      const replayed = await confirm(client, 'second', nonce);
      expect(replayed.isError).toBe(true);
      expect(text(replayed)).toContain('the confirm nonce was already used');
    }
    expect(await rowsWith('second')).toBe(1);
    // Recorded by its id until it expires; the id is no secret (the nonce is sealed).
    const { rows } = await withClient(state.url, (c) =>
      c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pgmcp.used_nonces WHERE expires_at > now() + interval '4 minutes'",
      ),
    );
    expect(rows[0]!.n).toBeGreaterThanOrEqual(2);
  });
});
