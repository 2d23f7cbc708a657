// A tool's answer is checked against its outputSchema on every front end, since MCP tools/call
// and the chat agent run a tool through the same invocation step (tools/invoke.ts): a success
// that does not match is a bug, not sent, and answered as a PGMCP900 tool error naming the log
// reference. MCP's side is src/mcp/output-check.test.ts; here POST /api/chat's tool output, to
// the model and the person alike, gives the same error with the same log entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../src/core/specs.js';
import {
  sendChat,
  startChatServer,
  toolParts,
  userMessage,
  type ChatServer,
} from '../helpers/chat-server.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { realPostgres, throwawayDatabase } from '../helpers/postgres.js';

const pg = await realPostgres('chat output check');

/** What the tool answers that its outputSchema does not allow: never to reach a client. */
const STRAY = 'an answer of the wrong shape';

/** A tool with a bug: it declares `{count: integer}` and answers `{count: "…"}`. */
const misshapen: ToolSpec = {
  name: 'misshapen_tool',
  description: 'Answers against its own outputSchema.',
  inputSchema: { type: 'object', properties: {} },
  outputSchema: {
    type: 'object',
    properties: { count: { type: 'integer' } },
    required: ['count'],
  },
  async call() {
    return {
      content: [{ type: 'text', text: STRAY }],
      structuredContent: { count: STRAY },
    };
  },
};

const MESSAGE =
  /^Internal error: the answer of misshapen_tool does not match its outputSchema, so it was not sent \(reference ([0-9a-f]{8})\)\./;

/** The log entries (pino JSON lines) that carry this reference. */
function logged(server: ChatServer, ref: string): Record<string, unknown>[] {
  return server
    .logText()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry['ref'] === ref);
}

describe.skipIf(!pg)("a tool's answer is checked against its outputSchema on every path", () => {
  let server: ChatServer;
  let fake: FakeLlm;
  const state = throwawayDatabase(pg!, 'pgmcp_chat_output_check');

  beforeAll(async () => {
    fake = await startFakeLlm({
      flavor: 'openai',
      script: (r) =>
        r.toolResults.length === 0
          ? { toolCalls: [{ name: 'misshapen_tool', args: {} }] }
          : { text: 'It failed.' },
    });
    server = await startChatServer({
      database: pg!.url,
      config: { state: { url: state.url }, llm: { default: 'openai' } },
      env: { OPENAI_API_KEY: 'sk-output-check-test-123456', OPENAI_BASE_URL: fake.baseUrl },
    });
    server.app.registry.addTool(misshapen);
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('/api/chat: the tool output is the same PGMCP900 error, never the stray answer', async () => {
    const turn = await sendChat(server.origin, [userMessage('Run the misshapen tool')]);
    const output = toolParts(turn.message)[0]?.output;
    expect(output?.isError).toBe(true);
    expect(output?.structuredContent).toBeUndefined();
    expect(output?.text).not.toContain(STRAY);
    const ref = MESSAGE.exec(output?.text ?? '')?.[1];
    expect(ref).toBeDefined();
    expect(logged(server, ref!)).toMatchObject([
      { level: 50, msg: 'tool answer does not match its outputSchema', tool: 'misshapen_tool' },
    ]);
    // What the model was given is the error, not the stray answer either.
    const sent = JSON.stringify(fake.requests.at(-1) ?? '');
    expect(sent).not.toContain(STRAY);
  });
});
