// POST /api/chat end to end with OpenAI's own client library (@ai-sdk/openai) against the fake
// OpenAI API, on real PostgreSQL: question → query_database → rows → answer, streamed as the AI
// SDK UI message stream and read back the way useChat reads it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  sendChat,
  startChatServer,
  textOf,
  toolParts,
  userMessage,
  type ChatServer,
} from '../helpers/chat-server.js';
import {
  startFakeLlm,
  type FakeLlm,
  type FakeRequest,
  type FakeTurn,
} from '../helpers/fake-llm.js';
import {
  createFixtureSchema,
  realPostgres,
  throwawayDatabase,
  type FixtureSchema,
} from '../helpers/postgres.js';

const pg = await realPostgres('chat (openai)');

describe.skipIf(!pg)('/api/chat with OpenAI on PostgreSQL', () => {
  let fixture: FixtureSchema;
  let server: ChatServer;
  let fake: FakeLlm;
  let next: (request: FakeRequest) => FakeTurn;
  const state = throwawayDatabase(pg!, 'pgmcp_chat_state');

  beforeAll(async () => {
    fixture = await createFixtureSchema(pg!, 'pgmcp_chat');
    fake = await startFakeLlm({
      flavor: 'openai',
      apiKey: 'sk-test-secret-key-123456',
      script: (request) => next(request),
    });
    server = await startChatServer({
      database: pg!.url,
      config: { state: { url: state.url } },
      env: { OPENAI_API_KEY: 'sk-test-secret-key-123456', OPENAI_BASE_URL: fake.baseUrl },
    });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await fixture?.drop();
  });

  it('answers a question with a query and its rows', async () => {
    const sql = `SELECT count(*) AS n FROM ${fixture.name}.items`;
    next = (request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'query_database', args: { query: sql } }] }
        : { text: `There are ${/\b(\d+)\b/.exec(request.toolResults[0]!)?.[1]} items.` };
    const turn = await sendChat(server.origin, [userMessage('How many items are there?')], {
      id: 'conv-openai-1',
    });
    const [part] = toolParts(turn.message);
    expect(part).toMatchObject({
      type: 'tool-query_database',
      state: 'output-available',
      input: { query: sql },
      output: {
        isError: false,
        structuredContent: { columns: [{ name: 'n' }], rows: [['25']], rowCount: 1 },
      },
    });
    expect(part!.output!.text).toContain('25');
    expect(textOf(turn.message)).toContain('There are 25 items.');
    expect(turn.message.metadata).toMatchObject({
      conversationId: 'conv-openai-1',
      provider: 'openai',
      model: 'gpt-4o-mini',
      usage: { inputTokens: 200, outputTokens: 40, totalTokens: 240 },
    });
    // The model saw pgmcp's tools and the rows; it never saw a key.
    expect(fake.requests.at(-2)!.toolNames).toContain('query_database');
    expect(fake.requests.at(-1)!.toolResults[0]).toContain('25');
    expect(fake.requests.at(-1)!.api).toBe('responses');
    expect(JSON.stringify(fake.requests.map((r) => r.body))).not.toContain('sk-test-secret');
    expect(turn.chunks.map((c) => c.type)).toEqual(
      expect.arrayContaining(['start', 'tool-input-available', 'tool-output-available', 'finish']),
    );
  });
});
