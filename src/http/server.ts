// Fastify composition of the HTTP side: Host/Origin checks, the MCP endpoint (and its
// /v1 alias), /health, the probes (/live, /ready) and /metrics. Bodies are taken as text so
// bad JSON gets a JSON-RPC answer.
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { clientError, HTTP_REFUSALS } from '../core/error-table.js';
import { NO_METRICS, type Metrics } from '../core/metrics.js';
import type { Dispatcher } from '../mcp/dispatcher.js';
import { registerApiRoutes, type ApiDeps } from '../api/index.js';
import { registerAuthentication, type HttpAuthOptions } from './authenticate.js';
import { NO_EDGE, registerEdge, type EdgeOptions } from './edge.js';
import { registerHeaderGuard } from './header-guard.js';
import { registerTracing } from './trace.js';
import { registerMcpRoutes } from './mcp-route.js';
import { METRICS_PATH, registerMetricsRoute, type MetricsExposition } from './metrics-route.js';
import { registerObservation, requestIdGenerator } from './observe.js';
import { readinessOf, registerProbes, type Readiness } from './probes.js';
import { createTrustedPeers } from './trusted-peers.js';
import { registerOAuthServer, type OAuthServerRoutes } from './oauth-server/index.js';
import { createOriginPolicy } from './origin.js';
import { refuse } from './refuse.js';
import { registerDrain, type Drain } from './drain.js';
import { sendJson } from './replies.js';
import { createSessionStore, type SessionStore, type SessionStoreOptions } from './sessions.js';
import { createStreamWatch } from './stream-watch.js';
import { httpsOptions } from './tls.js';
import { registerWebClient } from './web-client.js';

export interface HttpOptions {
  host: string;
  port: number;
  path: string;
  allowedOrigins: readonly string[];
  allowedHosts: readonly string[];
  bodyLimitBytes: number;
  sessionIdleTimeoutMs: number;
  eventStoreSize: number;
  keepAliveMs: number;
  /** How long a client has to send a whole request, headers and body (default 30000). */
  requestTimeoutMs?: number;
  /** Open connections at most; past it a new one is closed at once (default 1024). */
  maxConnections?: number;
}

export interface HealthReport {
  ok: boolean;
  database: string;
  /** Each configured database's state (up or unavailable). */
  databases?: {
    name: string;
    status: string;
    /** Its read replicas (when it has some): usable or not, and why. */
    replicas?: { replica: string; usable: boolean; reason: string }[];
  }[];
}

export interface HttpServerDeps {
  options: HttpOptions;
  dispatcher: Dispatcher;
  logger: Logger;
  /** Who may call; absent: everyone is anonymous and nothing requires authentication. */
  auth?: Omit<HttpAuthOptions, 'mcpPaths' | 'logger'>;
  /** The REST API under /api (absent: no /api routes). */
  api?: Omit<ApiDeps, 'logger' | 'clientAddress' | 'signInRequired' | 'metrics'>;
  health(): Promise<HealthReport>;
  /** The built-in OAuth authorization server (auth.oauth.server.enabled); needs auth.oauth. */
  oauthServer?: Omit<OAuthServerRoutes, 'discovery'>;
  /** TLS, CORS, /api security headers, rate limits (edge.ts); all off when absent. */
  edge?: EdgeOptions;
  /** The web client at / (web-client.ts): the directory of its build; absent: no web client. */
  web?: { root: string };
  /** Counts requests, refusals and sessions; absent: nothing is counted. */
  metrics?: Metrics;
  /** GET /metrics on this port (absent: not served here; see metrics-route.ts). */
  metricsRoute?: { exposition: MetricsExposition; allowAnonymous: boolean };
  /** What /ready checks besides Redis (absent: ready whenever the server answers). */
  readiness?(): Promise<Readiness>;
  /** Told to stop and draining (http.drainMs), before new requests are refused: /health says so. */
  draining?(): boolean;
  /** Legacy MCP sessions shared with the other instances (sessions.ts); absent: this process's. */
  sessionSharing?: SessionStoreOptions['sharing'];
}

