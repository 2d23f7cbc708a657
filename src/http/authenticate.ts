// Who is calling, for every request to the MCP endpoint and /api/*: a bearer token (API
// token or login session, checked by auth/), else a trusted proxy's identity headers, else
// anonymous. A request that needs more than it brought is answered here with 401 (and the
// challenge) or 403, before any route runs.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import '../api/fastify-types.js';
import {
  bearerFromHeader,
  bearerKind,
  isAuthFailure,
  MAX_BEARER_LENGTH,
  type AuthFailure,
  type LapseReason,
} from '../auth/index.js';
import type { ResourceServer } from '../auth/oauth/resource-server.js';
import { HTTP_REFUSALS } from '../core/error-table.js';
import { ErrorCodes } from '../core/errors.js';
import type { Metrics } from '../core/metrics.js';
import { ANONYMOUS, holdsRole, type Principal } from '../core/principal.js';
import { Refusals, rolesMissing } from '../core/refusals.js';
import { challenge, type ChallengeKind } from './challenge.js';
import type { OAuthDiscovery } from './oauth-discovery.js';
import { declarePrincipal } from './principal.js';
import { refuse as refuseWith } from './refuse.js';
import { createTrustedPeers } from './trusted-peers.js';

/** Checks a bearer token: a principal, or why it was refused. */
export interface BearerVerifier {
  authenticateBearer(raw: string): Promise<Principal | AuthFailure>;
  /** Re-checks the bearers behind open streams in one batch (see stream-watch.ts). */
  lapsedBearers?(hashes: readonly string[]): Promise<Map<string, LapseReason>>;
}

export interface HttpAuthOptions {
  /** Whether callers must authenticate (/api routes marked auth: 'optional' excepted). */
  required: boolean;
  /** null: no state database (tokens cannot be checked; any bearer is refused). */
  verifier: BearerVerifier | null;
  trustedProxies: readonly string[];
  proxyHeaders: { userId: string; tenantId: string; roles: string | null };
  /** The MCP endpoint's paths; /api/* is guarded too. */
  mcpPaths: readonly string[];
  /** Other paths whose callers are authenticated (/metrics on the main port). */
  guardedPaths?: readonly string[];
  logger: Logger;
  /** OAuth resource server (auth.oauth): tokens that are not pgmcp's own, and discovery. */
  oauth?: HttpOAuth | null;
  /** How often the credentials behind open streams are re-checked (auth.cacheTtlMs). */
  streamRecheckMs?: number;
  /** Counts refusals by the challenge's kind. */
  metrics?: Metrics;
}

export interface HttpOAuth {
  server: ResourceServer;
  discovery: OAuthDiscovery;
  /** auth.oauth.requireAuthorization: the MCP endpoint needs a verified caller. */
  requireOnMcp: boolean;
  /** auth.oauth.clockSkewSeconds: a token is accepted until its exp plus this. */
  clockSkewSeconds?: number;
}

/** Seconds a client should wait after a 503 because an issuer could not be reached. */
const UNAVAILABLE_RETRY_S = 5;

const keys = new WeakMap<Principal, string>();

/**
 * A stable key for "the same caller" (a legacy session belongs to the one who opened it).
 * Principals are immutable and shared (ANONYMOUS, the verifier's cached ones): one key each.
 */
export function principalKey(principal: Principal): string {
  let key = keys.get(principal);
  if (key === undefined) {
    key = JSON.stringify([principal.kind, principal.userId, principal.tenantId]);
    keys.set(principal, key);
  }
  return key;
}

