// A bug is answered with a reference to the log entry, never its message, and the reference has
// one format on every edge (core/error-table.ts newReference): the MCP endpoint's -32603, a
// chat tool's output, a REST 500. The log entry carries the same reference.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
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

const pg = await realPostgres('error references');

/** One format everywhere: 8 hex digits. */
const REFERENCE = /^[0-9a-f]{8}$/;
const SECRET = 'row 42 holds hunter2';

/** A tool with a bug: it throws something that is no AppError. */
const broken: ToolSpec = {
  name: 'broken_tool',
  description: 'Fails the way a bug does.',
  inputSchema: { type: 'object', properties: {} },
  async call() {
    throw new TypeError(`cannot read the answer: ${SECRET}`);
  },
};

/** The log entries (pino JSON lines) that carry this reference. */
function logged(server: ChatServer, ref: string): Record<string, unknown>[] {
  return server
    .logText()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((entry) => entry['ref'] === ref);
}

describe.skipIf(!pg)('a bug is answered with a log reference of one format', () => {
  let server: ChatServer;
  let fake: FakeLlm;
  const state = throwawayDatabase(pg!, 'pgmcp_error_refs');

  beforeAll(async () => {
    fake = await startFakeLlm({
      flavor: 'openai',
      script: (r) =>
        r.toolResults.length === 0
          ? { toolCalls: [{ name: 'broken_tool', args: {} }] }
          : { text: 'It failed.' },
    });
    server = await startChatServer({
      database: pg!.url,
      config: { state: { url: state.url }, llm: { default: 'openai' } },
      env: { OPENAI_API_KEY: 'sk-error-refs-test-123456', OPENAI_BASE_URL: fake.baseUrl },
    });
    server.app.registry.addTool(broken);
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('MCP over HTTP: -32603 with the reference, logged under it', async () => {
    const client = new Client({ name: 'error-refs', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
    try {
      const failure = await client.callTool({ name: 'broken_tool', arguments: {} }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(McpError);
      expect((failure as McpError).code).toBe(-32603);
      const message = (failure as McpError).message;
      expect(message).not.toContain(SECRET);
      const ref = /\(reference (\S+)\)\.$/.exec(message)?.[1];
      expect(ref).toMatch(REFERENCE);
      expect(logged(server, ref!)).toMatchObject([{ level: 50, msg: 'request failed' }]);
    } finally {
      await client.close();
    }
  });

  it("/api/chat: the tool's output names the reference, logged under it", async () => {
    const turn = await sendChat(server.origin, [userMessage('Run the broken tool')]);
    const output = toolParts(turn.message)[0]?.output;
    expect(output?.isError).toBe(true);
    expect(output?.text).not.toContain(SECRET);
    const ref = /\(ref (\S+)\)\.$/.exec(output?.text ?? '')?.[1];
    expect(ref).toMatch(REFERENCE);
    expect(logged(server, ref!)).toMatchObject([
      { level: 50, msg: 'chat tool failed', tool: 'broken_tool' },
    ]);
  });
});
