// PostgreSQL restarted under load, on a throwaway cluster: an SDK client over HTTP keeps calling
// query_database from 8 concurrent loops while the server is stopped (immediate, then smart)
// and started again. pgmcp does not crash; while PostgreSQL is down every call fails fast with
// PGMCP201 and /health says 503; answers resume within 5 s of PostgreSQL being back. The
// figures (how long a failed call took, how long recovery took) are printed for docs/faults.md.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONNECTORS, LATEST_LEGACY, type McpConnection } from '../helpers/connectors.js';
import {
  runAsOwner,
  serverBinDir,
  startCluster,
  type Cluster,
  type StopMode,
} from '../helpers/pg-cluster.js';
import { reportSkipped } from '../helpers/postgres.js';
import { rawHttp, serverEnv, startHttpServer, tail, type HttpServer } from '../helpers/server.js';

const binaries = serverBinDir();
if (!binaries) reportSkipped('faults-restart', 'no local PostgreSQL server binaries (initdb)');

const CONNECT_TIMEOUT_MS = 2_000;
const LEGACY_HTTP = CONNECTORS.find((c) => c.transport === 'http' && c.version === LATEST_LEGACY)!;

interface Outcome {
  ok: boolean;
  code: unknown;
  text: string;
  startedAt: number;
  ms: number;
}

/** `loops` callers calling query_database one after another until stopped. */
function startLoad(connection: McpConnection, loops: number) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loop = async (): Promise<void> => {
    while (running) {
      const startedAt = Date.now();
      const result = await connection.callTool('query_database', { query: 'SELECT 1 AS one' });
      const meta = result['_meta'] as Record<string, { code?: unknown }> | undefined;
      outcomes.push({
        ok: !result.isError,
        code: meta?.['pgmcp/error']?.code,
        text: result.content.map((c) => c.text ?? '').join('\n'),
        startedAt,
        ms: Date.now() - startedAt,
      });
      // A failing call comes back at once; do not spin.
      if (result.isError) await new Promise((r) => setTimeout(r, 20));
    }
  };
  const done = Promise.all(Array.from({ length: loops }, loop));
  return {
    outcomes,
    since: (at: number) => outcomes.filter((o) => o.startedAt >= at),
    async stop() {
      running = false;
      await done;
    },
  };
}

describe.skipIf(!binaries)('PostgreSQL restarted under load', () => {
  let cluster: Cluster;
  let server: HttpServer;
  let connection: McpConnection;

  beforeAll(async () => {
    cluster = await startCluster();
    server = await startHttpServer(['--database', cluster.url()], {
      env: serverEnv({
        PGMCP_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        // A smart shutdown waits for every session, pgmcp's idle pooled ones too.
        PGMCP_IDLE_TIMEOUT_MS: '300',
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
    cluster?.destroy();
  });

  const stopServer = async (mode: StopMode): Promise<void> => {
    if (mode === 'immediate') {
      cluster.stop('immediate');
      return;
    }
    // Smart: new sessions are refused at once, the open ones may finish. pg_ctl is not left
    // waiting (-W): it would block this process, whose loops keep calling meanwhile.
    const pgCtl = join(binaries!, 'pg_ctl');
    const asked = runAsOwner(pgCtl, ['-D', cluster.dataDir, '-m', 'smart', '-W', 'stop']);
    expect(asked.status, asked.output).toBe(0);
  };
  const postmasterGone = (): boolean => !existsSync(join(cluster.dataDir, 'postmaster.pid'));

  for (const mode of ['immediate', 'smart'] as const) {
    it(`${mode} shutdown: no crash, fast PGMCP201 while down, answers again within 5 s`, async () => {
      let load = startLoad(connection, 8);
      await vi.waitFor(() => expect(load.outcomes.some((o) => o.ok)).toBe(true), {
        timeout: 10_000,
      });
      await stopServer(mode);
      if (mode === 'smart') {
        // The calls under way finish; then, with the callers paused, pgmcp's idle
        // connections close and the server finishes its shutdown.
        await new Promise((r) => setTimeout(r, 500));
        await load.stop();
        await vi.waitFor(() => expect(postmasterGone()).toBe(true), { timeout: 30_000 });
        load = startLoad(connection, 8);
      }
      const downAt = Date.now();
      await new Promise((r) => setTimeout(r, 1_500));
      const health = await rawHttp(`${server.origin}/health`);
      expect(health.status).toBe(503);

      // "Down" is until the start was asked for: a call that waited for a pooled connection (or
      // ran once more after losing one) may be answered once the server is up, so the calls
      // judged are those that also ended before it.
      const startingAt = Date.now();
      cluster.start();
      const upAt = Date.now();
      await vi.waitFor(() => expect(load.since(upAt).some((o) => o.ok)).toBe(true), {
        timeout: 5_000,
        interval: 20,
      });
      const recoveredAt = Math.min(
        ...load
          .since(upAt)
          .filter((o) => o.ok)
          .map((o) => o.startedAt),
      );
      await load.stop();

      const down = load.outcomes.filter(
        (o) => o.startedAt >= downAt && o.startedAt + o.ms < startingAt,
      );
      expect(down.length).toBeGreaterThan(0);
      for (const failure of down) {
        expect(failure.ok, failure.text).toBe(false);
        expect(failure.code, failure.text).toBe('PGMCP201');
        expect(failure.text).toMatch(/^The database is unavailable; .*(refused|ended|shutting)/);
        // Fast: a refused connection, never a wait for the connect timeout.
        expect(failure.ms).toBeLessThan(CONNECT_TIMEOUT_MS);
      }
      expect(server.process.exitCode, tail(server.stderr())).toBeNull();
      const slowest = Math.max(...down.map((o) => o.ms));
      const texts = [...new Set(load.outcomes.filter((o) => !o.ok).map((o) => o.text))];
      process.stdout.write(
        `[faults] ${mode} restart: ${down.length} calls while down, slowest failure ${slowest} ms, ` +
          `first answer ${recoveredAt - upAt} ms after PostgreSQL was back; answers: ${JSON.stringify(texts)}\n`,
      );
    });
  }
});