export function registerAuthentication(app: FastifyInstance, options: HttpAuthOptions): void {
  const { logger } = options;
  const trusted = createTrustedPeers(options.trustedProxies);
  let warnedSpoof = false;

  const oauth = options.oauth ?? null;
  const refuse = (
    req: FastifyRequest,
    reply: FastifyReply,
    status: 401 | 403,
    kind: ChallengeKind,
    message: string,
    extra: { code?: string; roles?: readonly string[] } = {},
  ): FastifyReply => {
    options.metrics?.authFailure({ reason: kind });
    const description = kind === 'missing' ? undefined : message;
    reply.header(
      'www-authenticate',
      oauth
        ? oauth.discovery.challengeFor(req, kind, {
            ...(description ? { description } : {}),
            ...(extra.roles ? { roles: extra.roles } : {}),
          })
        : challenge(kind, description),
    );
    const refusal =
      status === 401 ? HTTP_REFUSALS.UNAUTHENTICATED : HTTP_REFUSALS.INSUFFICIENT_SCOPE;
    return refuseWith(req, reply, refusal, message, {
      ...(extra.code ? { data: { code: extra.code } } : {}),
    });
  };

  /** A token pgmcp cannot judge now (its issuer is unreachable): 503, never a hang or a 500. */
  const unavailable = (req: FastifyRequest, reply: FastifyReply, failure: AuthFailure) => {
    options.metrics?.authFailure({ reason: 'issuer_unavailable' });
    const message = failure.description ?? 'The token issuer cannot be reached right now.';
    reply.header('retry-after', String(UNAVAILABLE_RETRY_S));
    return refuseWith(req, reply, HTTP_REFUSALS.ISSUER_UNAVAILABLE, message, {
      data: { code: failure.code ?? ErrorCodes.OAUTH_ISSUER_UNAVAILABLE },
    });
  };

  /** pgmcp's own tokens by their shape; anything else is the OAuth resource server's. */
  const verify = async (req: FastifyRequest, token: string): Promise<Principal | AuthFailure> => {
    if (oauth && bearerKind(token) === null) {
      return oauth.server.verify(token, {
        resource: oauth.discovery.resourceFor(req),
        origin: oauth.discovery.originOf(req),
      });
    }
    return options.verifier ? options.verifier.authenticateBearer(token) : { reason: 'unknown' };
  };

  const fromProxy = (req: FastifyRequest): Principal | null => {
    const { userId, tenantId, roles } = options.proxyHeaders;
    const user = headerText(req.headers[userId]);
    if (user === undefined) return null;
    if (!trusted(req.socket.remoteAddress)) {
      // Anyone can send the header; only a configured proxy is believed.
      const log = warnedSpoof ? logger.debug.bind(logger) : logger.warn.bind(logger);
      warnedSpoof = true;
      log(
        { peer: req.socket.remoteAddress, header: userId },
        'identity header from a peer that is not in auth.trustedProxies: ignored',
      );
      return null;
    }
    const roleList = roles ? (headerText(req.headers[roles]) ?? '') : '';
    return {
      kind: 'trusted-header',
      userId: user,
      tenantId: headerText(req.headers[tenantId]) ?? null,
      roles: roleList
        .split(',')
        .map((r) => r.trim())
        .filter(Boolean),
      scopes: [],
      claims: {},
    };
  };

  const isApi = (req: FastifyRequest): boolean => (req.routeOptions.url ?? '').startsWith('/api/');
  const guarded = (req: FastifyRequest): boolean => {
    const route = req.routeOptions.url ?? '';
    return (
      options.mcpPaths.includes(route) ||
      route.startsWith('/api/') ||
      (options.guardedPaths?.includes(route) ?? false)
    );
  };

  declarePrincipal(app);
  // preValidation, not onRequest: CORS headers (an onRequest hook) are set by then, so a
  // browser can read a 401 and its challenge; the body has been read (within the limit).
  app.addHook('preValidation', async (req, reply) => {
    req.principal = ANONYMOUS;
    if (!guarded(req)) return;
    const config = req.routeOptions.config;
    const query = req.query as Record<string, unknown> | undefined;
    if (query && typeof query === 'object' && 'access_token' in query) {
      return refuse(req, reply, 401, 'invalid_request', Refusals.TOKEN_IN_QUERY, {
        code: ErrorCodes.OAUTH_TOKEN_IN_QUERY,
      });
    }
    const header = req.headers.authorization;
    const optional = config.auth === 'optional';
    let principal: Principal = ANONYMOUS;
    if (header !== undefined && optional) {
      // Routes that serve anonymous callers (login, user info) treat a bad token as none.
      const token = bearerFromHeader(header);
      const verdict = token ? await verify(req, token) : null;
      if (verdict && !isAuthFailure(verdict)) principal = verdict;
    } else if (header !== undefined) {
      const token = bearerFromHeader(header);
      if (token === null && /^Bearer[ \t]/i.test(header) && header.length > MAX_BEARER_LENGTH) {
        return refuse(req, reply, 401, 'invalid_token', Refusals.HEADER_TOO_LARGE, {
          code: ErrorCodes.OAUTH_TOKEN_TOO_LARGE,
        });
      }
      if (token === null) {
        return refuse(req, reply, 401, 'invalid_request', Refusals.HEADER_MALFORMED);
      }
      const verdict = await verify(req, token);
      if (isAuthFailure(verdict)) {
        if (verdict.reason === 'unavailable') return unavailable(req, reply, verdict);
        return refuse(
          req,
          reply,
          401,
          'invalid_token',
          verdict.description ?? Refusals.BEARER_REFUSED,
          verdict.code ? { code: verdict.code } : {},
        );
      }
      principal = verdict;
    } else {
      principal = fromProxy(req) ?? ANONYMOUS;
    }
    req.principal = principal;
    const anonymous = principal.kind === 'anonymous';
    const mcpRequired = oauth?.requireOnMcp === true && !isApi(req);
    if (anonymous && !optional && (options.required || mcpRequired || config.auth === 'required')) {
      return refuse(req, reply, 401, 'missing', Refusals.AUTH_REQUIRED);
    }
    const roles = config.roles;
    if (roles && roles.length > 0 && !holdsRole(principal, roles)) {
      if (anonymous) {
        return refuse(req, reply, 401, 'missing', Refusals.AUTH_REQUIRED);
      }
      return refuse(req, reply, 403, 'insufficient_scope', rolesMissing(roles), {
        code: ErrorCodes.OAUTH_INSUFFICIENT_SCOPE,
        roles,
      });
    }
    return undefined;
  });
}

function headerText(value: string | string[] | undefined): string | undefined {
  const first = (Array.isArray(value) ? value[0] : value)?.trim();
  return first ? first : undefined;
}
