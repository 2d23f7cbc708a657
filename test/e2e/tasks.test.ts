// Tasks end to end, on the built server with a PostgreSQL state database: the official SDK v1
// client's experimental task API over HTTP (2025-11-25) and stdio, the 2026-07-28 extension over
// raw HTTP; a cancel that ends the query in PostgreSQL, a restart between creation and result,
// two callers who never see each other's tasks, the ttl bound, an unknown task id and a tool
// that does not run as a task.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  activeStatements as activeStatementsOf,
  realPostgres,
  throwawayDatabase,
} from '../helpers/postgres.js';
import {
  modernRequest,
  PGMCP_BIN,
  postRpc,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const SUITE = 'test/e2e/tasks.test.ts';
const pg = await realPostgres(SUITE);

const activeStatements = (marker: string): Promise<number> =>
  activeStatementsOf(pg!.adminUrl, marker);
const EXTENSION = 'io.modelcontextprotocol/tasks';
const MAX_TTL_MS = 120_000;

describe.skipIf(!pg)('tasks (built server, PostgreSQL state)', () => {
  const state = pg ? throwawayDatabase(pg, 'pgmcp_tasks_state') : { name: '', url: '' };
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-tasks-'));
  const config = join(dir, 'pgmcp.yaml');
  let server: HttpServer;
  const env = (): Record<string, string> =>
    serverEnv({
      PGMCP_STATE_URL: state.url,
      PGMCP_STATE_SECRET: 'tasks-e2e-state-secret-0123456789',
      PGMCP_TASKS_MAX_TTL_MS: String(MAX_TTL_MS),
    });
  const start = (): Promise<HttpServer> =>
    startHttpServer(['--database', pg!.url, '--config', config], { env: env() });

  beforeAll(async () => {
    // Loopback is a trusted proxy: X-User-Id names the caller, so two callers are told apart.
    writeFileSync(config, 'auth:\n  trustedProxies: ["127.0.0.1"]\n');
    server = await start();
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = async (user: string): Promise<Client> => {
    const client = new Client({ name: 'tasks-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { 'X-User-Id': user } },
      }),
    );
    return client;
  };

  /** The task's messages from the SDK's task stream: created, statuses, result or error. */
  const runAsTask = async (
    client: Client,
    name: string,
    args: Record<string, unknown>,
    ttl = 60_000,
  ): Promise<{ taskId: string; types: string[]; last: any }> => {
    let taskId = '';
    const types: string[] = [];
    let last: any = null;
    for await (const message of client.experimental.tasks.callToolStream(
      { name, arguments: args },
      CallToolResultSchema,
      { task: { ttl } },
    )) {
      types.push(message.type);
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      last = message;
    }
    return { taskId, types, last };
  };

  it('lists task support and the tasks capability; a query runs as a task to its result', async () => {
    const client = await connect('alice');
    try {
      expect(client.getServerCapabilities()?.tasks).toMatchObject({
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      const { tools } = await client.listTools();
      const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
      expect(support['query_database']).toBe('optional');
      expect(support['execute_explain']).toBe('optional');
      expect(support['get_schema_info']).toBeUndefined();

      const run = await runAsTask(client, 'query_database', {
        query: 'SELECT 6 * 7 AS answer, pg_sleep(0.3) IS NULL AS slept',
      });
      expect(run.types[0]).toBe('taskCreated');
      expect(run.last.type).toBe('result');
      expect(JSON.stringify(run.last.result.content)).toContain('42');
      const task = await client.experimental.tasks.getTask(run.taskId);
      expect(task.status).toBe('completed');
      // tasks/result of an ended task answers at once, and again.
      const again = await client.experimental.tasks.getTaskResult(run.taskId, CallToolResultSchema);
      expect(JSON.stringify(again.content)).toContain('42');
    } finally {
      await client.close();
    }
  });

  it('cancels a task: the query is gone from pg_stat_activity and the task is cancelled', async () => {
    const client = await connect('alice');
    const marker = `tasks_cancel_${Date.now()}`;
    try {
      const stream = client.experimental.tasks.callToolStream(
        { name: 'query_database', arguments: { query: `SELECT pg_sleep(60) AS ${marker}` } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      );
      const first = await stream.next();
      expect(first.value?.type).toBe('taskCreated');
      const taskId = (first.value as any).task.taskId as string;
      const running = (): Promise<number> => activeStatements(marker);
      await expect.poll(running, { timeout: 10_000 }).toBe(1);
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      expect(cancelled.status).toBe('cancelled');
      await expect.poll(running, { timeout: 10_000 }).toBe(0);
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
      // A second cancel of an ended task is refused (2025-11-25: -32602).
      await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/already ended/);
      await stream.return(undefined);
    } finally {
      await client.close();
    }
  });

  it("keeps one caller's tasks from another; bounds the ttl; refuses unknown ids and tools without task support", async () => {
    const alice = await connect('alice');
    const bob = await connect('bob');
    try {
      const run = await runAsTask(alice, 'query_database', { query: 'SELECT 1 AS one' }, 10 ** 9);
      const task = await alice.experimental.tasks.getTask(run.taskId);
      expect(task.ttl).toBe(MAX_TTL_MS);
      await expect(bob.experimental.tasks.getTask(run.taskId)).rejects.toThrow(/Unknown task/);
      await expect(bob.experimental.tasks.cancelTask(run.taskId)).rejects.toThrow(/Unknown task/);
      await expect(
        bob.experimental.tasks.getTaskResult(run.taskId, CallToolResultSchema),
      ).rejects.toThrow(/Unknown task/);
      const bobs = await bob.experimental.tasks.listTasks();
      expect(bobs.tasks.map((t) => t.taskId)).not.toContain(run.taskId);
      const alices = await alice.experimental.tasks.listTasks();
      expect(alices.tasks.map((t) => t.taskId)).toContain(run.taskId);

      await expect(alice.experimental.tasks.getTask('no-such-task')).rejects.toThrow(
        /Unknown task/,
      );
      // 2025-11-25: a task asked of a tool that does not run as one is -32601.
      await expect(
        alice.request(
          {
            method: 'tools/call',
            params: { name: 'get_schema_info', arguments: {}, task: { ttl: 1000 } },
          },
          CallToolResultSchema,
        ),
      ).rejects.toThrow(/does not run as a task/);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it('another instance on the same state database answers for a task and cancels its query', async () => {
    const second = await start();
    const marker = `tasks_remote_${Date.now()}`;
    const here = await connect('frank');
    const there = new Client({ name: 'tasks-e2e-b', version: '1.0.0' });
    await there.connect(
      new StreamableHTTPClientTransport(new URL(second.url), {
        requestInit: { headers: { 'X-User-Id': 'frank' } },
      }),
    );
    try {
      const stream = here.experimental.tasks.callToolStream(
        { name: 'query_database', arguments: { query: `SELECT pg_sleep(60) AS ${marker}` } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      );
      const first = await stream.next();
      const taskId = (first.value as any).task.taskId as string;
      const running = (): Promise<number> => activeStatements(marker);
      await expect.poll(running, { timeout: 10_000 }).toBe(1);
      expect((await there.experimental.tasks.getTask(taskId)).status).toBe('working');
      // The cancel lands on the other instance; the cluster bus takes it to the running one.
      expect((await there.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
      await expect.poll(running, { timeout: 10_000 }).toBe(0);
      await stream.return(undefined);
    } finally {
      await here.close();
      await there.close();
      await second.stop();
    }
  }, 120_000);

  it('2026-07-28: a client that declares the extension gets a task; tasks/get inlines the result', async () => {
    const caps = {
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXTENSION]: {} } },
    };
    const call = modernRequest(
      1,
      'tools/call',
      { name: 'query_database', arguments: { query: 'SELECT 7 AS seven' } },
      caps,
    );
    const created = (
      await postRpc(server.url, call.message, { ...call.headers, 'X-User-Id': 'carol' })
    ).json as any;
    expect(created.result.resultType).toBe('task');
    const taskId = created.result.taskId as string;
    expect(created.result.ttlMs).toBeGreaterThan(0);
    const get = async (user: string, withCaps = true): Promise<any> => {
      const req = modernRequest(2, 'tasks/get', { taskId }, withCaps ? caps : {});
      const res = await postRpc(server.url, req.message, {
        ...req.headers,
        'mcp-name': taskId,
        'X-User-Id': user,
      });
      return res.json;
    };
    await expect
      .poll(async () => (await get('carol')).result?.status, { timeout: 10_000 })
      .toBe('completed');
    const done = await get('carol');
    expect(done.result.resultType).toBe('complete');
    expect(JSON.stringify(done.result.result.content)).toContain('7');
    expect((await get('dave')).error.code).toBe(-32602);
    expect((await get('carol', false)).error.code).toBe(-32021);
  });

  it('a finished result survives a restart; a task whose instance died does not stay working', async () => {
    const client = await connect('erin');
    const run = await runAsTask(client, 'query_database', { query: 'SELECT 99 AS kept' });
    const stream = client.experimental.tasks.callToolStream(
      { name: 'query_database', arguments: { query: 'SELECT pg_sleep(60)' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    const first = await stream.next();
    const orphan = (first.value as any).task.taskId as string;
    await client.close().catch(() => undefined);
    await server.stop('SIGKILL');
    server = await start();
    const after = await connect('erin');
    try {
      const result = await after.experimental.tasks.getTaskResult(run.taskId, CallToolResultSchema);
      expect(JSON.stringify(result.content)).toContain('99');
      // Its instance is gone: after the heartbeat window the next reader marks it failed.
      await expect
        .poll(async () => (await after.experimental.tasks.getTask(orphan)).status, {
          timeout: 40_000,
          interval: 1_000,
        })
        .toBe('failed');
    } finally {
      await after.close();
    }
  }, 90_000);

  it('over stdio: a query runs as a task with the SDK client', async () => {
    const client = new Client({ name: 'tasks-e2e-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [PGMCP_BIN, 'serve', '--stdio', '--database', pg!.url],
        env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
        stderr: 'ignore',
      }),
    );
    try {
      const run = await runAsTask(client, 'query_database', { query: 'SELECT 5 AS five' });
      expect(run.types[0]).toBe('taskCreated');
      expect(run.last.type).toBe('result');
      expect(JSON.stringify(run.last.result.content)).toContain('5');
      expect((await client.experimental.tasks.getTask(run.taskId)).status).toBe('completed');
    } finally {
      await client.close();
    }
  });
});
