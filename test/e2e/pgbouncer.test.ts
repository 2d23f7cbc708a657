// pgmcp behind Debian's PgBouncer in transaction mode, one server connection for all of pgmcp's
// pooled ones: callers with different identities, interleaved, each see only their own identity
// and the safety settings on whichever server session their call lands; the catalog watch never
// LISTENs through the pooler (it polls and says so), and with database.directUrl it listens on
// the server itself, so a new @mcp function is a tool at once.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { installCatalogTrigger } from '../../src/catalog/watch.js';
import { PGBOUNCER_BIN, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import {
  realPostgres,
  reportSkipped,
  throwawayDatabase,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const suite = 'test/e2e/pgbouncer.test.ts (pgmcp behind PgBouncer)';
const info = await realPostgres(suite);
if (info && !PGBOUNCER_BIN)
  reportSkipped(suite, 'PgBouncer is not installed (Debian package pgbouncer)');

const text = (result: unknown): string =>
  ((result as { content: Array<{ type: string; text?: string }> }).content ?? [])
    .map((c) => c.text ?? '')
    .join('\n');

describe.skipIf(!info || !PGBOUNCER_BIN)('pgmcp behind PgBouncer in transaction mode', () => {
  const pgInfo = info as RealPostgres;
  const db = throwawayDatabase(pgInfo, 'pgmcp_pgb');
  const withDb = (url: string): string => {
    const u = new URL(url);
    u.pathname = `/${db.name}`;
    return u.toString();
  };
  let bouncer: PgBouncer;
  let polled: HttpServer;
  let direct: HttpServer;
  const clients: Client[] = [];

  const connect = async (server: HttpServer, user: string | null): Promise<Client> => {
    const client = new Client({ name: 'pgbouncer-test', version: '1' });
    const headers: Record<string, string> = user ? { 'x-user-id': user } : {};
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }),
    );
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    await withClient(db.url, async (c) => {
      await installCatalogTrigger(c);
      await c.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${pgInfo.role}`);
    });
    const server = new URL(pgInfo.url);
    bouncer = await startPgBouncer({
      host: server.hostname,
      port: Number(server.port || 5432),
      mode: 'transaction',
      users: [pgInfo.role, 'postgres'],
      poolSize: 1,
    });
    const env = serverEnv({
      PGMCP_DEMO: 'false',
      PGMCP_LOG_LEVEL: 'info',
      PGMCP_POOL_SIZE: '4',
      PGMCP_TRUSTED_PROXIES: '127.0.0.1',
    });
    const viaBouncer = bouncer.via(withDb(pgInfo.url));
    polled = await startHttpServer(['--database', viaBouncer], { env });
    direct = await startHttpServer(['--database', viaBouncer], {
      env: { ...env, PGMCP_DATABASE_DIRECT_URL: withDb(pgInfo.url) },
    });
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await polled?.stop();
    await direct?.stop();
    await bouncer?.stop();
  });

  it('interleaved callers each see their own identity and the safety settings', async () => {
    const alice = await connect(polled, 'alice');
    const bob = await connect(polled, 'bob');
    const nobody = await connect(polled, null);
    const ask = async (client: Client): Promise<string> => {
      const result = await client.callTool({
        name: 'query_database',
        arguments: {
          query: `SELECT coalesce(nullif(current_setting('auth.user_id', true), ''), '-') AS who,
                         current_setting('transaction_read_only') AS ro,
                         current_setting('statement_timeout') AS timeout`,
        },
      });
      expect(result.isError, text(result)).toBeFalsy();
      // Columns in the order selected: who, ro, timeout.
      const [who, ro, timeout] = (result.structuredContent as { rows: string[][] }).rows[0]!;
      expect(ro).toBe('on');
      expect(timeout).not.toBe('0');
      return who!;
    };
    const callers = [alice, bob, nobody];
    const expected = ['alice', 'bob', '-'];
    for (let round = 0; round < 5; round++) {
      const seen = await Promise.all(Array.from({ length: 12 }, (_, i) => ask(callers[i % 3]!)));
      expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => expected[i % 3]));
    }
    // Nothing a call set is left on the one server session they all shared.
    const { rows } = await withClient(pgInfo.adminUrl, (c) =>
      c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = $1 AND state LIKE 'idle in transaction%'`,
        [db.name],
      ),
    );
    expect(rows[0]!.n).toBe(0);
  });

  it('without a direct URL the watch polls and says so; nothing LISTENs on the shared session', async () => {
    await vi.waitFor(() => expect(polled.stderr()).toContain('catalog changes are polled every'), {
      timeout: 10_000,
    });
    expect(polled.stderr()).toContain('database.directUrl');
    // The one server session every call of both servers shares listens on no channel.
    const client = await connect(polled, null);
    const result = await client.callTool({
      name: 'query_database',
      arguments: { query: 'SELECT count(*)::int AS n FROM pg_listening_channels()' },
    });
    expect(result.isError, text(result)).toBeFalsy();
    expect((result.structuredContent as { rows: number[][] }).rows[0]).toEqual([0]);
  });

  it('with database.directUrl the watch listens on the server, and a new @mcp function is a tool at once', async () => {
    await vi.waitFor(
      () =>
        expect(direct.stderr()).toContain('catalog changes are listened for on database.directUrl'),
      { timeout: 10_000 },
    );
    const client = await connect(direct, 'alice');
    const before = (await client.listTools()).tools.map((t) => t.name);
    expect(before).not.toContain('pgb_answer');
    await withClient(db.url, (c) =>
      c.query(`CREATE FUNCTION public.pgb_answer() RETURNS int LANGUAGE sql STABLE AS 'SELECT 42';
               COMMENT ON FUNCTION public.pgb_answer() IS '@mcp The answer'`),
    );
    // The poll comes once a minute: well within that, only the notification can have told it.
    await vi.waitFor(
      async () => {
        const tools = (await client.listTools()).tools.map((t) => t.name);
        expect(tools).toContain('pgb_answer');
      },
      { timeout: 15_000, interval: 250 },
    );
    const result = await client.callTool({ name: 'pgb_answer', arguments: {} });
    expect(text(result)).toContain('42');
  });
});
