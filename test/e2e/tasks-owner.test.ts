// Who owns a task, and the bounds on a caller's tasks, end to end on the built server with a
// PostgreSQL state database and two OAuth issuers (auth optional): an anonymous caller without
// a kept session gets no task (legacy: a clear -32602; 2026-07-28: the call runs directly);
// two OAuth subjects that differ only by issuer never see each other's tasks, one without a
// user id gets none; the fifth running task and the task over the stored limit are refused; a
// ttl of 1 ms is raised to a minute; a working task past its ttl can still be cancelled, and
// its query ends in PostgreSQL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeIssuer, type FakeIssuer } from '../helpers/issuer.js';
import {
  activeStatements as activeStatementsOf,
  realPostgres,
  throwawayDatabase,
  withClient,
} from '../helpers/postgres.js';
import {
  modernRequest,
  postRpc,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const SUITE = 'test/e2e/tasks-owner.test.ts';
const pg = await realPostgres(SUITE);
const EXTENSION = 'io.modelcontextprotocol/tasks';
const MAX_STORED = 6;

const activeStatements = (marker: string): Promise<number> =>
  activeStatementsOf(pg!.adminUrl, marker);

describe.skipIf(!pg)('task owners and limits (built server, PostgreSQL state, OAuth)', () => {
  const state = pg ? throwawayDatabase(pg, 'pgmcp_tasks_owner_state') : { name: '', url: '' };
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-tasks-owner-'));
  let server: HttpServer;
  let first: FakeIssuer;
  let second: FakeIssuer;

  beforeAll(async () => {
    first = await startFakeIssuer({ path: '/one' });
    second = await startFakeIssuer({ path: '/two' });
    const config = join(dir, 'pgmcp.yaml');
    // The user id is the `uid` claim, so a token without one is a subject with no user id.
    writeFileSync(
      config,
      [
        'auth:',
        '  oauth:',
        `    authorizationServers: ["${first.issuer}", "${second.issuer}"]`,
        '    claims: { userId: uid }',
        '',
      ].join('\n'),
    );
    server = await startHttpServer(['--database', pg!.url, '--config', config], {
      env: serverEnv({
        PGMCP_STATE_URL: state.url,
        PGMCP_STATE_SECRET: 'tasks-owner-e2e-state-secret-0123456789',
        PGMCP_TASKS_MAX_STORED_PER_CALLER: String(MAX_STORED),
      }),
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await first?.close();
    await second?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const connect = async (token?: string): Promise<Client> => {
    const client = new Client({ name: 'tasks-owner-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(server.url),
        token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {},
      ),
    );
    return client;
  };
  const token = (issuer: FakeIssuer, claims: Record<string, unknown>): Promise<string> =>
    issuer.mint({ aud: server.url, ...claims });

  /** Creates a task and answers its id (the stream is left to run on). */
  const startTask = async (client: Client, query: string, ttl = 60_000): Promise<string> => {
    const stream = client.experimental.tasks.callToolStream(
      { name: 'query_database', arguments: { query } },
      CallToolResultSchema,
      { task: { ttl } },
    );
    const created = await stream.next();
    if (created.value?.type !== 'taskCreated') {
      throw new Error(`no task: ${JSON.stringify(created.value)}`);
    }
    void stream.return(undefined);
    return created.value.task.taskId;
  };
  const taskCall = (client: Client, query: string) =>
    client.request(
      {
        method: 'tools/call',
        params: { name: 'query_database', arguments: { query }, task: { ttl: 60_000 } },
      },
      CallToolResultSchema,
    );

  it('a sessionless anonymous legacy POST gets no task: a clear -32602, and sees none', async () => {
    // An anonymous caller with a kept session still gets its own tasks.
    const kept = await connect();
    try {
      const taskId = await startTask(kept, 'SELECT 1 AS kept');
      const call = {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'query_database', arguments: { query: 'SELECT 1' }, task: {} },
      };
      const refused = (await postRpc(server.url, call)).json as any;
      expect(refused.error.code).toBe(-32602);
      expect(refused.error.data).toEqual({ reason: 'no_task_owner' });
      expect(refused.error.message).toMatch(/without params\.task, or open a session/);
      const list = (await postRpc(server.url, { jsonrpc: '2.0', id: 2, method: 'tasks/list' }))
        .json as any;
      expect(list.result.tasks).toEqual([]);
      const get = { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId } };
      expect(((await postRpc(server.url, get)).json as any).error.code).toBe(-32602);
      const cancel = { jsonrpc: '2.0', id: 4, method: 'tasks/cancel', params: { taskId } };
      expect(((await postRpc(server.url, cancel)).json as any).error.code).toBe(-32602);
      expect((await kept.experimental.tasks.getTask(taskId)).taskId).toBe(taskId);
    } finally {
      await kept.close();
    }
  });

  it('2026-07-28: an anonymous client that declares tasks has its call run directly', async () => {
    const caps = {
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [EXTENSION]: {} } },
    };
    const call = modernRequest(
      1,
      'tools/call',
      { name: 'query_database', arguments: { query: 'SELECT 6 * 7 AS answer' } },
      caps,
    );
    const answer = (await postRpc(server.url, call.message, call.headers)).json as any;
    expect(answer.result.resultType).toBe('complete');
    expect(answer.result.taskId).toBeUndefined();
    expect(JSON.stringify(answer.result.content)).toContain('42');
    // Nor does another anonymous client see any task.
    const get = modernRequest(2, 'tasks/get', { taskId: 'any' }, caps);
    const res = await postRpc(server.url, get.message, { ...get.headers, 'mcp-name': 'any' });
    expect((res.json as any).error.code).toBe(-32602);
  });

  it('two OAuth subjects that differ only by issuer never see each other’s tasks', async () => {
    const one = await connect(await token(first, { uid: 'same-user' }));
    const two = await connect(await token(second, { uid: 'same-user' }));
    try {
      const taskId = await startTask(one, 'SELECT 1 AS mine');
      expect((await one.experimental.tasks.getTask(taskId)).taskId).toBe(taskId);
      await expect(two.experimental.tasks.getTask(taskId)).rejects.toThrow(/Unknown task/);
      await expect(two.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/Unknown task/);
      const listed = await two.experimental.tasks.listTasks();
      expect(listed.tasks.map((t) => t.taskId)).not.toContain(taskId);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('an OAuth subject without a user id gets no task', async () => {
    const client = await connect(await token(first, {}));
    try {
      await expect(taskCall(client, 'SELECT 1')).rejects.toThrow(/cannot run as a task/);
      // Directly, the call runs.
      const direct = await client.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT 5 AS five' },
      });
      expect(JSON.stringify(direct.content)).toContain('5');
    } finally {
      await client.close();
    }
  });

  it('refuses the fifth running task and the task over the stored limit', async () => {
    const client = await connect(await token(first, { uid: 'busy' }));
    const marker = `tasks_limit_${Date.now()}`;
    try {
      const running: string[] = [];
      for (let i = 0; i < 4; i++) {
        running.push(await startTask(client, `SELECT pg_sleep(60) AS ${marker}_${i}`));
      }
      const refused = await taskCall(client, 'SELECT 1').catch((e: unknown) => e as any);
      expect(refused.code).toBe(-32000);
      expect(refused.data).toEqual({ limit: 'tasks.maxRunningPerCaller', max: 4 });
      expect((await client.experimental.tasks.listTasks()).tasks).toHaveLength(4);
      for (const id of running) await client.experimental.tasks.cancelTask(id);
      await expect.poll(() => activeStatements(marker), { timeout: 10_000 }).toBe(0);

      await startTask(client, 'SELECT 1 AS kept');
      await startTask(client, 'SELECT 2 AS kept');
      // Four cancelled and two more: the stored limit (6) is met, whatever their status.
      const full = await taskCall(client, 'SELECT 3').catch((e: unknown) => e as any);
      expect(full.code).toBe(-32000);
      expect(full.data).toEqual({ limit: 'tasks.maxStoredPerCaller', max: MAX_STORED });
      expect((await client.experimental.tasks.listTasks()).tasks).toHaveLength(MAX_STORED);
    } finally {
      await client.close();
    }
  });

  it('a ttl of 1 ms asked for is granted as a minute, and tasks/get says so', async () => {
    const client = await connect(await token(first, { uid: 'brief' }));
    try {
      const taskId = await startTask(client, 'SELECT 1 AS short', 1);
      expect((await client.experimental.tasks.getTask(taskId)).ttl).toBe(60_000);
    } finally {
      await client.close();
    }
  });

  it('a working task past its ttl can be cancelled, and its query ends in PostgreSQL', async () => {
    const client = await connect(await token(second, { uid: 'late' }));
    const marker = `tasks_expired_${Date.now()}`;
    try {
      const taskId = await startTask(client, `SELECT pg_sleep(60) AS ${marker}`);
      await expect.poll(() => activeStatements(marker), { timeout: 10_000 }).toBe(1);
      // Its ttl runs out (moved into the past rather than waited for).
      await withClient(state.url, (c) =>
        c.query(`UPDATE pgmcp.tasks SET expires_at = now() - interval '1 second' WHERE id = $1`, [
          taskId,
        ]),
      );
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
      expect((await client.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
      await expect.poll(() => activeStatements(marker), { timeout: 10_000 }).toBe(0);
    } finally {
      await client.close();
    }
  });
});
