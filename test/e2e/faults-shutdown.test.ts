// SIGTERM, as a deploy sends it: readiness goes false (/health 503 "draining"), new requests get
// 503 with Retry-After, a session's GET stream ends with a retry hint, the calls in flight finish
// within server.shutdownTimeoutMs (or are then cancelled in PostgreSQL), and the process exits
// 0. With the embedded database, its lock is released.
import { mkdtempSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONNECTORS, LATEST_LEGACY, type McpConnection } from '../helpers/connectors.js';
import { realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import {
  POST_HEADERS,
  rawHttp,
  rawInitialize,
  serverEnv,
  startHttpServer,
  tail,
  type HttpServer,
} from '../helpers/server.js';

const pg = await realPostgres('test/e2e/faults-shutdown.test.ts (SIGTERM)');
const LEGACY_HTTP = CONNECTORS.find((c) => c.transport === 'http' && c.version === LATEST_LEGACY)!;

/** A session's GET stream, read until the server ends it. */
function openGetStream(url: string, headers: Record<string, string>) {
  let text = '';
  let status = 0;
  const ended = new Promise<void>((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', headers: { ...headers, accept: 'text/event-stream' } },
      (res) => {
        status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve());
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
  return {
    ended,
    get status() {
      return status;
    },
    get text() {
      return text;
    },
  };
}

describe.skipIf(!pg)('SIGTERM drains, then stops', () => {
  const info = pg as RealPostgres;
  let server: HttpServer | undefined;
  let connection: McpConnection | undefined;
  afterEach(async () => {
    await connection?.close().catch(() => undefined);
    connection = undefined;
    server?.process.kill('SIGKILL');
    await server?.exited;
    server = undefined;
  });

  const start = async (shutdownTimeoutMs: number): Promise<HttpServer> => {
    server = await startHttpServer(['--database', info.url], {
      env: serverEnv({ PGMCP_SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) }),
    });
    connection = await LEGACY_HTTP.connect({
      httpUrl: () => server!.url,
      stdioArgs: [],
      env: serverEnv(),
    });
    return server;
  };
  const running = async (marker: string): Promise<number> => {
    const { rows } = await withClient(info.adminUrl, (c) =>
      c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE query LIKE $1 AND state = 'active' AND pid <> pg_backend_pid()`,
        [`%${marker}%`],
      ),
    );
    return rows[0]!.n;
  };

  it('a call in flight finishes; new requests get 503 + Retry-After; the GET stream ends with retry; exit 0', async () => {
    const s = await start(10_000);
    const { headers } = await rawInitialize(s.url);
    const stream = openGetStream(s.url, headers);
    await vi.waitFor(() => expect(stream.status).toBe(200));

    const marker = `drain_${Date.now()}`;
    const call = connection!.callTool('query_database', {
      query: `SELECT pg_sleep(1.5) AS ${marker}`,
    });
    await vi.waitFor(async () => expect(await running(marker)).toBe(1), { timeout: 10_000 });
    const signalledAt = Date.now();
    s.process.kill('SIGTERM');

    await vi.waitFor(async () => {
      const health = await rawHttp(`${s.origin}/health`);
      expect(health.status).toBe(503);
      expect(health.json).toMatchObject({ status: 'draining' });
    });
    const refused = await rawHttp(s.url, {
      method: 'POST',
      headers: { ...POST_HEADERS, ...headers },
      body: { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} },
    });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json).toMatchObject({
      error: { code: -32603, message: expect.stringMatching(/shutting down/) },
    });
    const rest = await rawHttp(`${s.origin}/api/tools`);
    expect(rest.status).toBe(503);
    expect(rest.headers['retry-after']).toBe('5');
    expect(rest.json).toMatchObject({ error: expect.stringMatching(/shutting down/) });

    await stream.ended;
    expect(stream.text).toMatch(/retry: 5000\n/);

    const result = await call;
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    const exit = await s.exited;
    expect(exit, tail(s.stderr())).toEqual({ code: 0, signal: null });
    process.stdout.write(
      `[faults] SIGTERM with a 1.5 s call in flight: exited ${Date.now() - signalledAt} ms after the signal\n`,
    );
  });

  it('a call still running at server.shutdownTimeoutMs is cancelled in PostgreSQL; exit 0', async () => {
    const s = await start(500);
    const marker = `cancel_at_stop_${Date.now()}`;
    const call = connection!
      .callTool('query_database', { query: `SELECT pg_sleep(30) AS ${marker}` })
      .then(
        (result) => ({ result, error: null }),
        (error: unknown) => ({ result: null, error }),
      );
    await vi.waitFor(async () => expect(await running(marker)).toBe(1), { timeout: 10_000 });
    const signalledAt = Date.now();
    s.process.kill('SIGTERM');
    const exit = await s.exited;
    const exitedAfter = Date.now() - signalledAt;
    expect(exit, tail(s.stderr())).toEqual({ code: 0, signal: null });
    expect(s.stderr()).toMatch(/cancelling them/);
    // The statement is not left running in PostgreSQL.
    await vi.waitFor(async () => expect(await running(marker)).toBe(0), { timeout: 5_000 });
    const answered = await call;
    if (answered.result) {
      expect(answered.result.isError).toBe(true);
      expect(JSON.stringify(answered.result)).toMatch(/PGMCP204/);
    }
    process.stdout.write(
      `[faults] SIGTERM with a 30 s call, shutdownTimeoutMs 500: exited ${exitedAfter} ms after the signal\n`,
    );
  });

  it('embedded: its child killed mid-query fails the call clearly and is restarted; at SIGTERM it stops cleanly and its lock is released; exit 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'pgmcp-faults-embedded-'));
    try {
      const s = await startHttpServer(['--data-dir', dataDir], { env: serverEnv() });
      server = s;
      expect(existsSync(join(dataDir, 'pgmcp.lock'))).toBe(true);
      connection = await LEGACY_HTTP.connect({
        httpUrl: () => s.url,
        stdioArgs: [],
        env: serverEnv(),
      });
      const childPid = (): number =>
        (JSON.parse(readFileSync(join(dataDir, 'pgmcp.lock'), 'utf8')) as { childPid: number })
          .childPid;
      const before = childPid();
      const call = connection.callTool('query_database', { query: 'SELECT pg_sleep(3)' });
      await new Promise((r) => setTimeout(r, 500));
      const killedAt = Date.now();
      process.kill(before, 'SIGKILL');
      const failed = await call;
      expect(failed.isError, JSON.stringify(failed)).toBe(true);
      expect(JSON.stringify(failed)).toMatch(/PGMCP201/);
      // Restarted by itself; committed data intact (the demo dataset is there).
      let answered: Awaited<typeof call> | undefined;
      await vi.waitFor(
        async () => {
          answered = await connection!.callTool('query_database', {
            query: 'SELECT count(*)::int AS n FROM demo.observations',
          });
          expect(answered.isError, JSON.stringify(answered)).toBeFalsy();
        },
        { timeout: 30_000, interval: 200 },
      );
      expect(JSON.stringify(answered)).toMatch(/7000/);
      expect(childPid()).not.toBe(before);
      process.stdout.write(
        `[faults] embedded child killed mid-query: answered again ${Date.now() - killedAt} ms after the kill\n`,
      );
      s.process.kill('SIGTERM');
      const exit = await s.exited;
      expect(exit, tail(s.stderr())).toEqual({ code: 0, signal: null });
      expect(existsSync(join(dataDir, 'pgmcp.lock'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
