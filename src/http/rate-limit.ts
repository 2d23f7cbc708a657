// Requests per minute per caller on the MCP endpoint and on everything under /api.
//
// The caller is the principal's user id when authentication named one, else the client
// address (IPv6 grouped by /64). Each route family has its own budget: `mcp` (the endpoint and
// its /v1 alias, every method), `api`, or a narrower `api.<segment>…` family where configured.
// Counters live in this process, or in Redis so that several instances share them. When Redis
// cannot answer, requests are counted in this process instead (fail open to per-instance
// limits): an outage of the counter store must not become an outage of the service.
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { HTTP_REFUSALS, RpcCodes } from '../core/error-table.js';
import { declarePrincipal } from './principal.js';
import type { Metrics } from '../core/metrics.js';
import { answerForm, refuse } from './refuse.js';
import { isApiPath } from './security-headers.js';

/** JSON-RPC error code of a 429 on /mcp (implementation-defined server error range). */
export const RATE_LIMITED = RpcCodes.RATE_LIMITED;

const WINDOW_MS = 60_000;
/** Redis answers within this or the request is counted locally. */
const REDIS_COMMAND_TIMEOUT_MS = 1_000;
/** How long start-up waits for Redis before serving with local counters. */
const REDIS_START_WAIT_MS = 2_000;
/** At most one "Redis unavailable" warning per this interval. */
const WARN_INTERVAL_MS = 30_000;

export interface RateLimitSettings {
  requestsPerMinute: number | null;
  routes: Readonly<Record<string, number>>;
  redis: string | null;
  redisKeyPrefix: string;
}

export interface Budget {
  /** The family whose counter a request uses: mcp, api, api.login… */
  family: string;
  max: number;
  /** How a 429 is written: a JSON-RPC error (/mcp) or `{ error }` (/api); refuse.ts decides. */
  body: 'rpc' | 'json';
}

type Check = (
  req: FastifyRequest,
) => Promise<
  | { isAllowed: true }
  | { isAllowed: false; max: number; remaining: number; ttlInSeconds: number; isExceeded: boolean }
>;

/** Whether any limit is configured at all. */
function rateLimitsEnabled(settings: RateLimitSettings): boolean {
  return settings.requestsPerMinute !== null || Object.keys(settings.routes).length > 0;
}

/**
 * The budget of a route, decided once when the route is registered: the most specific
 * configured family wins (`api.chat.compact`, then `api.chat`, then `api`), then the default.
 */
export function budgetFor(
  url: string,
  mcpPaths: readonly string[],
  settings: RateLimitSettings,
): Budget | null {
  let candidates: string[];
  // The form a 429 takes is the route's, decided where every refusal's is (refuse.ts).
  const body: Budget['body'] = answerForm(url) === 'rest' ? 'json' : 'rpc';
  if (mcpPaths.includes(url)) {
    candidates = ['mcp'];
  } else if (isApiPath(url)) {
    // Static segments only: /api/conversations/:id belongs to api.conversations.
    const segments: string[] = [];
    for (const segment of url.split('/').slice(2)) {
      if (segment === '' || /[:*]/.test(segment)) break;
      segments.push(segment);
    }
    candidates = segments.map((_, i) =>
      ['api', ...segments.slice(0, segments.length - i)].join('.'),
    );
    candidates.push('api');
  } else {
    return null;
  }
  for (const family of candidates) {
    const max = settings.routes[family];
    if (max !== undefined) return { family, max, body };
  }
  const family = candidates[candidates.length - 1]!;
  return settings.requestsPerMinute === null
    ? null
    : { family, max: settings.requestsPerMinute, body };
}

/** Whose budget a request spends: the authenticated user, else the client address. */
function callerKey(req: FastifyRequest): string {
  const { principal } = req;
  if (principal.kind !== 'anonymous' && principal.userId !== null) {
    const tenant = principal.tenantId === null ? '' : `${principal.tenantId}/`;
    return `user:${tenant}${principal.userId}`;
  }
  return `addr:${normalizeIP(req.ip)}`;
}

/**
 * Limits the MCP endpoint and /api routes registered after this call. Route-level preValidation
 * hooks run after the instance's own, so the authentication hook has set `request.principal`
 * by the time a request is counted, and a request the Host/Origin check refused is not.
 */
