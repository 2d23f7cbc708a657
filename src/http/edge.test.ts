// The edge of the HTTP server through the real composition (createHttpServer), driven with
// inject(): no sockets, no database. /api routes are dummies registered here, as the API will
// register its own later; the limits and headers must reach them all the same.
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import { createSigner } from '../core/signed.js';
import { createDispatcher } from '../mcp/dispatcher.js';
import { createRegistry } from '../tools/registry.js';
import { NO_EDGE, type EdgeOptions } from './edge.js';
import { RATE_LIMITED, budgetFor, type RateLimitSettings } from './rate-limit.js';
import { createHttpServer, type HttpServer } from './server.js';

const logger = pino({ level: 'silent' });
const MCP_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};
// A modern-era request: needs no session, so every one stands alone.
const LIST_HEADERS = {
  ...MCP_HEADERS,
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/list',
};
const PING = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/list',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'edge-test', version: '1' },
    },
  },
});

function limits(overrides: Partial<RateLimitSettings>): RateLimitSettings {
  return { ...NO_EDGE.rateLimit, ...overrides };
}

let server: HttpServer | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = undefined;
});

/** The real server with dummy /api routes; `x-test-user` stands in for authentication. */
async function start(edge: Partial<EdgeOptions>, bindHost = '127.0.0.1'): Promise<FastifyInstance> {
  const registry = createRegistry();
  const dispatcher = createDispatcher({
    registry,
    logger,
    serverInfo: { name: 'edge-test', version: '0.0.0' },
    signer: createSigner(null),
  });
  server = createHttpServer({
    options: {
      host: bindHost,
      port: 0,
      path: '/mcp',
      allowedOrigins: ['https://app.example.com'],
      allowedHosts: [],
      bodyLimitBytes: 100_000,
      sessionIdleTimeoutMs: 60_000,
      eventStoreSize: 10,
      keepAliveMs: 0,
    },
    dispatcher,
    logger,
    health: async () => ({ ok: true, database: 'none' }),
    edge: { ...NO_EDGE, ...edge },
  });
  const { app } = server;
  // Stands in for a signed-in caller: runs after the real authentication hook (preValidation).
  app.addHook('preValidation', async (req) => {
    const user = req.headers['x-test-user'];
    if (typeof user === 'string') {
      const principal: Principal = { ...ANONYMOUS, kind: 'token', userId: user };
      req.principal = principal;
    }
  });
  app.get('/api/items', async () => ({ items: [] }));
  app.get('/api/items/:id', async (req) => ({ id: (req.params as { id: string }).id }));
  app.post('/api/login', async () => ({ ok: true }));
  app.get('/api/cached', async (_req, reply) => {
    reply.header('cache-control', 'max-age=60');
    return { ok: true };
  });
  await app.ready();
  return app;
}

const ping = (app: FastifyInstance, headers: Record<string, string> = {}, path = '/mcp') =>
  app.inject({
    method: 'POST',
    url: path,
    headers: { ...LIST_HEADERS, ...headers },
    payload: PING,
  });

describe('rate limit families', () => {
  const settings = limits({ requestsPerMinute: 100, routes: { 'api.login': 5, 'api.chat': 7 } });

  it('name the most specific configured family, and fall back to the default', () => {
    const paths = ['/mcp', '/mcp/v1'];
    expect(budgetFor('/mcp', paths, settings)).toEqual({ family: 'mcp', max: 100, body: 'rpc' });
    expect(budgetFor('/mcp/v1', paths, settings)?.family).toBe('mcp');
    expect(budgetFor('/api/login', paths, settings)).toEqual({
      family: 'api.login',
      max: 5,
      body: 'json',
    });
    expect(budgetFor('/api/chat/compact', paths, settings)?.family).toBe('api.chat');
    expect(budgetFor('/api/conversations/:id', paths, settings)?.family).toBe('api');
    expect(budgetFor('/health', paths, settings)).toBeNull();
    expect(budgetFor('/apix', paths, settings)).toBeNull();
  });

  it('leave a family unlimited when neither it nor the default has a limit', () => {
    const only = limits({ routes: { 'api.login': 2 } });
    expect(budgetFor('/mcp', ['/mcp'], only)).toBeNull();
    expect(budgetFor('/api/items', ['/mcp'], only)).toBeNull();
    expect(budgetFor('/api/login', ['/mcp'], only)?.max).toBe(2);
  });
});

