// Pool exhaustion: with every connection busy, a call waits in a bounded queue
// (database.queueLimit, database.queueTimeoutMs), then gets a clear error: over MCP a tool error
// PGMCP212 with the seconds to wait; on /api 503 with Retry-After. Nothing waits unbounded, and
// once the pool frees up the calls are answered again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONNECTORS,
  LATEST_LEGACY,
  type McpConnection,
  type ToolCallResult,
} from '../helpers/connectors.js';
import { realPostgres, type RealPostgres } from '../helpers/postgres.js';
import { rawHttp, serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/faults-pool.test.ts (pool exhaustion)');
const LEGACY_HTTP = CONNECTORS.find((c) => c.transport === 'http' && c.version === LATEST_LEGACY)!;

const textOf = (result: ToolCallResult): string =>
  result.content.map((c) => c.text ?? '').join('\n');
const errorOf = (result: ToolCallResult): Record<string, unknown> | undefined =>
  (result['_meta'] as Record<string, Record<string, unknown>> | undefined)?.['pgmcp/error'];

describe.skipIf(!pg)('every connection busy: a bounded queue, then PGMCP212', () => {
  const info = pg as RealPostgres;
  let server: HttpServer;
  let connection: McpConnection;

  beforeAll(async () => {
    server = await startHttpServer(['--database', info.url], {
      env: serverEnv({
        PGMCP_POOL_SIZE: '2',
        PGMCP_QUEUE_LIMIT: '2',
        PGMCP_QUEUE_TIMEOUT_MS: '400',
      }),
    });
    connection = await LEGACY_HTTP.connect({
      httpUrl: () => server.url,
      stdioArgs: [],
      env: serverEnv(),
    });
  });
  afterAll(async () => {
    await connection?.close();
    server?.process.kill('SIGKILL');
    await server?.exited;
  });

  it('two calls hold the pool; two wait and are refused after the queue wait; more are refused at once; then calls go through', async () => {
    const query = (sql: string): Promise<ToolCallResult> =>
      connection.callTool('query_database', { query: sql });
    const holders = [query('SELECT pg_sleep(2.5) AS a'), query('SELECT pg_sleep(2.5) AS b')];
    // Let both take their connections first.
    await new Promise((r) => setTimeout(r, 500));
    const waiters = [query('SELECT 1 AS w1'), query('SELECT 1 AS w2')];
    await new Promise((r) => setTimeout(r, 50));
    const refused = await Promise.all([query('SELECT 1 AS r1'), query('SELECT 1 AS r2')]);
    for (const result of refused) {
      expect(result.isError, textOf(result)).toBe(true);
      expect(errorOf(result)).toMatchObject({
        code: 'PGMCP212',
        reason: 'queue full',
        retryAfterSeconds: 1,
      });
      expect(textOf(result)).toMatch(/All 2 connections .* busy .*database\.queueLimit/);
    }
    for (const result of await Promise.all(waiters)) {
      expect(errorOf(result)).toMatchObject({ code: 'PGMCP212', reason: 'queue wait timed out' });
      expect(textOf(result)).toMatch(/none came free in 400 ms \(database\.queueTimeoutMs\)/);
    }
    // REST, while the pool is still held: the catalog's first load cannot get a connection.
    const rest = await rawHttp(`${server.origin}/api/schema`);
    expect(rest.status, rest.text).toBe(503);
    expect(rest.headers['retry-after']).toBe('1');
    expect(rest.json).toMatchObject({ error: expect.stringMatching(/unavailable/) });

    for (const result of await Promise.all(holders)) {
      expect(result.isError, textOf(result)).toBeFalsy();
    }
    const after = await query('SELECT 1 AS after');
    expect(after.isError, textOf(after)).toBeFalsy();
    expect(server.process.exitCode).toBeNull();
  });
});
