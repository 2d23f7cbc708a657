// The 2025-11-25 task wire form, with the official SDK v1 client against the conformance
// fixture server: a tool that answers isError fails its task (tasks/get: failed, with the
// tool's message; tasks/result: the tool's own error result), and the log and progress
// notifications of a task's work name the task in _meta["io.modelcontextprotocol/related-task"].
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realPostgres } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/tasks-wire.test.ts (2025-11-25 task wire form)');
const RELATED = 'io.modelcontextprotocol/related-task';

describe.skipIf(!pg)('2025-11-25 tasks on the wire (SDK v1 client)', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttpServer(['--database', pg!.url], {
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
      fixtures: true,
    });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  const connect = async (seen: any[] = []): Promise<Client> => {
    const client = new Client({ name: 'tasks-wire', version: '1.0.0' });
    client.fallbackNotificationHandler = async (n) => void seen.push(n);
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    return client;
  };

  const stream = async (
    client: Client,
    name: string,
    args: Record<string, unknown>,
    progress: any[] = [],
  ) => {
    const messages: any[] = [];
    for await (const m of client.experimental.tasks.callToolStream(
      { name, arguments: args },
      CallToolResultSchema,
      { task: { ttl: 60_000 }, onprogress: (p) => void progress.push(p) },
    )) {
      messages.push(m);
    }
    return messages;
  };

  it('a tool that answers isError fails the task; tasks/result still answers that result', async () => {
    const client = await connect();
    try {
      const messages = await stream(client, 'failing_job', {});
      const taskId = messages.find((m) => m.type === 'taskCreated').task.taskId as string;
      expect(messages.at(-1).type).toBe('error');
      const task = await client.experimental.tasks.getTask(taskId);
      expect(task.status).toBe('failed');
      expect(task.statusMessage).toBe('The job failed.');
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([{ type: 'text', text: 'The job failed.' }]);
      expect(result._meta?.[RELATED]).toEqual({ taskId });
    } finally {
      await client.close();
    }
  });

  it('a query that fails as a task fails the task, with the tool error as its result', async () => {
    const client = await connect();
    try {
      const messages = await stream(client, 'query_database', {
        query: 'SELECT * FROM no_such_table_for_tasks',
      });
      const taskId = messages.find((m) => m.type === 'taskCreated').task.taskId as string;
      const task = await client.experimental.tasks.getTask(taskId);
      expect(task.status).toBe('failed');
      expect(task.statusMessage).toContain('no_such_table_for_tasks');
      const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toContain('no_such_table_for_tasks');
      expect(result._meta?.[RELATED]).toEqual({ taskId });
    } finally {
      await client.close();
    }
  });

  it("the task's log and progress notifications carry the related-task _meta", async () => {
    const seen: any[] = [];
    const logs = () => seen.filter((n) => n.method === 'notifications/message');
    const client = await connect(seen);
    try {
      await client.setLoggingLevel('debug');
      const progress: any[] = [];
      const messages = await stream(
        client,
        'slow_compute',
        { seconds: 0.3, label: 'wire' },
        progress,
      );
      const taskId = messages.find((m) => m.type === 'taskCreated').task.taskId as string;
      expect(messages.at(-1).type).toBe('result');
      // The notifications travel on the session's GET stream: wait until both kinds are in.
      for (let i = 0; i < 100 && (progress.length < 2 || logs().length === 0); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(logs().map((n) => n.params.data)).toContain('Computing wire');
      for (const n of logs()) expect(n.params._meta?.[RELATED]).toEqual({ taskId });
      expect(progress.map((p) => p.progress)).toEqual([0, 1]);
      for (const p of progress) expect(p._meta?.[RELATED]).toEqual({ taskId });
    } finally {
      await client.close();
    }
  });
});
