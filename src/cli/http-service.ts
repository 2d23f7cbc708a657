// The HTTP side of pgmcp as `serve --http` runs it — authentication, the audit of tool calls,
// /mcp, /api — over an app that is already open. `pgmcp chat` starts the same thing in-process
// on a loopback port for its local mode, so both talk to exactly one implementation.
import type { Logger } from 'pino';
import { openAuth, type Authenticator } from '../auth/index.js';
import { createAuthorizationServer } from '../auth/oauth/authorization-server.js';
import type { Config } from '../config/index.js';
import { NO_METRICS } from '../core/metrics.js';
import { createHttpOAuth } from '../http/oauth-setup.js';
import { isLoopbackAddress } from '../http/origin.js';
import { createHttpServer, type HttpServer } from '../http/server.js';
import type { TlsMaterial } from '../http/tls.js';
import { defaultWebRoot } from '../http/web-client.js';
import { registerAuthenticateUser } from '../tools/builtin/index.js';
import type { App } from './app.js';
import { auditToolCalls } from './audit-tool-calls.js';
import { openClusterSharing } from './cluster-sharing.js';
import { createUsedNonceStore } from '../state/used-nonce-store.js';
import { shareTasks } from './task-sharing.js';
import { llmDeps } from './llm.js';
import type { PromMetrics } from './metrics.js';
import { appReadiness, type Phase } from './readiness.js';
import { VERSION } from './version.js';

export interface HttpService {
  http: HttpServer;
  auth: Authenticator;
  /** Whether a bearer token is required. */
  required: boolean;
  /** Stops the HTTP server and the state database (not the app). */
  close(): Promise<void>;
}

/** What `serve` adds for operations: the metrics (metrics.enabled) and its phase for /ready. */
export interface ServiceObservability {
  metrics: PromMetrics | null;
  phase(): Phase;
}

export async function openHttpService(
  config: Config,
  app: App,
  logger: Logger,
  tls: TlsMaterial | null = null,
  observability: ServiceObservability = { metrics: null, phase: () => 'serving' },
): Promise<HttpService> {
  const prom = observability.metrics;
  const metrics = prom ?? NO_METRICS;
  const loopback = isLoopbackAddress(config.http.host);
  const required = config.auth.required ?? !loopback;
  // On the embedded default the state lives beside the demo data, on the same connection.
  const auth = await openAuth(config, {
    logger,
    ...(config.state.url === null && app.embeddedDb ? { via: app.embeddedDb } : {}),
  });
  auditToolCalls(app, auth.audit);
  // For clients that speak only MCP: a login session from a username and password.
  registerAuthenticateUser(app.registry, {
    login: (username, password, clientAddress) =>
      auth.sessions.login(username, password, clientAddress),
  });
  const oauthSettings = config.auth.oauth;
  const authorizationServer = oauthSettings.server.enabled
    ? createAuthorizationServer(auth, oauthSettings, { loopbackIssuer: loopback, logger })
    : null;
  try {
    // The first start makes the signing key, so the JWKS is never empty once serving.
    await authorizationServer?.keys.current();
  } catch (error) {
    await auth.close();
    throw error;
  }
  const oauth = createHttpOAuth({
    config,
    local: authorizationServer?.local ?? null,
    resourceName: app.dispatcher.serverInfo.name,
  });
  if (
    oauthSettings.requireAuthorization &&
    oauthSettings.authorizationServers.length === 0 &&
    oauthSettings.introspection.url === null &&
    !oauthSettings.server.enabled
  ) {
    logger.warn(
      'auth.oauth.requireAuthorization is on but no authorization server is configured: only pgmcp tokens can call /mcp',
    );
  }
  const sessionSharing = await openClusterSharing(config, auth, logger).catch(
    async (error: unknown) => {
      await auth.close();
      throw error;
    },
  );
  // Where sessions are shared, so is the record of redeemed write-confirmation nonces.
  if (sessionSharing) app.nonces.shared = createUsedNonceStore(auth.db);
  shareTasks(app, auth.db, sessionSharing?.bus ?? null);
  const http = createHttpServer({
    options: { ...config.http },
    dispatcher: app.dispatcher,
    logger,
    auth: {
      required,
      verifier: auth,
      streamRecheckMs: config.auth.cacheTtlMs,
      trustedProxies: config.auth.trustedProxies,
      proxyHeaders: config.auth.proxyHeaders,
      oauth,
    },
    api: {
      auth,
      databases: app.directory,
      registry: app.registry,
      catalogOf: app.catalogOf,
      version: VERSION,
      llm: llmDeps(config, app, logger, process.env, auth, metrics),
    },
    ...(authorizationServer
      ? {
          oauthServer: {
            server: authorizationServer,
            auth,
            scopesSupported: oauthSettings.scopesSupported,
          },
        }
      : {}),
    health: () => app.health(),
    readiness: appReadiness(app.db, auth.db, observability.phase),
    draining: () => observability.phase() === 'draining',
    metrics,
    // On the main port only when it has no address of its own (metrics.listen).
    ...(prom && config.metrics.listen === null
      ? {
          metricsRoute: { exposition: prom, allowAnonymous: config.metrics.allowAnonymous },
        }
      : {}),
    edge: { corsOrigins: config.http.cors.origins, rateLimit: config.rateLimit, tls },
    web: { root: defaultWebRoot() },
    sessionSharing,
  });
  return {
    http,
    auth,
    required,
    async close() {
      await http.close();
      await auth.close();
    },
  };
}

/** Every tool call goes to the audit log with who made it, where, how long and how it ended. */
