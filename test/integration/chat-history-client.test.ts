// The terminal client (pgmcp chat's session: the AI SDK's AbstractChat and DefaultChatTransport)
// on a stored conversation, when /api/chat refuses a turn before its stream starts: a 429 of the
// rate limit, a database that does not exist. Nothing is stored, the client keeps the message it
// tried to send, and its next message goes through with it: the conversation never sticks.
import type { UIMessage } from 'ai';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/cli/chat/api-client.js';
import { createChatSession, type ChatSession } from '../../src/cli/chat/session.js';
import { startChatServer, textOf, type ChatServer } from '../helpers/chat-server.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { realPostgres, throwawayDatabase } from '../helpers/postgres.js';
import { realRedis, uniquePrefix } from '../helpers/redis.js';

const pg = await realPostgres('the terminal client after a refused turn');
const redisUrl = await realRedis('test/integration/chat-history-client.test.ts (rate limit)');

describe.skipIf(!pg || !redisUrl)('pgmcp chat after a turn refused before its stream', () => {
  const state = throwawayDatabase(pg!, 'pgmcp_chat_refused_state');
  const prefix = uniquePrefix('chat-refused');
  const counters = new Redis(redisUrl ?? '');
  let fake: FakeLlm;
  let server: ChatServer;
  let session: ChatSession;
  let token: string;

  /** The rate limit's minute is over: its counters go. */
  const nextMinute = async () => {
    const keys = await counters.keys(`${prefix}*`);
    if (keys.length > 0) await counters.del(...keys);
  };

  beforeAll(async () => {
    fake = await startFakeLlm({
      flavor: 'openai',
      script: (r) => ({ text: `You said: ${r.lastUserText ?? ''}` }),
    });
    server = await startChatServer({
      database: pg!.url,
      requireAuth: true,
      config: {
        state: { url: state.url },
        llm: { default: 'openai' },
        rateLimit: { routes: { 'api.chat': 1 }, redis: redisUrl, redisKeyPrefix: prefix },
      },
      env: { OPENAI_API_KEY: 'sk-refused-test-key-123456', OPENAI_BASE_URL: fake.baseUrl },
    });
    token = await server.token('alice');
    session = createChatSession({
      api: createApiClient(server.origin, token),
      settings: {},
      onChange: () => undefined,
    });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    await nextMinute();
    counters.disconnect();
  });

  const stored = async (): Promise<UIMessage[]> => {
    const res = await fetch(`${server.origin}/api/conversations/${session.conversationId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { messages: UIMessage[] }).messages;
  };
  const lastAnswer = () => textOf(session.messages.at(-1)!);

  it('goes on after a 429 and after a refused database, storing what the person sent', async () => {
    expect(await session.ask('What is six times seven?')).toEqual({ aborted: false });
    expect(lastAnswer()).toBe('You said: What is six times seven?');

    // The minute's one request is spent: 429, nothing stored, the client keeps the message.
    const limited = await session.ask('And eight times nine?');
    expect(limited.error).toMatch(/too many requests|rate limit/i);
    expect(session.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(await stored()).toHaveLength(2);

    await nextMinute();
    const before = fake.requests.length;
    expect(await session.ask('Are you still there?')).toEqual({ aborted: false });
    expect(lastAnswer()).toBe('You said: Are you still there?');
    const sent = JSON.stringify(fake.requests[before]!.body);
    expect(sent).toContain('And eight times nine?');
    expect(sent).toContain('What is six times seven?');

    // A database that does not exist is refused before the stream too.
    await nextMinute();
    session.settings.database = 'no_such_database';
    const refused = await session.ask('Which tables are there?');
    expect(refused.error).toMatch(/no_such_database/);
    delete session.settings.database;
    await nextMinute();
    expect(await session.ask('Then the default one.')).toEqual({ aborted: false });
    expect(lastAnswer()).toBe('You said: Then the default one.');

    // The stored conversation is what the person sees.
    const kept = await stored();
    expect(kept.map((m) => [m.role, textOf(m)])).toEqual(
      session.messages.map((m) => [m.role, textOf(m)]),
    );
    expect(kept.map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'user',
      'assistant',
      'user',
      'user',
      'assistant',
    ]);
  });
});
