// Conversations (store and /api/conversations) and POST /api/chat/compact against a real state
// database: PostgreSQL (a throwaway database per run) and the embedded PGlite. Requests go
// through Fastify's inject with the HTTP layer's own authentication hook, so real session
// tokens and API tokens are exercised, with authentication not required (as on a loopback
// server): anonymous callers reach /api, and the conversation routes still refuse them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerApiRoutes } from '../../src/api/index.js';
import { createAuth, type Authenticator } from '../../src/auth/index.js';
import {
  CONVERSATION_LIMITS,
  createConversationStore,
  openStateDatabase,
  type StateDb,
} from '../../src/state/index.js';
import { ErrorCodes, isAppError } from '../../src/core/errors.js';
import { ANONYMOUS, type Principal } from '../../src/core/principal.js';
import { registerAuthentication } from '../../src/http/authenticate.js';
import { realPostgres, throwawayDatabase, type RealPostgres } from '../helpers/postgres.js';

const logger = pino({ level: 'silent' });
const FAST_SCRYPT = { N: 1024, r: 8, p: 1 };
const LOCKOUT = { maxFailures: 5, maxFailuresPerAddress: 50, windowSeconds: 60, lockSeconds: 60 };

function buildApp(auth: Authenticator): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  registerAuthentication(app, {
    required: false,
    verifier: auth,
    trustedProxies: [],
    proxyHeaders: { userId: 'x-user-id', tenantId: 'x-tenant-id', roles: null },
    mcpPaths: ['/mcp'],
    logger,
  });
  registerApiRoutes(app, { auth, logger, clientAddress: (request) => request.ip });
  return app;
}

const uiMessage = (id: string, role: 'user' | 'assistant', text: string) => ({
  id,
  role,
  parts: [{ type: 'text', text }],
});

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error.code;
    throw error;
  }
  return undefined;
}

