// The built server behind Debian's PgBouncer in transaction mode: it says at start how it will
// hear of catalog changes (polling, since LISTEN through the pooler hears nothing, or LISTEN on
// database.directUrl), and answers tool calls through the pooler with the SDK client.
import { mkdtempSync, rmSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverBinDir, startCluster, type Cluster } from '../helpers/pg-cluster.js';
import { PGBOUNCER, startBouncer, type Bouncer } from '../helpers/pgbouncer.js';
import { reportSkipped } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const ready = serverBinDir() !== null && existsSync(PGBOUNCER);
if (!ready) reportSkipped('pgbouncer-serve', 'no local PostgreSQL server binaries or no pgbouncer');

describe.skipIf(!ready)('pgmcp serve behind PgBouncer (transaction mode)', () => {
  let cluster: Cluster;
  let bouncer: Bouncer;
  const servers: HttpServer[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'pgmcp-bouncer-serve-'));
  beforeAll(async () => {
    cluster = await startCluster();
    bouncer = await startBouncer(cluster, 'transaction');
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) await server.stop();
    bouncer?.stop();
    cluster?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const serve = async (env: Record<string, string> = {}): Promise<HttpServer> => {
    const server = await startHttpServer(
      [
        '--database',
        `postgres://postgres@127.0.0.1:${bouncer.port}/postgres`,
        '--data-dir',
        join(dataDir, String(servers.length)),
      ],
      { env: serverEnv(env) },
    );
    servers.push(server);
    return server;
  };
  const ask = async (server: HttpServer): Promise<string> => {
    const client = new Client({ name: 'pgmcp-bouncer', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const result = (await client.callTool({
        name: 'query_database',
        arguments: { query: "SELECT 'through the pooler' AS answer" },
      })) as { isError?: boolean; content: { text?: string }[] };
      expect(result.isError).not.toBe(true);
      return result.content.map((c) => c.text ?? '').join('');
    } finally {
      await client.close();
    }
  };

  it('without database.directUrl: says the pooler is there and that catalog changes are polled', async () => {
    const server = await serve();
    expect(await ask(server)).toContain('through the pooler');
    expect(server.stderr()).toMatch(
      /catalog changes: a connection pooler sits between pgmcp and PostgreSQL and no database\.directUrl is set/,
    );
    expect(server.stderr()).not.toMatch(/LISTEN on the direct connection/);
  });

  it('with database.directUrl: LISTENs on the direct connection', async () => {
    const server = await serve({ PGMCP_DATABASE_DIRECT_URL: cluster.url() });
    expect(await ask(server)).toContain('through the pooler');
    expect(server.stderr()).toMatch(
      /catalog changes: LISTEN on the direct connection \(database\.directUrl\)/,
    );
    expect(server.stderr()).not.toMatch(/no database\.directUrl is set/);
    // The LISTEN connection is a session of its own on the server, not one of PgBouncer's.
    let listeners = 0;
    for (let i = 0; i < 100 && listeners === 0; i++) {
      const rows = await cluster.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND application_name NOT ILIKE '%pgbouncer%'",
      );
      listeners = rows[0]!.n;
      if (listeners === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(listeners).toBeGreaterThan(0);
  });
});
