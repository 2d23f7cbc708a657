// A language model that fails: /api/chat retries a 429 or a 500 with backoff (llm.maxRetries,
// the provider library's own retry, which honours Retry-After) and answers; one that keeps
// failing, or drops its stream part-way, ends the chat stream with a clear error part, and no
// query of that request is left running.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  sendChat,
  startChatServer,
  textOf,
  userMessage,
  type ChatServer,
} from '../helpers/chat-server.js';
import { startFakeLlm, type FakeLlm, type FakeTurn } from '../helpers/fake-llm.js';
import { realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';

const pg = await realPostgres('chat (a failing model)');

describe.skipIf(!pg)('/api/chat with a model that fails', () => {
  let server: ChatServer;
  let fake: FakeLlm;
  let token: string;
  let turns: FakeTurn[] = [];
  const state = throwawayDatabase(pg!, 'pgmcp_faults_llm');

  beforeAll(async () => {
    fake = await startFakeLlm({
      flavor: 'openai',
      script: () => turns.shift() ?? { text: 'script exhausted' },
    });
    server = await startChatServer({
      database: pg!.url,
      requireAuth: true,
      config: {
        state: { url: state.url },
        llm: { maxRetries: 2, default: 'openai' },
      },
      env: { OPENAI_API_KEY: 'sk-faults-test-key-123456', OPENAI_BASE_URL: fake.baseUrl },
    });
    token = await server.token('analyst', ['analyst']);
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  const errorPart = (chunks: { type: string }[]): string | undefined =>
    (chunks.find((c) => c.type === 'error') as { errorText?: string } | undefined)?.errorText;

  it('429 (with Retry-After) then 500: retried, and the answer comes', async () => {
    turns = [{ fail: 429, retryAfterSeconds: 0 }, { fail: 500 }, { text: 'all good' }];
    const before = fake.requests.length;
    const turn = await sendChat(server.origin, [userMessage('hello')], { token });
    expect(errorPart(turn.chunks)).toBeUndefined();
    expect(textOf(turn.message)).toContain('all good');
    expect(fake.requests.length - before).toBe(3);
  });

  it('500 every time: after llm.maxRetries the stream ends with a clear error part', async () => {
    turns = [{ fail: 500 }, { fail: 500 }, { fail: 500 }, { fail: 500 }];
    const before = fake.requests.length;
    const turn = await sendChat(server.origin, [userMessage('hello')], { token });
    expect(fake.requests.length - before).toBe(3); // the call and 2 retries
    expect(errorPart(turn.chunks)).toMatch(/model provider/i);
    expect(errorPart(turn.chunks)).not.toContain('sk-faults-test-key');
  });

  it('a stream dropped part-way after a tool ran: a clear error part, no query left running', async () => {
    const marker = `llm_drop_${Date.now()}`;
    turns = [
      { toolCalls: [{ name: 'query_database', args: { query: `SELECT 1 AS ${marker}` } }] },
      { drop: true },
      { drop: true },
      { drop: true },
    ];
    const turn = await sendChat(server.origin, [userMessage('count')], { token });
    expect(errorPart(turn.chunks)).toBeDefined();
    const { rows } = await withClient(pg!.adminUrl, (c) =>
      c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE query LIKE $1 AND state = 'active' AND pid <> pg_backend_pid()`,
        [`%${marker}%`],
      ),
    );
    expect(rows[0]!.n).toBe(0);
  });
});