function scenarios(open: () => Promise<StateDb>): void {
  let db: StateDb;
  let auth: Authenticator;
  let app: FastifyInstance;
  let alice: string;
  let bob: string;
  let apiToken: string;
  let alicePrincipal: Principal;

  const call = async (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    options: { token?: string; body?: unknown; raw?: string } = {},
  ): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = {};
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    if (options.body !== undefined || options.raw !== undefined) {
      headers['content-type'] = 'application/json';
    }
    const response = await app.inject({
      method,
      url,
      headers,
      ...(options.raw !== undefined
        ? { payload: options.raw }
        : options.body !== undefined
          ? { payload: JSON.stringify(options.body) }
          : {}),
    });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    return response;
  };

  beforeAll(async () => {
    db = await open();
    auth = createAuth(db, {
      sessionTtlSeconds: 3600,
      cacheTtlMs: 5_000,
      lockout: LOCKOUT,
      scrypt: FAST_SCRYPT,
      slowDown: { baseMs: 0, maxMs: 0 },
    });
    await auth.users.add({ username: 'alice', password: 'alice-password', roles: [] });
    await auth.users.add({ username: 'bob', password: 'bob-password-1', roles: [] });
    const a = await auth.sessions.login('alice', 'alice-password', null);
    alice = a.sessionToken;
    alicePrincipal = a.principal;
    bob = (await auth.sessions.login('bob', 'bob-password-1', null)).sessionToken;
    // An API token named like the user: a different owner all the same.
    apiToken = (
      await auth.tokens.create({
        name: 'alice',
        expiresInSeconds: 3600,
        roles: [],
        boundDatabase: null,
        pgRole: null,
      })
    ).token;
    app = buildApp(auth);
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    await auth?.close();
    await db?.close();
  });

  it('creates a conversation with the seed fields, a conv_ id and a title from the first question', async () => {
    const response = await call('POST', '/api/conversations', {
      token: alice,
      body: {
        provider: 'anthropic',
        model: 'claude-sonnet-4-20250514',
        connection: 'production',
        messages: [
          { role: 'user', content: '   Show me the\n users   table  ' },
          { role: 'assistant', content: "Here's the schema for the users table..." },
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({
      username: 'alice',
      title: 'Show me the users table',
      provider: 'anthropic',
      model: 'claude-sonnet-4-20250514',
      connection: 'production',
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    });
    expect(body.id).toMatch(/^conv_[A-Za-z0-9_-]{22}$/);
    expect(body.messages).toHaveLength(2);
    expect(Date.parse(body.created_at)).not.toBeNaN();
    expect(body.updated_at).toBe(body.created_at);

    const got = await call('GET', `/api/conversations/${body.id}`, { token: alice });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(body);
  });

  it('bounds the title and falls back when there is no question', async () => {
    const long = 'why '.repeat(200);
    const created = (
      await call('POST', '/api/conversations', {
        token: alice,
        body: { messages: [{ role: 'user', content: long }] },
      })
    ).json();
    expect(created.title.length).toBeLessThanOrEqual(CONVERSATION_LIMITS.maxTitleLength);
    expect(created.title.endsWith('…')).toBe(true);
    const emptyResponse = await call('POST', '/api/conversations', { token: alice, body: {} });
    expect(emptyResponse.statusCode, emptyResponse.body).toBe(201);
    const empty = emptyResponse.json();
    expect(empty.title).toBe('New conversation');
    expect(empty.messages).toEqual([]);
    await call('DELETE', `/api/conversations/${created.id}`, { token: alice });
    await call('DELETE', `/api/conversations/${empty.id}`, { token: alice });
  });

  it("keeps each caller's conversations apart: another's id is a 404, never a 403", async () => {
    const mine = (
      await call('POST', '/api/conversations', {
        token: alice,
        body: { messages: [{ role: 'user', content: 'private question' }] },
      })
    ).json();
    const missing = await call('GET', '/api/conversations/conv_doesnotexist000000000', {
      token: bob,
    });
    expect(missing.statusCode).toBe(404);
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { messages: [] }],
      ['PATCH', { title: 'mine now' }],
      ['DELETE', undefined],
    ] as const) {
      const response = await call(method, `/api/conversations/${mine.id}`, { token: bob, body });
      expect(response.statusCode, method).toBe(404);
      expect(response.json()).toEqual(missing.json());
    }
    // The API token named "alice" is not the user alice.
    const asToken = await call('GET', `/api/conversations/${mine.id}`, { token: apiToken });
    expect(asToken.statusCode).toBe(404);
    const bobs = (await call('GET', '/api/conversations', { token: bob })).json();
    expect(bobs.conversations.map((c: { id: string }) => c.id)).not.toContain(mine.id);
    // Bob's DELETE all leaves Alice's alone.
    expect((await call('DELETE', '/api/conversations?all=true', { token: bob })).json()).toEqual({
      success: true,
      deleted: 0,
    });
    expect((await call('GET', `/api/conversations/${mine.id}`, { token: alice })).statusCode).toBe(
      200,
    );
    await call('DELETE', `/api/conversations/${mine.id}`, { token: alice });
  });

  it('lists newest first with previews, and pages with limit and offset', async () => {
    await call('DELETE', '/api/conversations?all=true', { token: bob });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await call('POST', '/api/conversations', {
        token: bob,
        body: {
          connection: 'analytics',
          messages: [
            { role: 'user', content: `Question number ${i} ${'about sales '.repeat(20)}` },
          ],
        },
      });
      ids.push(created.json().id);
    }
    // Touching the oldest makes it the newest.
    const renamed = await call('PATCH', `/api/conversations/${ids[0]}`, {
      token: bob,
      body: { title: '  Renamed  ' },
    });
    expect(renamed.json()).toEqual({ success: true });
    const all = (await call('GET', '/api/conversations', { token: bob })).json().conversations;
    expect(all.map((c: { id: string }) => c.id)).toEqual([ids[0], ids[4], ids[3], ids[2], ids[1]]);
    expect(all[0]).toMatchObject({ title: 'Renamed', connection: 'analytics' });
    expect(Object.keys(all[0]).sort()).toEqual(
      ['connection', 'created_at', 'id', 'preview', 'title', 'updated_at'].sort(),
    );
    expect(all[1].preview.startsWith('Question number 4 about sales')).toBe(true);
    expect(all[1].preview.length).toBeLessThanOrEqual(CONVERSATION_LIMITS.previewLength);
    const page = (await call('GET', '/api/conversations?limit=2&offset=1', { token: bob })).json();
    expect(page.conversations.map((c: { id: string }) => c.id)).toEqual([ids[4], ids[3]]);
    const past = (await call('GET', '/api/conversations?limit=2&offset=10', { token: bob })).json();
    expect(past.conversations).toEqual([]);
    const deleted = await call('DELETE', '/api/conversations?all=true', { token: bob });
    expect(deleted.json()).toEqual({ success: true, deleted: 5 });
    expect((await call('GET', '/api/conversations', { token: bob })).json()).toEqual({
      conversations: [],
    });
  });

  it('PUT replaces the messages (the title follows them until renamed); DELETE removes', async () => {
    const created = (
      await call('POST', '/api/conversations', {
        token: alice,
        body: { messages: [{ role: 'user', content: 'first' }], provider: 'openai' },
      })
    ).json();
    const put = await call('PUT', `/api/conversations/${created.id}`, {
      token: alice,
      body: {
        model: 'gpt-4o',
        messages: [uiMessage('m1', 'user', 'Count the orders'), uiMessage('m2', 'assistant', '42')],
      },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      title: 'Count the orders',
      provider: 'openai',
      model: 'gpt-4o',
      messages: [uiMessage('m1', 'user', 'Count the orders'), uiMessage('m2', 'assistant', '42')],
    });
    expect(Date.parse(put.json().updated_at)).toBeGreaterThan(Date.parse(created.updated_at));
    expect(
      (await call('DELETE', `/api/conversations/${created.id}`, { token: alice })).json(),
    ).toEqual({ success: true });
    expect(
      (await call('DELETE', `/api/conversations/${created.id}`, { token: alice })).statusCode,
    ).toBe(404);
    const gone = await call('PUT', `/api/conversations/${created.id}`, {
      token: alice,
      body: { messages: [] },
    });
    expect(gone.statusCode).toBe(404);
  });

  it('answers bad ids, bodies and pages with clear 400s', async () => {
    const cases: [string, string, unknown, RegExp][] = [
      ['GET', '/api/conversations/..%2F..%2Fetc', undefined, /id/],
      ['GET', '/api/conversations/-starts-with-a-dash', undefined, /id/],
      ['DELETE', '/api/conversations/conv.dots', undefined, /id/],
      ['GET', '/api/conversations?limit=0', undefined, /limit/],
      ['GET', '/api/conversations?limit=5000', undefined, /limit/],
      ['GET', '/api/conversations?limit=ten', undefined, /limit/],
      ['GET', '/api/conversations?offset=-1', undefined, /offset/],
      ['DELETE', '/api/conversations', undefined, /all=true/],
      ['DELETE', '/api/conversations?all=yes', undefined, /all/],
      ['POST', '/api/conversations', { messages: 'hello' }, /messages/],
      ['POST', '/api/conversations', { messages: [{ content: 'no role' }] }, /role/],
      ['POST', '/api/conversations', { messages: [{ role: 'wizard', content: 'x' }] }, /role/],
      ['POST', '/api/conversations', { titel: 'typo' }, /additional/],
      ['POST', '/api/conversations', { model: 'm'.repeat(500) }, /model/],
      ['POST', '/api/conversations', { title: '   ' }, /title/],
      [
        'POST',
        '/api/conversations',
        {
          messages: Array.from({ length: CONVERSATION_LIMITS.maxMessages + 1 }, () => ({
            role: 'user',
            content: 'x',
          })),
        },
        /messages/,
      ],
      ['PATCH', '/api/conversations/conv_x1', {}, /title/],
      ['PUT', '/api/conversations/conv_x1', { title: 'no messages' }, /messages/],
    ];
    for (const [method, url, body, pattern] of cases) {
      const response = await call(method as 'GET', url, { token: alice, body });
      expect(response.statusCode, `${method} ${url} ${response.body}`).toBe(400);
      expect(response.json().error, `${method} ${url}`).toMatch(pattern);
    }
    const badJson = await call('POST', '/api/conversations', {
      token: alice,
      raw: '{"messages": [',
    });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json().error).toMatch(/not valid JSON/);
    const tooBig = await call('POST', '/api/conversations', {
      token: alice,
      body: { messages: [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024) }] },
    });
    expect(tooBig.statusCode).toBe(413);
  });

  it('refuses anonymous callers with 401 even though authentication is not required', async () => {
    for (const [method, url] of [
      ['GET', '/api/conversations'],
      ['POST', '/api/conversations'],
      ['PATCH', '/api/conversations/conv_abc'],
      ['GET', '/api/conversations/conv_abc'],
      ['DELETE', '/api/conversations?all=true'],
    ] as const) {
      const response = await call(method, url);
      expect(response.statusCode, url).toBe(401);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(response.json().error).toMatch(/Authentication required/);
    }
    const badToken = await call('GET', '/api/conversations', { token: 'pgmcps_nope' });
    expect(badToken.statusCode).toBe(401);
    // The store refuses an anonymous owner too.
    expect(await codeOf(auth.conversations.list(ANONYMOUS))).toBe(
      ErrorCodes.CONVERSATION_OWNER_REQUIRED,
    );
  });

  it('getOrCreate and saveMessages: what the chat loop uses', async () => {
    const store = auth.conversations;
    const first = await store.getOrCreate(alicePrincipal, 'useChatId123', {
      provider: 'openai',
      model: 'gpt-4o',
      connection: 'demo',
      messages: [uiMessage('u1', 'user', 'How many customers?')],
    });
    expect(first.created).toBe(true);
    expect(first.conversation).toMatchObject({ id: 'useChatId123', title: 'How many customers?' });
    const again = await store.getOrCreate(alicePrincipal, 'useChatId123', { messages: [] });
    expect(again.created).toBe(false);
    expect(again.conversation.messages).toHaveLength(1);
    // The same id chosen by another owner is another conversation.
    const bobPrincipal = (await auth.sessions.login('bob', 'bob-password-1', null)).principal;
    const bobs = await store.getOrCreate(bobPrincipal, 'useChatId123', { messages: [] });
    expect(bobs.created).toBe(true);

    const history = [
      uiMessage('u1', 'user', 'How many customers?'),
      uiMessage('a1', 'assistant', 'There are 42.'),
    ];
    await store.saveMessages(
      alicePrincipal,
      'useChatId123',
      history,
      { model: 'gpt-4.1' },
      {
        inputTokens: 100,
        outputTokens: 20,
        totalTokens: 120,
      },
    );
    const saved = await store.saveMessages(
      alicePrincipal,
      'useChatId123',
      history,
      {},
      {
        inputTokens: 50,
        outputTokens: 5,
        totalTokens: 55,
      },
    );
    expect(saved).toMatchObject({
      provider: 'openai',
      model: 'gpt-4.1',
      connection: 'demo',
      messages: history,
      usage: { inputTokens: 150, outputTokens: 25, totalTokens: 175 },
    });
    const view = (await call('GET', '/api/conversations/useChatId123', { token: alice })).json();
    expect(view.usage).toEqual({ input_tokens: 150, output_tokens: 25, total_tokens: 175 });
    // Deleted while the answer streamed: saving brings it back rather than losing the exchange.
    await store.remove(alicePrincipal, 'useChatId123');
    const back = await store.saveMessages(
      alicePrincipal,
      'useChatId123',
      history,
      { connection: 'demo' },
      {
        totalTokens: 7,
      },
    );
    expect(back).toMatchObject({ connection: 'demo', usage: { totalTokens: 7 } });
    // A new id of ours when the client has none; malformed ids are refused.
    const fresh = await store.getOrCreate(alicePrincipal, null, {});
    expect(fresh.conversation.id).toMatch(/^conv_/);
    expect(await codeOf(store.getOrCreate(alicePrincipal, 'bad id!', {}))).toBe(
      ErrorCodes.CONVERSATION_INVALID,
    );
    // NUL characters and broken surrogates, which jsonb refuses, are cleaned, not fatal.
    const odd = await store.saveMessages(
      alicePrincipal,
      fresh.conversation.id,
      [{ role: 'user', content: 'a\u0000b\ud800c', ['k\u0000']: 1 }],
      {},
    );
    expect(odd.messages).toEqual([{ role: 'user', content: 'ab\ufffdc', k: 1 }]);
    await store.removeAll(alicePrincipal);
    await store.removeAll(bobPrincipal);
  });

  it('caps the conversations one owner may keep', async () => {
    const store = createConversationStore(db, { maxConversations: 2 });
    const owner = (await auth.sessions.login('bob', 'bob-password-1', null)).principal;
    await store.removeAll(owner);
    await store.create(owner, {});
    await store.getOrCreate(owner, 'second', {});
    expect(await codeOf(store.create(owner, {}))).toBe(ErrorCodes.CONVERSATION_INVALID);
    const error = await store.getOrCreate(owner, 'third', {}).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/2 conversations.*delete some/);
    // An existing one is still found, and another owner is not affected.
    expect((await store.getOrCreate(owner, 'second', {})).created).toBe(false);
    expect((await store.getOrCreate(alicePrincipal, 'third', {})).created).toBe(true);
    expect(await store.removeAll(owner)).toBe(2);
    await store.remove(alicePrincipal, 'third');
  });

  it('POST /api/chat/compact answers the seed shape, and 400 for a bad request', async () => {
    const messages = [
      { role: 'user', content: 'Show me the users table' },
      ...Array.from({ length: 30 }, (_, i) => ({
        role: i % 2 ? 'assistant' : 'user',
        content: `Message ${i} about the sales figures. `.repeat(10),
      })),
    ];
    const response = await call('POST', '/api/chat/compact', {
      body: {
        messages,
        max_tokens: 1000,
        recent_window: 4,
        keep_anchors: true,
        options: { token_counter_type: 'openai', enable_caching: true, enable_analytics: true },
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(
      ['analytics', 'compaction_info', 'messages', 'summary', 'token_estimate'].sort(),
    );
    expect(body.messages[0]).toEqual({ role: 'user', content: 'Show me the users table' });
    expect(body.token_estimate).toBeLessThanOrEqual(1000);
    expect(body.compaction_info).toMatchObject({
      original_count: 31,
      anchor_count: 1,
      cache_hit: false,
    });
    expect(Object.keys(body.summary).sort()).toEqual(['description', 'tables', 'tools', 'topics']);
    const again = await call('POST', '/api/chat/compact', {
      body: {
        messages,
        max_tokens: 1000,
        recent_window: 4,
        keep_anchors: true,
        options: { token_counter_type: 'openai', enable_caching: true },
      },
    });
    expect(again.json().compaction_info.cache_hit).toBe(true);
    expect(again.json().messages).toEqual(body.messages);

    for (const bad of [
      {},
      { messages: [{ content: 'x' }] },
      { messages: [], max_tokens: -1 },
      { messages: [], options: { token_counter_type: 'tiktoken' } },
      { messages: [], options: { unknown_option: true } },
    ]) {
      const refused = await call('POST', '/api/chat/compact', { body: bad });
      expect(refused.statusCode, JSON.stringify(bad)).toBe(400);
      expect(refused.json().error).toMatch(/invalid request/);
    }
  });

  it('describes the routes in /api/openapi.json', async () => {
    const doc = (await call('GET', '/api/openapi.json')).json();
    const paths = doc.paths as Record<string, Record<string, { requestBody?: unknown }>>;
    expect(Object.keys(paths['/api/conversations']!).sort()).toEqual(['delete', 'get', 'post']);
    expect(Object.keys(paths['/api/conversations/{id}']!).sort()).toEqual([
      'delete',
      'get',
      'patch',
      'put',
    ]);
    expect(paths['/api/conversations/{id}']!['put']!.requestBody).toBeDefined();
    expect(paths['/api/chat/compact']!['post']!.requestBody).toBeDefined();
  });
}

const info = await realPostgres('conversations on PostgreSQL');

describe.skipIf(!info)('conversations on PostgreSQL', () => {
  const pgInfo = info as RealPostgres;
  const { url } = throwawayDatabase(pgInfo, 'pgmcp_conv');
  scenarios(() => openStateDatabase({ url, dataDir: '/nonexistent', logger }));
});

describe('conversations on the embedded database', () => {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-conv-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  scenarios(() => openStateDatabase({ url: null, dataDir: join(root, 'data'), logger }));
});