export function registerRateLimits(
  app: FastifyInstance,
  options: {
    settings: RateLimitSettings;
    mcpPaths: readonly string[];
    logger: Logger;
    metrics?: Metrics;
  },
): { redisUp: (() => boolean) | null } {
  const { settings, mcpPaths, logger } = options;
  declarePrincipal(app);
  if (!rateLimitsEnabled(settings)) return { redisUp: null };

  const budgets = new WeakMap<FastifyRequest, Budget>();
  const limiterOptions = {
    global: false,
    timeWindow: WINDOW_MS,
    max: (req: FastifyRequest) => budgets.get(req)?.max ?? Number.MAX_SAFE_INTEGER,
    keyGenerator: (req: FastifyRequest) => `${budgets.get(req)?.family ?? '-'}:${callerKey(req)}`,
  };
  // Each store in its own context: the plugin keeps one store per instance it decorates.
  let local: Check | undefined;
  let shared: Check | undefined;
  let lastWarning = -Infinity;
  app.register(async (scope) => {
    await scope.register(fastifyRateLimit, limiterOptions);
    local = scope.createRateLimit() as Check;
  });
  let redisUp: (() => boolean) | null = null;
  if (settings.redis !== null) {
    const redis = connectRedis(settings.redis, logger);
    redisUp = () => redis.status === 'ready';
    app.addHook('onClose', async () => redis.disconnect());
    app.register(async (scope) => {
      // Counting starts in Redis from the first request, unless Redis is not there to count.
      if (!(await redisReady(redis, REDIS_START_WAIT_MS))) {
        logger.warn(
          'rate limits: Redis not reachable at start; counting in this process until it is',
        );
        lastWarning = Date.now();
      }
      await scope.register(fastifyRateLimit, {
        ...limiterOptions,
        redis,
        nameSpace: settings.redisKeyPrefix,
      });
      shared = scope.createRateLimit() as Check;
    });
  }

  const check = async (req: FastifyRequest): ReturnType<Check> => {
    if (shared) {
      try {
        return await shared(req);
      } catch (error) {
        if (Date.now() - lastWarning >= WARN_INTERVAL_MS) {
          lastWarning = Date.now();
          logger.warn(
            { err: { message: (error as Error).message } },
            'rate limits: Redis unavailable, counting in this process until it answers',
          );
        }
      }
    }
    return local!(req);
  };

  app.addHook('onRoute', (route: RouteOptions) => {
    const budget = budgetFor(route.url, mcpPaths, settings);
    if (budget === null) return;
    const limit = async (req: FastifyRequest, reply: FastifyReply) => {
      budgets.set(req, budget);
      const result = await check(req);
      if (result.isAllowed) return undefined;
      const resetSeconds = Math.max(1, result.ttlInSeconds);
      reply.header('x-ratelimit-limit', result.max);
      reply.header('x-ratelimit-remaining', result.remaining);
      reply.header('x-ratelimit-reset', resetSeconds);
      if (!result.isExceeded) return undefined;
      reply.header('retry-after', resetSeconds);
      options.metrics?.rateLimited({ family: budget.family });
      const message = `Too many requests: at most ${result.max} a minute on ${budget.family}; retry in ${resetSeconds} s.`;
      return refuse(req, reply, HTTP_REFUSALS.RATE_LIMITED, message, {
        data: { retryAfter: resetSeconds },
      });
    };
    // preValidation, after the instance's authentication hook: the caller is known by then.
    const existing = route.preValidation;
    route.preValidation = existing === undefined ? [limit] : [existing, limit].flat();
  });
  return { redisUp };
}

function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    // Fail at once while disconnected instead of queueing: a request must never wait for Redis.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
  });
  let connected = false;
  redis.on('ready', () => {
    connected = true;
    logger.info('rate limits: counting in Redis');
  });
  // Without a listener ioredis prints every failed reconnect; the request path reports instead.
  redis.on('error', (error: Error) => {
    if (connected) logger.warn({ err: { message: error.message } }, 'rate limits: Redis error');
    connected = false;
  });
  return redis;
}

/** Resolves true once connected, false on a connection error or after `waitMs`. */
function redisReady(redis: Redis, waitMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      resolve(ok);
    };
    const onReady = () => done(true);
    const onError = () => done(false);
    const timer = setTimeout(() => done(false), waitMs);
    redis.once('ready', onReady);
    redis.once('error', onError);
  });
}
