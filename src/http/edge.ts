// What stands in front of the routes: the caller's identity slot, CORS, the security headers
// of /api and the rate limits. One call, made before any route is registered, so the limits
// and headers reach /mcp and every /api route added later.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Metrics } from '../core/metrics.js';
import { registerCors } from './cors.js';
import type { OriginPolicy } from './origin.js';
import { declarePrincipal } from './principal.js';
import { registerRateLimits, type RateLimitSettings } from './rate-limit.js';
import { registerApiSecurityHeaders } from './security-headers.js';
import type { TlsMaterial } from './tls.js';

export interface EdgeOptions {
  corsOrigins: readonly string[];
  rateLimit: RateLimitSettings;
  /** PEM material when serving HTTPS (see tls.ts); null for plain HTTP. */
  tls: TlsMaterial | null;
}

export const NO_EDGE: EdgeOptions = {
  corsOrigins: [],
  rateLimit: {
    requestsPerMinute: null,
    routes: {},
    redis: null,
    redisKeyPrefix: 'pgmcp:ratelimit:',
  },
  tls: null,
};

export function registerEdge(
  app: FastifyInstance,
  options: EdgeOptions & {
    mcpPaths: readonly string[];
    policy: OriginPolicy;
    logger: Logger;
    metrics?: Metrics;
  },
): { redisUp: (() => boolean) | null } {
  declarePrincipal(app);
  registerCors(app, {
    origins: options.corsOrigins,
    mcpPaths: options.mcpPaths,
    policy: options.policy,
    logger: options.logger,
  });
  registerApiSecurityHeaders(app);
  return registerRateLimits(app, {
    settings: options.rateLimit,
    mcpPaths: options.mcpPaths,
    logger: options.logger,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
}