export interface HttpServer {
  readonly app: FastifyInstance;
  readonly sessions: SessionStore;
  /** What /ready answers now. */
  readiness(): Promise<Readiness>;
  /** Start listening; resolves with the bound address (port 0 picks a free port). */
  listen(): Promise<{ host: string; port: number; url: string }>;
  /** Shutdown's first step: refuse new requests, wait for those in flight (drain.ts). */
  readonly drain: Drain;
  close(): Promise<void>;
}

export function createHttpServer(deps: HttpServerDeps): HttpServer {
  const { options, dispatcher, logger } = deps;
  const edge = deps.edge ?? NO_EDGE;
  const metrics = deps.metrics ?? NO_METRICS;
  const limits = connectionLimits(options);
  const tls = httpsOptions(edge.tls); // edge: HTTPS when --tls-cert/--tls-key are given
  const app = Fastify({
    ...('https' in tls ? { https: { ...tls.https, ...limits } } : { http: limits }),
    requestTimeout: limits.requestTimeout,
    logger: false,
    bodyLimit: options.bodyLimitBytes,
    forceCloseConnections: true,
    return503OnClosing: true,
    genReqId: requestIdGenerator(createTrustedPeers(deps.auth?.trustedProxies ?? [])),
  });
  app.server.maxConnections = options.maxConnections ?? 1024;
  // First, so it applies to every route and plugin below.
  registerHeaderGuard(app);
  registerTracing(app);
  const paths = [options.path, `${options.path.replace(/\/$/, '')}/v1`];
  registerObservation(app, { mcpPaths: paths, metrics });
  const sessions = createSessionStore({
    idleTimeoutMs: options.sessionIdleTimeoutMs,
    eventStoreSize: options.eventStoreSize,
    keepAliveMs: options.keepAliveMs,
    logger,
    sharing: deps.sessionSharing ?? null,
  });
  const unbind = dispatcher.bindSessions(() => sessions.all());
  const drain = registerDrain(app, { sessions, mcpPaths: paths, logger });
  // Open streams lose their credential's lapse (revoked, expired, disabled) on every instance.
  const verifier = deps.auth?.verifier ?? null;
  const streamWatch = createStreamWatch({
    intervalMs: deps.auth?.streamRecheckMs ?? 5_000,
    recheck: verifier?.lapsedBearers
      ? { lapsedBearers: (hashes) => verifier.lapsedBearers!(hashes) }
      : null,
    oauthClockSkewSeconds: deps.auth?.oauth?.clockSkewSeconds ?? 0,
    introspection: deps.auth?.oauth?.server.introspection ?? null,
    logger,
  });
  const policy = createOriginPolicy({
    bindHost: options.host,
    allowedHosts: options.allowedHosts,
    allowedOrigins: options.allowedOrigins,
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json'], { parseAs: 'string' }, (_req, body, done) =>
    done(null, body),
  );

  // A callback hook (no promise per request); a refusal answers without calling done().
  app.addHook('onRequest', (req, reply, done) => {
    // The routed path, not the raw URL: /%6Dcp routes to /mcp and must meet the same check.
    const path = req.routeOptions.url ?? '';
    if (!paths.includes(path) && !path.startsWith('/api/')) return done();
    const origin = req.headers.origin;
    const problem = policy.check(req.headers.host, Array.isArray(origin) ? origin[0] : origin);
    if (problem) {
      logger.warn({ host: req.headers.host, origin }, 'request refused by the Host/Origin policy');
      refuse(req, reply, HTTP_REFUSALS.ORIGIN, `Forbidden: ${problem}`);
      return;
    }
    done();
  });

  // RFC 9728 metadata: public, outside the guarded paths, so no hook refuses or limits it.
  const discovery = deps.auth?.oauth?.discovery ?? null;
  discovery?.register(app);
  if (discovery && deps.oauthServer) registerOAuthServer(app, { ...deps.oauthServer, discovery });

  registerAuthentication(app, {
    required: false,
    verifier: null,
    trustedProxies: [],
    proxyHeaders: { userId: 'x-user-id', tenantId: 'x-tenant-id', roles: null },
    ...deps.auth,
    mcpPaths: paths,
    guardedPaths: deps.metricsRoute ? [METRICS_PATH] : [],
    metrics,
    logger,
  });

  // What escapes a route outside /api (whose scope has its own handler, api/errors.ts).
  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) {
      const message = `Request body larger than ${options.bodyLimitBytes} bytes.`;
      return refuse(req, reply, HTTP_REFUSALS.BODY_TOO_LARGE, message);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || error.statusCode === 415) {
      const message = 'Unsupported Media Type: send Content-Type: application/json.';
      return refuse(req, reply, HTTP_REFUSALS.MEDIA_TYPE, message);
    }
    if (error.statusCode !== undefined && error.statusCode < 500) {
      return refuse(req, reply, clientError(error.statusCode), error.message);
    }
    logger.error({ err: error }, 'http request failed');
    return refuse(req, reply, HTTP_REFUSALS.INTERNAL, 'Internal error; see the server log.');
  });

  // edge: CORS, /api security headers and rate limits; before the routes they apply to.
  const { redisUp } = registerEdge(app, { ...edge, mcpPaths: paths, policy, logger, metrics });
  if (deps.api) {
    registerApiRoutes(app, {
      ...deps.api,
      logger,
      clientAddress: (req) => req.ip,
      metrics,
      // The same flag the authentication hook refuses anonymous /api callers by.
      signInRequired: deps.auth?.required ?? false,
    });
  }

  registerMcpRoutes(app, {
    paths,
    dispatcher,
    sessions,
    logger,
    keepAliveMs: options.keepAliveMs,
    discovery,
    streamWatch,
  });

  app.get('/health', async (_req, reply) => {
    const report = await deps
      .health()
      .catch((): HealthReport => ({ ok: false, database: 'unreachable' }));
    const draining = drain.draining || deps.draining?.() === true;
    const ok = report.ok && !draining;
    return sendJson(reply, ok ? 200 : 503, {
      status: draining ? 'draining' : report.ok ? 'ok' : 'unavailable',
      server: dispatcher.serverInfo.name,
      version: dispatcher.serverInfo.version,
      database: report.database,
      ...(report.databases ? { databases: report.databases } : {}),
    });
  });

  const probes = {
    readiness: deps.readiness ?? (async (): Promise<Readiness> => ({ reason: null, checks: {} })),
    redisUp,
  };
  registerProbes(app, probes);
  if (deps.metricsRoute) registerMetricsRoute(app, { ...deps.metricsRoute, logger });

  if (deps.web) registerWebClient(app, { root: deps.web.root, reservedPaths: paths, logger });

  return {
    app,
    sessions,
    readiness: () => readinessOf(probes),
    drain,
    async listen() {
      await app.listen({ host: options.host, port: options.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : options.port;
      const shownHost = options.host.includes(':') ? `[${options.host}]` : options.host;
      const scheme = edge.tls ? 'https' : 'http'; // edge: TLS
      return { host: options.host, port, url: `${scheme}://${shownHost}:${port}${options.path}` };
    },
    async close() {
      unbind();
      streamWatch.close();
      // Streams end first (synchronously); the cluster listener closes beside the server.
      const sessionsClosed = sessions.close();
      await app.close();
      await sessionsClosed;
    },
  };
}

/**
 * Slow clients are bounded: a request's headers and body must arrive within requestTimeoutMs
 * (Node answers 408 and closes the connection), checked often enough for the bound to hold
 * (Node checks every 30 s by default). Fastify alone would turn the request timeout off.
 */
function connectionLimits(options: HttpOptions): {
  requestTimeout: number;
  headersTimeout: number;
  connectionsCheckingInterval: number;
} {
  const timeout = options.requestTimeoutMs ?? 30_000;
  return {
    requestTimeout: timeout,
    headersTimeout: timeout,
    connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(timeout / 4))),
  };
}
