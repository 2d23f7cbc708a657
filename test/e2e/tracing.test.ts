// OpenTelemetry traces, end to end: the built server, spawned with the standard OTEL_* variables
// (or telemetry.*), sends its spans to a local OTLP/HTTP receiver (test/helpers/otlp-receiver.ts)
// while the official SDK client calls query_database. The span tree, the parent a client names
// (its traceparent header, or the request's _meta), what a PostgreSQL span holds and what it
// must not, and the sqlcommenter comment PostgreSQL receives, which changes no decision of the
// SQL guard.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_INFO } from '../helpers/connectors.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../helpers/otlp-receiver.js';
import { realPostgres, REPO_ROOT } from '../helpers/postgres.js';
import { serveScript, serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/tracing.test.ts (OpenTelemetry traces)');

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
/** A client's own trace: its trace id, the id of its span that calls pgmcp, the header. */
function clientTrace(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function connect(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client(CLIENT_INFO);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  );
  return client;
}

interface CallAnswer {
  isError?: boolean;
  structuredContent?: { rows?: unknown[][] };
  _meta?: Record<string, unknown>;
  content?: { type: string; text?: string }[];
}

const query = (client: Client, sql: string, meta?: Record<string, string>) =>
  client.callTool({
    name: 'query_database',
    arguments: { query: sql },
    ...(meta ? { _meta: meta } : {}),
  }) as Promise<CallAnswer>;

const errorCode = (answer: CallAnswer): unknown =>
  (answer._meta?.['pgmcp/error'] as { code?: unknown } | undefined)?.code;

/** Every attribute value of the spans, as text. */
const attributeText = (spans: ReceivedSpan[]): string =>
  spans.map((s) => JSON.stringify(s.attributes)).join('\n');

describe.skipIf(!pg)('traces over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  /** OTEL_EXPORTER_OTLP_ENDPOINT, nothing else: SQL text and comments off. */
  let plain: HttpServer;
  /** telemetry.* by PGMCP_TELEMETRY_*: the statement's text on spans, and the comment. */
  let commented: HttpServer;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    const common = { PGMCP_LOG_LEVEL: 'warn', OTEL_BSP_SCHEDULE_DELAY: '20' };
    [plain, commented] = await Promise.all([
      startHttpServer(['--database', pg!.url], {
        env: serverEnv({
          ...common,
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_SERVICE_NAME: 'pgmcp-plain',
        }),
      }),
      startHttpServer(['--database', pg!.url], {
        env: serverEnv({
          ...common,
          PGMCP_TELEMETRY_OTLP_ENDPOINT: receiver.endpoint,
          PGMCP_TELEMETRY_INCLUDE_SQL: 'true',
          PGMCP_TELEMETRY_SQL_COMMENT: 'true',
        }),
      }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await plain?.stop();
    await commented?.stop();
    await receiver?.close();
  });

  it('continues the trace of the traceparent header: HTTP → MCP → tool → stages → PostgreSQL', async () => {
    const mine = clientTrace();
    const client = await connect(plain.url, { traceparent: mine.traceparent });
    const marker = `marker_${hex(6)}`;
    const answer = await query(client, `SELECT '${marker}' AS note, 1 AS one`);
    expect(answer.isError).toBeFalsy();
    await client.close();

    const inTrace = (spans: ReceivedSpan[]) => spans.filter((s) => s.traceId === mine.traceId);
    const spans = await receiver.waitFor((all) => {
      const mineOnly = inTrace(all);
      const run = mineOnly.find((s) => s.name === 'run');
      return run && mineOnly.some((s) => s.parentSpanId === run.spanId) ? mineOnly : undefined;
    });
    const one = (name: string, parent: ReceivedSpan | string): ReceivedSpan => {
      const parentId = typeof parent === 'string' ? parent : parent.spanId;
      const found = spans.filter((s) => s.name === name && s.parentSpanId === parentId);
      expect(
        found.map((s) => s.name),
        `${name} under ${parentId}`,
      ).toEqual([name]);
      return found[0]!;
    };

    // The HTTP request that carried the call is a child of the client's span.
    const calls = spans.filter(
      (s) => s.name === 'POST /mcp' && s.parentSpanId === mine.spanId && s.kind === 2,
    );
    const mcp = spans.find(
      (s) =>
        s.name === 'tools/call query_database' && calls.some((c) => c.spanId === s.parentSpanId),
    );
    expect(mcp).toBeDefined();
    expect(mcp!.kind).toBe(2);
    expect(mcp!.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'query_database',
    });
    const http = calls.find((c) => c.spanId === mcp!.parentSpanId)!;
    expect(http.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/mcp',
      'http.response.status_code': 200,
    });
    expect(http.resource['service.name']).toBe('pgmcp-plain');

    const tool = one('execute_tool query_database', mcp!);
    for (const stage of ['parse', 'policy', 'plan', 'format']) one(stage, tool);
    const run = one('run', tool);

    // The caller's statement: one round trip, described without its text.
    const trips = spans.filter((s) => s.parentSpanId === run.spanId);
    expect(trips).toHaveLength(1);
    expect(trips[0]!.kind).toBe(3);
    expect(trips[0]!.name).toBe(`SELECT ${pg!.database}`);
    expect(trips[0]!.attributes).toMatchObject({
      'db.system': 'postgresql',
      'db.name': pg!.database,
      'db.operation.name': 'SELECT',
    });
    expect(trips[0]!.attributes['db.query.text']).toBeUndefined();
    // Nothing of the statement anywhere in the trace.
    expect(attributeText(spans)).not.toContain(marker);
    expect(receiver.problems()).toEqual([]);
  });

  it('a task runs under the trace of the call that created it, to its statement', async () => {
    const mine = clientTrace();
    const client = await connect(plain.url, { traceparent: mine.traceparent });
    const messages: string[] = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'query_database', arguments: { query: 'SELECT 2 AS two' } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    ))
      messages.push(message.type);
    await client.close();
    expect(messages[0]).toBe('taskCreated');
    expect(messages.at(-1)).toBe('result');

    const spans = await receiver.waitFor((all) => {
      const mineOnly = all.filter((s) => s.traceId === mine.traceId);
      const task = mineOnly.find((s) => s.name === 'task query_database');
      const tool = task && mineOnly.find((s) => s.parentSpanId === task.spanId);
      const run = tool && mineOnly.find((s) => s.parentSpanId === tool.spanId && s.name === 'run');
      return run && mineOnly.some((s) => s.parentSpanId === run.spanId) ? mineOnly : undefined;
    });
    const task = spans.find((s) => s.name === 'task query_database')!;
    const creator = spans.find((s) => s.spanId === task.parentSpanId);
    expect(creator?.name).toBe('tools/call query_database');
    expect(typeof task.attributes['pgmcp.task.id']).toBe('string');
    const tool = spans.find((s) => s.parentSpanId === task.spanId)!;
    expect(tool.name).toBe('execute_tool query_database');
    const run = spans.find((s) => s.parentSpanId === tool.spanId && s.name === 'run')!;
    const trips = spans.filter((s) => s.parentSpanId === run.spanId);
    expect(trips.map((t) => t.name)).toEqual([`SELECT ${pg!.database}`]);
  });

  it("a tool's block of several statements (count_rows) has a span per statement", async () => {
    const mine = clientTrace();
    const client = await connect(plain.url, { traceparent: mine.traceparent });
    await client.callTool({ name: 'count_rows', arguments: { table: 'no_such_table_here' } });
    await client.close();
    const spans = await receiver.waitFor((all) => {
      const inTrace = all.filter((s) => s.traceId === mine.traceId);
      const tool = inTrace.find((s) => s.name === 'execute_tool count_rows');
      return tool && inTrace.some((s) => s.parentSpanId === tool.spanId) ? inTrace : undefined;
    });
    const tool = spans.find((s) => s.name === 'execute_tool count_rows')!;
    const trips = spans.filter((s) => s.parentSpanId === tool.spanId);
    expect(trips.length).toBeGreaterThan(0);
    for (const trip of trips) {
      expect(trip.kind).toBe(3);
      expect(trip.attributes).toMatchObject({ 'db.system': 'postgresql', 'db.name': pg!.database });
      expect(trip.attributes['db.query.text']).toBeUndefined();
    }
  });

  it("continues the trace of the request's _meta, linking the HTTP request's span", async () => {
    const header = clientTrace();
    const meta = clientTrace();
    const client = await connect(plain.url, { traceparent: header.traceparent });
    await query(client, 'SELECT 2 AS two', { traceparent: meta.traceparent, tracestate: 'k=v' });
    await client.close();

    const mcp = await receiver.waitFor((all) =>
      all.find((s) => s.traceId === meta.traceId && s.name === 'tools/call query_database'),
    );
    expect(mcp.parentSpanId).toBe(meta.spanId);
    // The HTTP span stays in the trace of the header; the MCP span links to it.
    const http = await receiver.waitFor((all) =>
      all.find((s) => s.spanId === mcp.links[0]?.spanId),
    );
    expect(http).toMatchObject({ name: 'POST /mcp', traceId: header.traceId });
    expect(http.parentSpanId).toBe(header.spanId);
    // The tool's spans follow the MCP span into the client's trace.
    const tool = await receiver.waitFor((all) =>
      all.find((s) => s.name === 'execute_tool query_database' && s.parentSpanId === mcp.spanId),
    );
    expect(tool.traceId).toBe(meta.traceId);
  });

  it("stdio: the request's _meta names the parent of its MCP span", async () => {
    const meta = clientTrace();
    const client = new Client(CLIENT_INFO);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: serveScript(['--stdio', '--database', pg!.url]),
        env: serverEnv({
          PGMCP_LOG_LEVEL: 'warn',
          OTEL_BSP_SCHEDULE_DELAY: '20',
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_SERVICE_NAME: 'pgmcp-stdio',
        }),
        cwd: REPO_ROOT,
        stderr: 'pipe',
      }),
    );
    const answer = await query(client, 'SELECT 3 AS three', { traceparent: meta.traceparent });
    expect(answer.isError).toBeFalsy();
    await client.close();
    const mcp = await receiver.waitFor((all) =>
      all.find((s) => s.traceId === meta.traceId && s.name === 'tools/call query_database'),
    );
    expect(mcp.parentSpanId).toBe(meta.spanId);
    expect(mcp.resource['service.name']).toBe('pgmcp-stdio');
    expect(mcp.links).toEqual([]);
    expect(mcp.attributes['gen_ai.tool.name']).toBe('query_database');
    const tool = await receiver.waitFor((all) =>
      all.find((s) => s.name === 'execute_tool query_database' && s.parentSpanId === mcp.spanId),
    );
    expect(tool.traceId).toBe(meta.traceId);
  });

  /** What PostgreSQL received for the statement running it (pg_stat_activity of its backend). */
  const SEEN = 'SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid()';
  const COMMENT = /\n\/\*traceparent='00-([0-9a-f]{32})-([0-9a-f]{16})-01'\*\/$/;

  it('telemetry.sqlComment: PostgreSQL receives the span of the round trip; includeSql: its text', async () => {
    const mine = clientTrace();
    const client = await connect(commented.url, { traceparent: mine.traceparent });
    const answer = await query(client, SEEN);
    await client.close();
    const received = answer.structuredContent?.rows?.[0]?.[0] as string;
    expect(received.startsWith(SEEN)).toBe(true);
    const [, traceId, spanId] = COMMENT.exec(received) ?? [];
    expect(traceId).toBe(mine.traceId);

    // The comment names the PostgreSQL span of that statement, which carries the text as sent by
    // the caller (without the comment).
    const trip = await receiver.waitFor((all) => all.find((s) => s.spanId === spanId));
    expect(trip.traceId).toBe(mine.traceId);
    expect(trip.attributes['db.query.text']).toBe(SEEN);
    const parent = receiver.spans().find((s) => s.spanId === trip.parentSpanId);
    expect(parent?.name).toBe('run');
  });

  it("the comment cannot be swallowed by the caller's trailing comment, nor end early", async () => {
    const client = await connect(commented.url, {
      // Not a valid traceparent: ignored, so the comment holds pgmcp's own ids, never this text.
      traceparent: `00-${hex(16)}-${hex(8)}-01'*/ SELECT pg_sleep(0) /*`,
    });
    for (const sql of [`${SEEN} -- trailing remark`, `${SEEN};`, `${SEEN} /* closed */`]) {
      const answer = await query(client, sql);
      expect(answer.isError, sql).toBeFalsy();
      const received = answer.structuredContent?.rows?.[0]?.[0] as string;
      expect(received, sql).toMatch(COMMENT);
      expect(received.startsWith(sql), sql).toBe(true);
      expect(received, sql).not.toContain('pg_sleep');
    }
    await client.close();
  });

  it("the SQL guard decides on the caller's text: refusals are the same with comments on", async () => {
    const refused = [
      'CREATE TABLE traced_write (id int)',
      'SELECT 1; SELECT 2',
      'SET statement_timeout = 0',
      'COMMIT',
      "SELECT set_config('statement_timeout', '0', false)",
    ];
    const plainClient = await connect(plain.url, {});
    const commentedClient = await connect(commented.url, {});
    for (const sql of refused) {
      const [before, after] = await Promise.all([
        query(plainClient, sql),
        query(commentedClient, sql),
      ]);
      expect(before.isError, sql).toBe(true);
      expect(after.isError, sql).toBe(true);
      expect(errorCode(after), sql).toBe(errorCode(before));
      expect(after.content?.[0]?.text, sql).toBe(before.content?.[0]?.text);
    }
    await plainClient.close();
    await commentedClient.close();
  });

  it("pgmcp's own work outside a request (loading the catalog) starts no trace", () => {
    const roots = receiver.spans().filter((s) => s.parentSpanId === '');
    expect(roots.length).toBeGreaterThan(0);
    for (const root of roots) expect(root.kind, root.name).toBe(2);
  });
});
