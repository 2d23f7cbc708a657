// Tasks at the ends of their life, on the built server with a PostgreSQL state database, over
// raw HTTP (2026-07-28): SIGTERM lets a task that ends within server.shutdownTimeoutMs complete
// and fails the one still running then ("The server shut down before the task ended."), its
// query cancelled in PostgreSQL, both recorded before the state database closes, so a restarted
// server reads the final status; tasks/cancel of a task that already completed is -32602.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activeStatements as activeStatementsOf,
  realPostgres,
  throwawayDatabase,
} from '../helpers/postgres.js';
import {
  modernRequest,
  postRpc,
  serverEnv,
  startHttpServer,
  tail,
  type HttpServer,
} from '../helpers/server.js';

const SUITE = 'test/e2e/tasks-lifecycle.test.ts';
const pg = await realPostgres(SUITE);
const EXTENSION = 'io.modelcontextprotocol/tasks';
const CAPS = { 'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXTENSION]: {} } } };

const activeStatements = (marker: string): Promise<number> =>
  activeStatementsOf(pg!.adminUrl, marker);

describe.skipIf(!pg)('task lifecycle (built server, PostgreSQL state)', () => {
  const state = pg ? throwawayDatabase(pg, 'pgmcp_tasks_life_state') : { name: '', url: '' };
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-tasks-life-'));
  const config = join(dir, 'pgmcp.yaml');
  const start = (): Promise<HttpServer> =>
    startHttpServer(['--database', pg!.url, '--config', config], {
      env: serverEnv({
        PGMCP_STATE_URL: state.url,
        PGMCP_STATE_SECRET: 'tasks-life-e2e-state-secret-0123456789',
        PGMCP_SHUTDOWN_TIMEOUT_MS: '5000',
      }),
    });
  let server: HttpServer | null = null;

  beforeAll(() => {
    // Loopback is a trusted proxy: X-User-Id names the caller.
    writeFileSync(config, 'auth:\n  trustedProxies: ["127.0.0.1"]\n');
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let id = 0;
  const rpc = async (
    url: string,
    method: string,
    params: Record<string, unknown>,
    taskId?: string,
  ): Promise<any> => {
    const req = modernRequest(++id, method, params, CAPS);
    const headers = {
      ...req.headers,
      'X-User-Id': 'lena',
      ...(taskId ? { 'mcp-name': taskId } : {}),
    };
    return (await postRpc(url, req.message, headers)).json;
  };
  const startTask = async (url: string, query: string): Promise<string> => {
    const created = await rpc(url, 'tools/call', { name: 'query_database', arguments: { query } });
    expect(created.result?.resultType, JSON.stringify(created)).toBe('task');
    return created.result.taskId as string;
  };
  const status = async (url: string, taskId: string): Promise<any> =>
    (await rpc(url, 'tasks/get', { taskId }, taskId)).result;

  it('tasks/cancel of a task that already completed is -32602, and it stays completed', async () => {
    server = await start();
    const taskId = await startTask(server.url, 'SELECT 1 AS one');
    await expect
      .poll(async () => (await status(server!.url, taskId))?.status, { timeout: 10_000 })
      .toBe('completed');
    const cancel = await rpc(server.url, 'tasks/cancel', { taskId }, taskId);
    expect(cancel.error?.code, JSON.stringify(cancel)).toBe(-32602);
    expect(cancel.error.message).toMatch(/already ended \(completed\)/);
    expect((await status(server.url, taskId)).status).toBe('completed');
  });

  it('SIGTERM: a task ending within the drain completes, one still running fails; a restart reads both', async () => {
    server ??= await start();
    const quick = `life_quick_${Date.now()}`;
    const slow = `life_slow_${Date.now()}`;
    const quickId = await startTask(server.url, `SELECT pg_sleep(1.5) IS NULL AS ${quick}`);
    const slowId = await startTask(server.url, `SELECT pg_sleep(60) IS NULL AS ${slow}`);
    await expect.poll(() => activeStatements(quick), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => activeStatements(slow), { timeout: 10_000 }).toBe(1);
    const stopped = server;
    server = null;
    expect(await stopped.stop('SIGTERM', 30_000)).toEqual({ code: 0, signal: null });
    expect(await activeStatements(slow)).toBe(0);
    const stderr = stopped.stderr();
    expect(stderr, tail(stderr)).not.toMatch(/"level":(50|60)/);
    expect(stderr, tail(stderr)).not.toMatch(/pool after calling end|shutdown failed/i);

    server = await start();
    const quickTask = await status(server.url, quickId);
    expect(quickTask.status, JSON.stringify(quickTask)).toBe('completed');
    const slowTask = await status(server.url, slowId);
    expect(slowTask.status, JSON.stringify(slowTask)).toBe('failed');
    expect(slowTask.statusMessage).toBe('The server shut down before the task ended.');
  }, 120_000);
});
