// CORS for browser MCP clients and web pages on other origins, off unless http.cors.origins
// names some. Only the MCP endpoint and /api answer with CORS headers.
//
// CORS only decides whether a browser lets a page read a response; the Host/Origin check
// (origin.ts) decides whether the request is served at all. A page's origin therefore has to
// pass both: list it in http.cors.origins and in http.allowedOrigins.
import fastifyCors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { OriginPolicy } from './origin.js';
import { isApiPath } from './security-headers.js';

/** Request headers a browser MCP client sends (the CORS-safelisted ones need no mention). */
const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'Last-Event-ID',
];

/** Response headers such a client must be able to read. */
const CORS_EXPOSED_HEADERS = [
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
  'WWW-Authenticate',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

/** How long a browser may reuse a preflight answer. */
const PREFLIGHT_MAX_AGE_S = 600;

export function registerCors(
  app: FastifyInstance,
  options: {
    origins: readonly string[];
    mcpPaths: readonly string[];
    policy: OriginPolicy;
    logger: Logger;
  },
): void {
  const { origins, mcpPaths, policy, logger } = options;
  if (origins.length === 0) return;
  for (const origin of origins) {
    // Without a Host to compare with, this is the verdict a cross-origin page would get.
    if (policy.check(undefined, origin === '*' ? 'https://any.example' : origin) !== null) {
      logger.warn(
        { origin },
        'http.cors.origins: the Origin check refuses this origin (403); add it to http.allowedOrigins too',
      );
    }
  }
  const served = (req: FastifyRequest): boolean => {
    // The raw path: a preflight is routed to the catch-all OPTIONS route, not to /mcp.
    const path = req.url.split('?')[0] ?? '';
    return mcpPaths.includes(path) || isApiPath(path);
  };
  const allowed = origins.includes('*') ? '*' : [...origins];
  app.register(fastifyCors, {
    delegator: async (req: FastifyRequest) => ({
      origin: served(req) ? allowed : false,
      methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      maxAge: PREFLIGHT_MAX_AGE_S,
      // Bearer tokens travel in Authorization, which a page sets itself: no cookies needed.
      credentials: false,
    }),
  });
}
