// Every e2e scenario, written once. runScenarioMatrix() runs each over every connector (stdio and
// Streamable HTTP, legacy and modern era) against one deployment of the server; a scenario that
// only exists in one era says so in `eras` (and the other era gets its counterpart instead).
import { setTimeout as sleep } from 'node:timers/promises';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CONNECTORS,
  ELICITED,
  SAMPLED_PREFIX,
  type Deployment,
  type Era,
  type McpConnection,
  type ToolCallResult,
  type TransportKind,
} from './connectors.js';
import { withClient, type FixtureSchema, type RealPostgres } from './postgres.js';
import { tail } from './server.js';

export interface Target {
  readonly kind: 'postgres' | 'embedded';
  /** The schema holding the fixture tables (items, tags). */
  readonly schema: string;
  readonly itemCount: number;
  /** What the server calls the database ("Database: <name>" in tool text). */
  readonly databaseName: string;
  /** The role the server's queries run as. */
  readonly role: { name: string; superuser: boolean };
  /** Real PostgreSQL only: a query as the admin role, to look at the server from outside. */
  readonly admin: ((sql: string, params?: unknown[]) => Promise<any[]>) | null;
}

/** The target of a deployment serving `info`'s database, with `fixture` in it. */
export function postgresTarget(info: RealPostgres, fixture: FixtureSchema): Target {
  return {
    kind: 'postgres',
    schema: fixture.name,
    itemCount: fixture.itemCount,
    databaseName: decodeURIComponent(new URL(info.url).pathname.slice(1)),
    role: { name: info.role, superuser: false },
    admin: (sql, params) =>
      withClient(info.adminUrl, async (c) => (await c.query(sql, params)).rows),
  };
}

export interface ScenarioContext {
  conn: McpConnection;
  target: Target;
}

export interface Scenario {
  name: string;
  /** Only these eras (default: both). */
  eras?: readonly Era[];
  /**
   * What it changes lives in one server process (a fixture tool that edits that process's
   * registry): left out where the deployment is several instances behind a balancer.
   */
  oneProcess?: boolean;
  timeoutMs?: number;
  run(ctx: ScenarioContext): Promise<void>;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });

