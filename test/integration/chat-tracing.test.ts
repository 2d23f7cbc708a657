// Traces of POST /api/chat: the HTTP request continues the caller's trace, the agent loop is the
// AI SDK's call span with one model-call span per step, and each tool the model calls runs as the
// same execute_tool span (with its stages and PostgreSQL round trips) as an MCP tools/call. No
// prompt, answer or statement text is in any span. The SDK is set up as `pgmcp serve` sets it up
// (cli/telemetry.ts), sending to a local OTLP/HTTP receiver.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '../../src/cli/telemetry.js';
import {
  sendChat,
  startChatServer,
  toolParts,
  userMessage,
  type ChatServer,
} from '../helpers/chat-server.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import {
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../helpers/otlp-receiver.js';
import { realPostgres, throwawayDatabase } from '../helpers/postgres.js';

const pg = await realPostgres('chat tracing');

describe.skipIf(!pg)('traces of /api/chat', () => {
  let receiver: OtlpReceiver;
  let tracing: Tracing | null;
  let server: ChatServer;
  let fake: FakeLlm;
  const state = throwawayDatabase(pg!, 'pgmcp_chat_tracing');
  const marker = `marker_${randomBytes(6).toString('hex')}`;
  const question = `Which note says ${marker}?`;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    // The batch processor reads its delay from the environment, as it does in `pgmcp serve`.
    process.env['OTEL_BSP_SCHEDULE_DELAY'] = '20';
    tracing = await startTracing(
      { otlpEndpoint: receiver.endpoint, includeSql: false, sqlComment: false },
      pino({ level: 'silent' }),
      {},
    );
    fake = await startFakeLlm({
      flavor: 'openai',
      script: (r) =>
        r.toolResults.length === 0
          ? {
              toolCalls: [
                { name: 'query_database', args: { query: `SELECT '${marker}' AS note` } },
              ],
            }
          : { text: `The note is ${marker}.` },
    });
    server = await startChatServer({
      database: pg!.url,
      config: { state: { url: state.url }, llm: { default: 'openai' } },
      env: { OPENAI_API_KEY: 'sk-chat-tracing-test-123456', OPENAI_BASE_URL: fake.baseUrl },
    });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await tracing?.shutdown();
    await receiver?.close();
  });

  it('HTTP → the agent loop → each step → the tool call → its stages and round trips', async () => {
    expect(tracing).not.toBeNull();
    const traceId = randomBytes(16).toString('hex');
    const parentId = randomBytes(8).toString('hex');
    const turn = await sendChat(server.origin, [userMessage(question)], {
      headers: { traceparent: `00-${traceId}-${parentId}-01` },
    });
    expect(toolParts(turn.message)[0]?.output?.isError).toBe(false);

    const spans = await receiver.waitFor((all) => {
      const mine = all.filter((s) => s.traceId === traceId);
      const http = mine.find((s) => s.name === 'POST /api/chat');
      const tool = mine.find((s) => s.name === 'execute_tool query_database');
      const run = mine.find((s) => s.name === 'run');
      return http?.attributes['http.response.status_code'] !== undefined &&
        tool &&
        run &&
        mine.some((s) => s.parentSpanId === run.spanId) &&
        mine.some((s) => s.name.startsWith('invoke_agent ')) &&
        mine.filter((s) => s.name.startsWith('chat ')).length === 2
        ? mine
        : undefined;
    });
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const ancestors = (span: ReceivedSpan): string[] => {
      const names: string[] = [];
      for (let p = byId.get(span.parentSpanId); p; p = byId.get(p.parentSpanId)) names.push(p.name);
      return names;
    };
    const named = (name: string) => spans.filter((s) => s.name === name);

    const http = named('POST /api/chat')[0]!;
    expect(http.parentSpanId).toBe(parentId);
    expect(http.kind).toBe(2);
    // The loop (the AI SDK's OpenTelemetry integration names it invoke_agent <model>), its
    // steps, and one model call per step (the tool call's step, then the answer's).
    const loop = spans.filter((s) => s.name.startsWith('invoke_agent '));
    expect(loop).toHaveLength(1);
    expect(ancestors(loop[0]!)).toContain('POST /api/chat');
    expect(named('step 1')).toHaveLength(1);
    expect(named('step 2')).toHaveLength(1);
    const calls = spans.filter((s) => s.name.startsWith('chat '));
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(ancestors(call)).toContain(loop[0]!.name);
    // The tool call, under the loop (the AI SDK's span, and pgmcp's invocation step's inside
    // it), with query_database's stages and its round trip.
    const run = spans.find((s) => s.name === 'run')!;
    const tool = byId.get(run.parentSpanId)!;
    expect(tool.name).toBe('execute_tool query_database');
    expect(ancestors(tool)).toContain(loop[0]!.name);
    expect(ancestors(tool)).toContain('step 1');
    expect(run).toBeDefined();
    const trip = spans.find((s) => s.parentSpanId === run.spanId)!;
    expect(trip.attributes).toMatchObject({
      'db.system': 'postgresql',
      'db.operation.name': 'SELECT',
    });
    // Neither the question, nor the model's answer, nor the statement.
    expect(spans.map((s) => JSON.stringify(s.attributes)).join('\n')).not.toContain(marker);
  });
});
