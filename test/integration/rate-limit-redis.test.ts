// Rate-limit counters in a real Redis: two server instances in this process share one budget,
// and a Redis that is down, or that accepts connections and never answers, neither fails nor
// holds up a request (each instance then counts on its own).
import { createServer, type Server, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../src/core/principal.js';
import { declarePrincipal } from '../../src/http/principal.js';
import { registerRateLimits, type RateLimitSettings } from '../../src/http/rate-limit.js';
import { realRedis, uniquePrefix } from '../helpers/redis.js';

const redisUrl = await realRedis('test/integration/rate-limit-redis.test.ts (shared counters)');

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** One pgmcp-like instance: the limiter plus dummy /mcp and /api routes. */
async function instance(
  settings: Partial<RateLimitSettings>,
  logger = pino({ level: 'silent' }),
): Promise<FastifyInstance> {
  const app = Fastify();
  declarePrincipal(app);
  app.addHook('onRequest', async (req) => {
    const user = req.headers['x-test-user'];
    if (typeof user === 'string') req.principal = { ...ANONYMOUS, kind: 'user', userId: user };
  });
  registerRateLimits(app, {
    settings: {
      requestsPerMinute: null,
      routes: {},
      redis: null,
      redisKeyPrefix: 'unused:',
      ...settings,
    },
    mcpPaths: ['/mcp', '/mcp/v1'],
    logger,
  });
  app.post('/mcp', async () => ({ jsonrpc: '2.0', id: 1, result: {} }));
  app.get('/api/items', async () => ({ items: [] }));
  apps.push(app);
  await app.ready();
  return app;
}

const post = (app: FastifyInstance, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/mcp', headers, payload: {} }).then((r) => r.statusCode);

describe.skipIf(!redisUrl)('rate limits in Redis', () => {
  const admin = new Redis(redisUrl ?? '');
  afterAll(() => admin.disconnect());

  it('share one budget between instances, keyed by family and caller', async () => {
    const prefix = uniquePrefix('shared');
    const a = await instance({ requestsPerMinute: 3, redis: redisUrl, redisKeyPrefix: prefix });
    const b = await instance({ requestsPerMinute: 3, redis: redisUrl, redisKeyPrefix: prefix });
    expect(await post(a)).toBe(200);
    expect(await post(b)).toBe(200);
    expect(await post(a)).toBe(200);
    const refused = await b.inject({ method: 'POST', url: '/mcp', payload: {} });
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await post(a)).toBe(429);
    // The /api family has a budget of its own.
    expect((await a.inject('/api/items')).statusCode).toBe(200);
    const keys = (await admin.keys(`${prefix}*`)).sort();
    expect(keys).toEqual([`${prefix}api:addr:127.0.0.1`, `${prefix}mcp:addr:127.0.0.1`]);
    expect(await admin.get(`${prefix}mcp:addr:127.0.0.1`)).toBe('5');
    const ttl = await admin.pttl(`${prefix}mcp:addr:127.0.0.1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('count an authenticated caller by user id across instances', async () => {
    const prefix = uniquePrefix('user');
    const a = await instance({ routes: { mcp: 1 }, redis: redisUrl, redisKeyPrefix: prefix });
    const b = await instance({ routes: { mcp: 1 }, redis: redisUrl, redisKeyPrefix: prefix });
    expect(await post(a, { 'x-test-user': 'alice' })).toBe(200);
    expect(await post(b, { 'x-test-user': 'alice' })).toBe(429);
    expect(await post(b, { 'x-test-user': 'bob' })).toBe(200);
    expect(await admin.exists(`${prefix}mcp:user:alice`)).toBe(1);
  });

  it('keep deployments with different prefixes apart', async () => {
    const a = await instance({
      routes: { mcp: 1 },
      redis: redisUrl,
      redisKeyPrefix: uniquePrefix('a'),
    });
    const b = await instance({
      routes: { mcp: 1 },
      redis: redisUrl,
      redisKeyPrefix: uniquePrefix('b'),
    });
    expect(await post(a)).toBe(200);
    expect(await post(b)).toBe(200);
    expect(await post(a)).toBe(429);
  });
});

describe('rate limits when Redis cannot answer', () => {
  let silent: Server | undefined;
  const sockets: Socket[] = [];
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => (silent ? silent.close(resolve) : resolve(undefined)));
  });

  /** Captures what the limiter logs. */
  function recorder() {
    const lines: Array<{ level: number; msg: string }> = [];
    const logger = pino(
      { level: 'info' },
      {
        write: (line: string) =>
          void lines.push(JSON.parse(line) as { level: number; msg: string }),
      },
    );
    return { logger, lines };
  }

  it('a Redis that is down: requests are served and counted in this process', async () => {
    const { logger, lines } = recorder();
    // Port 1 on loopback: nothing listens, connections are refused at once.
    const app = await instance({ requestsPerMinute: 2, redis: 'redis://127.0.0.1:1' }, logger);
    expect(await post(app)).toBe(200);
    expect(await post(app)).toBe(200);
    expect(await post(app)).toBe(429);
    // One warning, at start; the refused requests do not repeat it (at most one per 30 s).
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings.map((l) => l.msg)).toEqual([
      'rate limits: Redis not reachable at start; counting in this process until it is',
    ]);
  });

  it('a Redis that accepts connections and never answers: no request waits for it', async () => {
    silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const app = await instance({ routes: { mcp: 1 }, redis: `redis://127.0.0.1:${port}` });
    expect(await post(app)).toBe(200);
    expect(await post(app)).toBe(429);
    expect((await app.inject('/api/items')).statusCode).toBe(200);
  });
});