describe('rate limits in memory', () => {
  it('answer /mcp past the budget with 429, Retry-After and a JSON-RPC error', async () => {
    const app = await start({ rateLimit: limits({ requestsPerMinute: 3 }) });
    for (let i = 0; i < 3; i++) {
      const ok = await ping(app);
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.headers['x-ratelimit-limit']).toBe('3');
      expect(ok.headers['x-ratelimit-remaining']).toBe(String(2 - i));
    }
    const refused = await ping(app);
    expect(refused.statusCode).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: RATE_LIMITED, data: { retryAfter } },
    });
    expect(refused.json().error.message).toMatch(/at most 3 a minute/);
  });

  it('count /mcp and /mcp/v1 in one budget, and leave /health alone', async () => {
    const app = await start({ rateLimit: limits({ requestsPerMinute: 2 }) });
    expect((await ping(app, {}, '/mcp')).statusCode).toBe(200);
    expect((await ping(app, {}, '/mcp/v1')).statusCode).toBe(200);
    expect((await ping(app, {}, '/mcp/v1')).statusCode).toBe(429);
    expect((await ping(app, {}, '/mcp')).statusCode).toBe(429);
    for (let i = 0; i < 5; i++) expect((await app.inject('/health')).statusCode).toBe(200);
  });

  it('give each client address its own budget', async () => {
    const app = await start({ rateLimit: limits({ requestsPerMinute: 1 }) });
    const from = (remoteAddress: string) =>
      app.inject({
        method: 'POST',
        url: '/mcp',
        headers: LIST_HEADERS,
        payload: PING,
        remoteAddress,
      });
    expect((await from('127.0.0.2')).statusCode).toBe(200);
    expect((await from('127.0.0.2')).statusCode).toBe(429);
    expect((await from('127.0.0.3')).statusCode).toBe(200);
  });

  it("key on the principal's user id when authentication set one", async () => {
    const app = await start({ rateLimit: limits({ requestsPerMinute: 1 }) });
    // Same address, three callers: alice, bob and the anonymous address.
    expect((await ping(app, { 'x-test-user': 'alice' })).statusCode).toBe(200);
    expect((await ping(app, { 'x-test-user': 'alice' })).statusCode).toBe(429);
    expect((await ping(app, { 'x-test-user': 'bob' })).statusCode).toBe(200);
    expect((await ping(app)).statusCode).toBe(200);
    expect((await ping(app)).statusCode).toBe(429);
  });

  it('limit /api routes registered after the server was built, with {error} bodies', async () => {
    const app = await start({ rateLimit: limits({ routes: { api: 2, 'api.login': 1 } }) });
    expect((await app.inject('/api/items')).statusCode).toBe(200);
    expect((await app.inject('/api/items/7')).statusCode).toBe(200);
    const refused = await app.inject('/api/items');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.json()).toEqual({ error: expect.stringMatching(/at most 2 a minute on api/) });
    // api.login has a budget of its own, and /mcp none at all (no default set).
    expect((await app.inject({ method: 'POST', url: '/api/login' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/api/login' })).statusCode).toBe(429);
    for (let i = 0; i < 4; i++) expect((await ping(app)).statusCode).toBe(200);
  });

  it('start a fresh window a minute after the first request', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2030-01-01T00:00:00Z') });
    const app = await start({ rateLimit: limits({ requestsPerMinute: 1 }) });
    expect((await ping(app)).statusCode).toBe(200);
    vi.setSystemTime(new Date('2030-01-01T00:00:45Z'));
    const refused = await ping(app);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('15');
    vi.setSystemTime(new Date('2030-01-01T00:01:00Z'));
    expect((await ping(app)).statusCode).toBe(200);
  });

  it('are off when nothing is configured', async () => {
    const app = await start({});
    for (let i = 0; i < 5; i++) {
      const res = await ping(app);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  it('do not count requests the Origin check refused', async () => {
    const app = await start({ rateLimit: limits({ requestsPerMinute: 1 }) });
    for (let i = 0; i < 3; i++) {
      expect((await ping(app, { origin: 'https://evil.example' })).statusCode).toBe(403);
    }
    expect((await ping(app)).statusCode).toBe(200);
  });
});

describe('security headers on /api', () => {
  it('are set on every /api answer (404s too) and nowhere else', async () => {
    const app = await start({});
    for (const url of ['/api/items', '/api/nothing-here']) {
      const res = await app.inject(url);
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['referrer-policy'], url).toBe('no-referrer');
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
      expect(res.headers['cache-control'], url).toBe('no-store');
    }
    expect((await app.inject('/api/cached')).headers['cache-control']).toBe('max-age=60');
    const health = await app.inject('/health');
    expect(health.headers['x-frame-options']).toBeUndefined();
  });
});

describe('CORS', () => {
  const preflight = (app: FastifyInstance, origin: string, url = '/mcp') =>
    app.inject({
      method: 'OPTIONS',
      url,
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-session-id, mcp-protocol-version',
      },
    });

  it('answers a preflight from a listed origin with the MCP headers', async () => {
    const app = await start({ corsOrigins: ['https://app.example.com'] });
    const res = await preflight(app, 'https://app.example.com');
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
    for (const name of [
      'mcp-session-id',
      'mcp-protocol-version',
      'mcp-method',
      'mcp-name',
      'last-event-id',
      'authorization',
      'content-type',
    ]) {
      expect(allowed).toContain(name);
    }
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('exposes Mcp-Session-Id on the actual request, which also passes the Origin check', async () => {
    const app = await start({ corsOrigins: ['https://app.example.com'] });
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        ...MCP_HEADERS,
        origin: 'https://app.example.com',
      },
      payload: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'browser', version: '1' },
        },
      }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(res.headers['access-control-expose-headers']).toLowerCase()).toContain(
      'mcp-session-id',
    );
    expect(res.headers['mcp-session-id']).toBeTruthy();
  });

  it('gives an unlisted origin no CORS headers, and the Origin check still refuses it', async () => {
    const app = await start({ corsOrigins: ['https://app.example.com'] });
    const res = await preflight(app, 'https://evil.example');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect((await ping(app, { origin: 'https://evil.example' })).statusCode).toBe(403);
  });

  it('applies to /api but not to other paths', async () => {
    const app = await start({ corsOrigins: ['https://app.example.com'] });
    const api = await preflight(app, 'https://app.example.com', '/api/items');
    expect(api.statusCode).toBe(204);
    expect(api.headers['access-control-allow-origin']).toBe('https://app.example.com');
    const health = await preflight(app, 'https://app.example.com', '/health');
    expect(health.headers['access-control-allow-origin']).toBeUndefined();
    expect(health.statusCode).toBe(404);
  });

  it('is off by default: no preflight answer', async () => {
    const app = await start({});
    const res = await preflight(app, 'https://app.example.com');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    // The endpoint's own refusal of a method it does not serve.
    expect(res.statusCode).toBe(405);
  });
});