function text(result: ToolCallResult): string {
  return result.content
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

async function query(conn: McpConnection, args: Record<string, unknown>): Promise<ToolCallResult> {
  return conn.callTool('query_database', args);
}

/** Messages that reached the client while `work` ran. */
async function during<T>(
  conn: McpConnection,
  work: () => Promise<T>,
): Promise<{ value: T; messages: any[] }> {
  const from = conn.wire.length;
  const value = await work();
  // Notifications dispatched in the same chunk as the response are tapped synchronously, but
  // give the event loop a turn in case one is still in flight.
  await sleep(20);
  return { value, messages: conn.wire.slice(from) };
}

async function toolNames(conn: McpConnection): Promise<string[]> {
  return (await conn.listTools()).tools.map((t) => t.name);
}

async function countItems(conn: McpConnection, target: Target): Promise<number> {
  const result = await query(conn, {
    query: `select count(*)::int as n from ${target.schema}.items`,
  });
  expect(result.isError, text(result)).toBeFalsy();
  return (result.structuredContent as { rows: number[][] }).rows[0]![0]!;
}

export const scenarios: readonly Scenario[] = [
  {
    name: 'tools/list: query_database is listed, the order is stable, every inputSchema is an object schema',
    async run({ conn }) {
      const first = await conn.listTools();
      const second = await conn.listTools();
      const names = first.tools.map((t) => t.name);
      expect(names).toContain('query_database');
      expect(new Set(names).size).toBe(names.length);
      expect(second.tools.map((t) => t.name)).toEqual(names);
      expect(first.nextCursor).toBeUndefined();
      for (const tool of first.tools) {
        expect(tool.inputSchema, tool.name).toMatchObject({ type: 'object' });
        expect(typeof tool.description, tool.name).toBe('string');
        expect(tool.name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
      }
      const queryTool = first.tools.find((t) => t.name === 'query_database')!;
      expect(queryTool.inputSchema).toMatchObject({
        required: ['query'],
        additionalProperties: false,
      });
      expect(queryTool.outputSchema).toMatchObject({ type: 'object' });
      expect(queryTool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    },
  },
  {
    name: 'query_database: TSV text (header, NULL, escapes) and structuredContent that matches outputSchema',
    async run({ conn, target }) {
      const { tools } = await conn.listTools();
      const outputSchema = tools.find((t) => t.name === 'query_database')!.outputSchema!;
      const result = await query(conn, {
        query: `select id, name, note, weight from ${target.schema}.items where id <= 4 order by id`,
      });
      expect(result.isError, text(result)).toBeFalsy();
      expect(text(result)).toBe(
        [
          `Database: ${target.databaseName}`,
          '',
          'id\tname\tnote\tweight',
          '1\titem 01\t\t1.5',
          '2\titem 02\ttab\\there\t3.0',
          '3\titem 03\tline1\\nline2\t4.5',
          '4\titem 04\tback\\\\slash\t6.0',
          '',
          '4 rows.',
        ].join('\n'),
      );
      expect(result.structuredContent).toEqual({
        columns: [
          { name: 'id', type: 'integer' },
          { name: 'name', type: 'text' },
          { name: 'note', type: 'text' },
          { name: 'weight', type: 'numeric' },
        ],
        rows: [
          [1, 'item 01', null, '1.5'],
          [2, 'item 02', 'tab\there', '3.0'],
          [3, 'item 03', 'line1\nline2', '4.5'],
          [4, 'item 04', 'back\\slash', '6.0'],
        ],
        rowCount: 4,
        truncated: false,
        nextOffset: null,
      });
      const validate = ajv.compile(outputSchema);
      expect(validate(result.structuredContent), ajv.errorsText(validate.errors)).toBe(true);
    },
  },
  {
    name: 'query_database: limit says "more available — use offset=N", nextOffset pages through the rest',
    async run({ conn, target }) {
      const sql = `select id from ${target.schema}.items order by id`;
      const ids = (r: ToolCallResult): number[] =>
        (r.structuredContent as { rows: number[][] }).rows.map((row) => row[0]!);
      const page1 = await query(conn, { query: sql, limit: 10 });
      expect(ids(page1)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(page1.structuredContent).toMatchObject({
        rowCount: 10,
        truncated: true,
        nextOffset: 10,
      });
      expect(text(page1)).toMatch(/\n10 rows; more available — use offset=10\.$/);

      const page2 = await query(conn, { query: sql, limit: 10, offset: 10 });
      expect(ids(page2)).toEqual([11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
      expect(page2.structuredContent).toMatchObject({ truncated: true, nextOffset: 20 });
      expect(text(page2)).toMatch(/use offset=20\.$/);

      const page3 = await query(conn, { query: sql, limit: 10, offset: 20 });
      expect(ids(page3)).toEqual([21, 22, 23, 24, 25]);
      expect(page3.structuredContent).toMatchObject({
        rowCount: 5,
        truncated: false,
        nextOffset: null,
      });
      expect(text(page3)).toMatch(/\n5 rows \(from offset 20\); no more rows\.$/);

      const all = await query(conn, { query: sql });
      expect(ids(all)).toHaveLength(target.itemCount);
      expect(all.structuredContent).toMatchObject({ truncated: false, nextOffset: null });
    },
  },
  {
    name: 'query_database runs as the configured role, in a read-only transaction',
    async run({ conn, target }) {
      const result = await query(conn, {
        query: `select current_user::text, current_setting('transaction_read_only'),
                       (select rolsuper from pg_roles where rolname = current_user)`,
      });
      expect(result.isError, text(result)).toBeFalsy();
      expect((result.structuredContent as { rows: unknown[][] }).rows).toEqual([
        [target.role.name, 'on', target.role.superuser],
      ]);
    },
  },
  {
    name: 'dates and timestamps come back as PostgreSQL wrote them (the server runs in Asia/Tokyo)',
    async run({ conn }) {
      const result = await query(conn, {
        query: `select '2024-03-01'::date as d, '2024-03-01 10:00:00.5'::timestamp as ts,
                       '2024-03-01 10:00:00.123456+00'::timestamptz as tstz, 9007199254740993::bigint as big`,
      });
      expect(result.isError, text(result)).toBeFalsy();
      const [row] = (result.structuredContent as { rows: unknown[][] }).rows;
      expect(row!.slice(0, 2)).toEqual(['2024-03-01', '2024-03-01 10:00:00.5']);
      expect(row![2]).toMatch(/^2024-03-0[12] \d\d:00:00\.123456[+-]\d\d(:\d\d)?$/);
      expect(row![3]).toBe('9007199254740993');
      expect(text(result).split('\n')[3]).toBe(row!.join('\t'));
    },
  },
  {
    name: 'query_database: $n placeholders take params',
    async run({ conn, target }) {
      const result = await query(conn, {
        query: `select name, note from ${target.schema}.items where id = $1 and name like $2`,
        params: [3, 'item%'],
      });
      expect(result.isError, text(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [['item 03', 'line1\nline2']] });
    },
  },
  {
    name: 'a write attempt fails with isError and SQLSTATE 25006, and nothing is written',
    async run({ conn, target }) {
      const before = await countItems(conn, target);
      const insert = await query(conn, {
        query: `insert into ${target.schema}.items values (900, 'intruder', null, 1)`,
      });
      expect(insert.isError).toBe(true);
      expect(text(insert)).toMatch(
        /^ERROR 25006: cannot execute INSERT in a read-only transaction/,
      );

      const ddl = await query(conn, { query: `create table ${target.schema}.intruder (x int)` });
      expect(ddl.isError).toBe(true);
      expect(text(ddl)).toMatch(/^ERROR 25006:/);

      // Escapes out of the read-only transaction are refused too.
      const escape = await query(conn, {
        query: `commit; insert into ${target.schema}.items values (901, 'intruder', null, 1)`,
      });
      expect(escape.isError).toBe(true);
      const flip = await query(conn, {
        query: `select set_config('transaction_read_only', 'off', true)`,
      });
      expect(flip.isError).toBe(true);

      expect(await countItems(conn, target)).toBe(before);
      const tables = await query(conn, {
        query: `select count(*)::int from information_schema.tables where table_schema = $1 and table_name = 'intruder'`,
        params: [target.schema],
      });
      expect((tables.structuredContent as { rows: number[][] }).rows[0]![0]).toBe(0);
    },
  },
  {
    name: 'an SQL error is a tool error with SQLSTATE, message and a marker under the position',
    async run({ conn, target }) {
      const sql = `select id, nme from ${target.schema}.items`;
      const result = await query(conn, { query: sql });
      expect(result.isError).toBe(true);
      const lines = text(result).split('\n');
      expect(lines[0]).toBe('ERROR 42703: column "nme" does not exist');
      const at = lines.findIndex((l) => l.startsWith('LINE: '));
      expect(lines[at]).toBe(`LINE: ${sql}`);
      // "nme" starts at character 12 of the statement: the caret sits under it.
      expect(lines[at + 1]).toBe(`      ${' '.repeat(11)}^`);

      const syntax = await query(conn, { query: 'select from where' });
      expect(syntax.isError).toBe(true);
      expect(text(syntax)).toMatch(/^ERROR 42601: syntax error at or near "where"/);
      // query_database has an outputSchema; the error's code and SQLSTATE still reach clients.
      expect(syntax['_meta']).toMatchObject({
        'pgmcp/error': { code: 'PGMCP202', sqlstate: '42601' },
      });
    },
  },
  {
    name: 'every tool names the database the same way',
    async run({ conn, target }) {
      const header = `Database: ${target.databaseName}`;
      const first = async (name: string, args: Record<string, unknown>): Promise<string> =>
        text(await conn.callTool(name, args)).split('\n')[0]!;
      expect(await first('query_database', { query: 'select 1' })).toBe(header);
      expect(await first('get_schema_info', { schema_name: target.schema })).toBe(header);
      expect(await first('count_rows', { schema: target.schema, table: 'items' })).toBe(header);
      expect(await first('execute_explain', { query: 'select 1' })).toBe(header);
    },
  },
  {
    name: 'an unknown tool is a protocol error -32602 (and the connection keeps working)',
    async run({ conn }) {
      await expect(conn.callTool('no_such_tool', {})).rejects.toMatchObject({ code: -32602 });
      expect(await toolNames(conn)).toContain('query_database');
    },
  },
  {
    name: 'arguments that fail the input schema are a tool error (isError), not a protocol error',
    async run({ conn }) {
      for (const args of [
        {},
        { query: 42 },
        { query: 'select 1', limit: 0 },
        { query: 'select 1', bogus: true },
      ]) {
        const result = await query(conn, args);
        expect(result.isError, JSON.stringify(args)).toBe(true);
        expect(text(result)).toMatch(/^Invalid arguments for query_database: /);
      }
    },
  },
  {
    name: 'ping answers {}',
    eras: ['legacy'],
    async run({ conn }) {
      expect(await conn.ping()).toEqual({});
    },
  },
  {
    name: 'server/discover lists every served version and the capabilities',
    eras: ['modern'],
    async run({ conn }) {
      const discovered = await conn.discover();
      expect(discovered['supportedVersions']).toEqual(
        expect.arrayContaining(['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']),
      );
      expect(discovered['capabilities']).toMatchObject({ tools: { listChanged: true } });
    },
  },
  {
    name: 'logging/setLevel: messages at or above the level reach the client, lower ones do not',
    eras: ['legacy'],
    async run({ conn }) {
      const logs: any[] = [];
      conn.onNotification('notifications/message', (params) => logs.push(params));
      expect(await conn.setLogLevel('debug')).toEqual({});
      await conn.callTool('test_tool_with_logging', {});
      await vi.waitFor(() => expect(logs).toHaveLength(3));
      expect(logs.map((l) => [l.level, l.data])).toEqual([
        ['info', 'Tool execution started'],
        ['info', 'Tool processing data'],
        ['info', 'Tool execution completed'],
      ]);
      expect(await conn.setLogLevel('error')).toEqual({});
      const { messages } = await during(conn, () => conn.callTool('test_tool_with_logging', {}));
      expect(messages.filter((m) => m.method === 'notifications/message')).toEqual([]);
      await expect(conn.setLogLevel('loud')).rejects.toMatchObject({ code: -32602 });
    },
  },
  {
    name: 'no log messages reach a request that set no logLevel',
    eras: ['modern'],
    async run({ conn }) {
      const { value, messages } = await during(conn, () => conn.callTool('test_logging_tool', {}));
      expect(value.isError).toBeFalsy();
      expect(messages.filter((m) => m.method === 'notifications/message')).toEqual([]);
    },
  },
  {
    name: 'a tampered pagination cursor is rejected with -32602',
    async run({ conn }) {
      await expect(conn.listTools('not-a-cursor')).rejects.toMatchObject({ code: -32602 });
      const forged = `${Buffer.from(JSON.stringify({ l: 'tools', o: 0 })).toString('base64url')}.${'A'.repeat(43)}`;
      await expect(conn.listTools(forged)).rejects.toMatchObject({ code: -32602 });
      expect(await toolNames(conn)).toContain('query_database');
    },
  },
  {
    name: 'progress notifications 0, 50, 100 of 100 arrive before the result',
    async run({ conn }) {
      const reported: number[] = [];
      const { value, messages } = await during(conn, () =>
        conn.callTool(
          'test_tool_with_progress',
          {},
          { onprogress: (p) => reported.push(p.progress) },
        ),
      );
      expect(value.isError).toBeFalsy();
      const progress = messages.filter((m) => m.method === 'notifications/progress');
      expect(progress.map((m) => [m.params.progress, m.params.total])).toEqual([
        [0, 100],
        [50, 100],
        [100, 100],
      ]);
      const responseAt = messages.findIndex((m) => 'result' in m);
      expect(messages.lastIndexOf(progress.at(-1))).toBeLessThan(responseAt);
      // The SDK hands them to onprogress (over stdio the last one can race the response
      // inside the client, which drops progress for a finished request).
      expect(reported.length).toBeGreaterThanOrEqual(2);
      expect(reported).toEqual([...reported].sort((a, b) => a - b));
    },
  },
  {
    name: 'sampling goes through the client handler and the tool returns the reply',
    async run({ conn }) {
      const prompt = 'What is the capital of Portugal?';
      const { value, messages } = await during(conn, () =>
        conn.callTool('test_sampling', { prompt }),
      );
      expect(text(value)).toBe(`LLM response: ${SAMPLED_PREFIX}${prompt}`);
      const asked = conn.handled.at(-1)!;
      expect(asked.method).toBe('sampling/createMessage');
      expect(asked.params).toMatchObject({
        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
        maxTokens: 100,
      });
      expectEraShapeOfInput(conn, messages, 'sampling/createMessage');
    },
  },
  {
    name: 'elicitation goes through the client handler and the tool returns the answer',
    async run({ conn }) {
      const message = 'Who are you?';
      const { value, messages } = await during(conn, () =>
        conn.callTool('test_elicitation', { message }),
      );
      expect(text(value)).toBe(
        `User response: action=accept, content=${JSON.stringify({ username: ELICITED['username'], email: ELICITED['email'] })}`,
      );
      const asked = conn.handled.at(-1)!;
      expect(asked.method).toBe('elicitation/create');
      expect(asked.params).toMatchObject({
        message,
        requestedSchema: { type: 'object', required: ['username', 'email'] },
      });
      expectEraShapeOfInput(conn, messages, 'elicitation/create');
    },
  },
  {
    name: 'a tool that asks twice gets both answers (two rounds)',
    async run({ conn }) {
      const from = conn.handled.length;
      const { value, messages } = await during(conn, () =>
        conn.callTool('test_input_required_result_multi_round', {}),
      );
      expect(text(value)).toBe(`${ELICITED['name']} likes ${ELICITED['color']}.`);
      expect(conn.handled.slice(from).map((h) => h.params.message)).toEqual([
        'Step 1: What is your name?',
        'Step 2: What is your favorite color?',
      ]);
      if (conn.era === 'modern') {
        expect(messages.filter((m) => m.result?.resultType === 'input_required')).toHaveLength(2);
      }
    },
  },
  {
    name: 'cancelling a running pg_sleep(30) stops it in the database, and the server keeps serving',
    timeoutMs: 45_000,
    async run({ conn, target }) {
      const marker = `pgmcp-cancel-${Math.random().toString(36).slice(2, 10)}`;
      const sql = `select pg_sleep(30) /* ${marker} */`;
      const running = async (): Promise<number> => {
        const rows = await target.admin!(
          `select count(*)::int as n from pg_stat_activity where state = 'active' and query = $1`,
          [sql],
        );
        return rows[0].n as number;
      };
      const controller = new AbortController();
      const started = Date.now();
      const call = conn.callTool('query_database', { query: sql }, { signal: controller.signal });
      const outcome = call.then(
        (result) => ({ answered: result }),
        (error: unknown) => ({ error }),
      );
      if (target.admin) {
        await vi.waitFor(async () => expect(await running()).toBe(1), {
          timeout: 10_000,
          interval: 50,
        });
      } else {
        await sleep(700); // the embedded database has no pg_stat_activity to watch from outside
      }
      controller.abort(new Error('the test cancels the query'));
      const settled = await outcome;
      expect('error' in settled, 'the aborted call must reject on the client').toBe(true);
      if (target.admin) {
        // The backend stopped running the statement well before its 30 s were up.
        await vi.waitFor(async () => expect(await running()).toBe(0), {
          timeout: 5_000,
          interval: 50,
        });
      }
      // The server answers the next request on the same connection, and the database works.
      const next = await vi.waitFor(
        async () => {
          const result = await query(conn, { query: 'select 42 as answer' });
          expect(result.isError, text(result)).toBeFalsy();
          return result;
        },
        { timeout: 10_000, interval: 200 },
      );
      expect(next.structuredContent).toMatchObject({ rows: [[42]] });
      expect(Date.now() - started).toBeLessThan(25_000);
    },
  },
  {
    name: 'tools/list_changed reaches the client when the tool list changes',
    oneProcess: true,
    async run({ conn }) {
      const seen: unknown[] = [];
      conn.onNotification('notifications/tools/list_changed', (params) => seen.push(params));
      const stop = await conn.watchToolList();
      try {
        const present = (await toolNames(conn)).includes('test_dynamic_tool');
        await conn.callTool('test_trigger_tool_change', {});
        await vi.waitFor(() => expect(seen).toHaveLength(1), { timeout: 5_000 });
        expect((await toolNames(conn)).includes('test_dynamic_tool')).toBe(!present);
        await conn.callTool('test_trigger_tool_change', {});
        await vi.waitFor(() => expect(seen).toHaveLength(2), { timeout: 5_000 });
        expect((await toolNames(conn)).includes('test_dynamic_tool')).toBe(present);
      } finally {
        await stop();
      }
    },
  },
];

/**
 * Legacy era: the server sent the client a request (on the stdio stream or the POST's SSE
 * stream). Modern era: it never does; the question came back as an input-required result.
 */
function expectEraShapeOfInput(conn: McpConnection, messages: any[], method: string): void {
  const requests = messages.filter((m) => m.method === method && 'id' in m);
  const inputRequired = messages.filter((m) => m.result?.resultType === 'input_required');
  if (conn.era === 'legacy') {
    expect(requests).toHaveLength(1);
    expect(inputRequired).toHaveLength(0);
  } else {
    expect(messages.filter((m) => 'method' in m && 'id' in m)).toEqual([]);
    expect(inputRequired).toHaveLength(1);
    const asked = Object.values(
      inputRequired[0].result.inputRequests as Record<string, { method: string }>,
    );
    expect(asked.map((r) => r.method)).toEqual([method]);
  }
}

export interface ScenarioEnvironment {
  deployment: Deployment;
  target: Target;
  /** The shared HTTP server's stderr, for failure messages. */
  httpStderr(): string;
  teardown(): Promise<void>;
}

/** Declare the whole matrix: every connector × every scenario that applies to its era. */
export function runScenarioMatrix(
  setup: () => Promise<ScenarioEnvironment>,
  options: {
    /** Only the connectors of these transports (default: every one). */
    transports?: readonly TransportKind[];
    /** The deployment is several instances: scenarios bound to one process are left out. */
    severalInstances?: boolean;
  } = {},
): void {
  const { transports, severalInstances = false } = options;
  let environment: ScenarioEnvironment | undefined;
  beforeAll(async () => {
    environment = await setup();
  }, 180_000);
  afterAll(async () => {
    await environment?.teardown();
  }, 60_000);

  for (const connector of CONNECTORS) {
    if (transports && !transports.includes(connector.transport)) continue;
    describe(connector.name, () => {
      let conn: McpConnection | undefined;
      beforeAll(async () => {
        conn = await connector.connect(environment!.deployment);
        expect(conn.protocolVersion).toBe(connector.version);
      }, 90_000);
      afterAll(async () => {
        await conn?.close();
      }, 30_000);

      for (const scenario of scenarios) {
        if (scenario.eras && !scenario.eras.includes(connector.era)) continue;
        if (severalInstances && scenario.oneProcess) continue;
        it(
          scenario.name,
          async () => {
            try {
              await scenario.run({ conn: conn!, target: environment!.target });
            } catch (error) {
              const stderr =
                connector.transport === 'stdio' ? conn!.stderr() : environment!.httpStderr();
              if (error instanceof Error)
                error.message += `\n--- server stderr (tail) ---\n${tail(stderr, 15)}`;
              throw error;
            }
          },
          scenario.timeoutMs ?? 20_000,
        );
      }
    });
  }
}
