// `pgmcp serve`: stdio for desktop clients, Streamable HTTP for teams.
import { isatty } from 'node:tty';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { redactConfig } from '../config/index.js';
import { listenProblem, probeListen } from '../http/listen-probe.js';
import { isLoopbackAddress } from '../http/origin.js';
import { startStdioServer, type StdioServer } from '../mcp/stdio.js';
import type { Authenticator } from '../auth/index.js';
import { configError, resolveDatabases } from '../config/index.js';
import type { Principal } from '../core/principal.js';
import type { Database } from '../db/database.js';
import type { Dispatcher } from '../mcp/dispatcher.js';
import { createApp, type App } from './app.js';
import { drainHttp } from './drain-http.js';
import { auditToolCalls } from './audit-tool-calls.js';
import type { HttpService } from './http-service.js';
import type { MetricsService } from './metrics-serve.js';
import type { Phase } from './readiness.js';
import { createLogger, finishLogging } from './logger.js';
import { checkOneOfSeveral } from './one-of-several.js';
import { unreachableLines } from './start-contact.js';
import { startTracing } from './telemetry.js';
import { VERSION } from './version.js';

export async function printConfig(config: Config): Promise<void> {
  const { default: YAML } = await import('yaml');
  process.stdout.write(YAML.stringify(redactConfig(config)));
}

/**
 * What a composition of `serve` adds, through the same parts pgmcp's own features use:
 * `attach` is given the open app before any call is served, to register tools, resources and
 * prompts into `app.registry` (as authenticate_user is, http-service.ts) or listen with
 * `app.onExchange` (as the audit does); `dispatcher` wraps the dispatcher the transport is
 * given, stdio's and HTTP's alike. `pgmcp serve` adds nothing.
 */
export interface ServeComposition {
  attach?(app: App): void;
  dispatcher?(dispatcher: Dispatcher): Dispatcher;
}

export async function serve(
  config: Config,
  composition: ServeComposition = {},
  /** Reads the configuration again (SIGHUP); absent: SIGHUP is ignored. */
  reread?: () => Promise<Config>,
): Promise<void> {
  const logger = createLogger(config.log.level);
  // Before anything that makes spans; nothing of the SDK loads when tracing is off.
  const tracing = await startTracing(config.telemetry, logger);
  const served = (dispatcher: Dispatcher): Dispatcher =>
    composition.dispatcher ? composition.dispatcher(dispatcher) : dispatcher;
  // The HTTP stack, the state database's code and the AI SDK load only for HTTP: a stdio server
  // (spawned per session by desktop clients, which wait for its first answer) never needs them.
  const web =
    config.transport === 'http'
      ? await Promise.all([import('./http-service.js'), import('../http/tls.js')])
      : null;
  // Read before the database starts, so a bad certificate path fails fast (exit 2).
  const tls = web ? web[1].loadTlsMaterial(config.http.tls) : null;
  // Likewise an address that cannot be bound (a port in use).
  if (web) await ensureListenable(config.http.host, config.http.port);
  // stdio: the server reads and answers initialize and server/discover while the databases open
  // (clients give the first answer a second or less); every other request waits for `ready`.
  let stdio: StdioServer | null = null;
  let markReady = (): void => undefined;
  let markFailed = (_error: unknown): void => undefined;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    markFailed = reject;
  });
  ready.catch(() => undefined); // a failed start exits the process; no request need hear of it
  const principal = stdioPrincipal(config);
  // /ready: starting until the server has said where it serves, draining once told to stop.
  let phase: Phase = 'starting';
  const prom =
    web && config.metrics.enabled ? (await import('./metrics.js')).createPromMetrics() : null;
  let app: Awaited<ReturnType<typeof createApp>>;
  try {
    app = await createApp(
      config,
      logger,
      config.transport === 'stdio'
        ? {
            ready,
            onDispatcher: (dispatcher) => {
              stdio = startStdioServer({
                dispatcher: served(dispatcher),
                input: process.stdin,
                output: process.stdout,
                logger,
                principal,
              });
            },
          }
        : prom
          ? { metrics: prom }
          : {},
    );
  } catch (error) {
    markFailed(error);
    throw error;
  }
  composition.attach?.(app);
  let stopping = false;
  const stop = async (code: number, why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ why }, 'shutting down');
    let exitCode = code;
    if (phase === 'serving') {
      // /ready answers 503 from now on; with http.drainMs requests are still served that long,
      // so load balancers move away first. Then new requests are refused (http/drain.ts).
      phase = 'draining';
      if (config.http.drainMs > 0) {
        logger.info({ drainMs: config.http.drainMs }, 'draining');
        await new Promise((resolve) => setTimeout(resolve, config.http.drainMs));
      }
    }
    try {
      await drain();
      await Promise.race([
        closeAll().finally(() => tracing?.shutdown()),
        new Promise((r) => setTimeout(r, 5_000).unref()),
      ]);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      exitCode = 1;
    } finally {
      await finishLogging(logger);
      process.exit(exitCode);
    }
  };
  let closeAll = async (): Promise<void> => app.close();
  // stdio: nothing to drain; the calls under way are cancelled as the process goes.
  let drain = async (): Promise<void> => undefined;
  process.on('SIGINT', () => void stop(0, 'SIGINT'));
  process.on('SIGTERM', () => void stop(0, 'SIGTERM'));
  // SIGHUP reloads what may change live (cli/reload.ts); until the server runs it is ignored.
  let setTls: ((material: { cert: Buffer; key: Buffer }) => void) | undefined;
  let inForce = config;
  // The URLs the databases were opened with (their password files as read then).
  const databaseUrls = new Map<string, string | null>();
  const replicaUrls = new Map<string, readonly string[]>();
  try {
    for (const d of resolveDatabases(config)) {
      databaseUrls.set(d.name, d.url);
      replicaUrls.set(d.name, d.readReplicas);
    }
  } catch {
    // opening the app resolved them already; a reload then compares with nothing and refuses
  }
  let reloading = Promise.resolve();
  // In a terminal, SIGHUP is the terminal closing: pgmcp stops as on SIGTERM. A SIGHUP sent while
  // the terminal is still there (or with none: a service) reloads.
  const terminals = [0, 1, 2].filter((fd) => isatty(fd));
  process.on('SIGHUP', () => {
    if (terminals.length > 0 && terminals.every((fd) => !isatty(fd)))
      return void stop(0, 'SIGHUP: the terminal closed');
    if (!reread || stopping) return;
    reloading = reloading.then(async () => {
      const { reloadConfig } = await import('./reload.js');
      inForce = await reloadConfig({
        current: inForce,
        read: reread,
        logger,
        setTls,
        setPassword: (name, password) =>
          app.databases.find((d) => d.name === name)?.db.setPassword(password) ?? false,
        urls: databaseUrls,
        setReplicaPassword: (name, index, password) =>
          app.databases.find((d) => d.name === name)?.db.setReplicaPassword(index, password) ??
          false,
        replicaUrls,
      });
    });
  });
  process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled rejection'));

  if (config.transport === 'stdio') {
    if (principal.pgRole) {
      const missing = await notMemberOf(app.db, [principal.pgRole]);
      if (missing.length > 0) {
        await app.close();
        const error = configError(
          `auth.stdio.pgRole: the login role is not a member of ${missing[0]}, so its calls cannot SET ROLE to it (GRANT ${missing[0]} TO <login role>)`,
          'auth.stdio.pgRole',
        );
        markFailed(error);
        throw error;
      }
    }
    // stdio opens no state database: tool calls are audited to audit.file when there is one.
    // Before `ready`, so no call goes unaudited.
    if (config.audit.file !== null) {
      const { createAuditLog } = await import('../state/index.js');
      const audit = createAuditLog({
        db: null,
        file: config.audit.file,
        onError: (error) =>
          logger.warn({ err: { message: error.message } }, 'audit file write failed'),
      });
      auditToolCalls(app, audit);
      closeAll = async () => {
        await audit.close();
        await app.close();
      };
    }
    const server = stdio!;
    // list_changed and resources/updated reach the stdio client as they do HTTP sessions.
    app.dispatcher.bindSessions(() => [server.session]);
    logger.info(
      { database: app.db.name, writes: config.database.allowWrites },
      `pgmcp ${VERSION} serving MCP on stdio`,
    );
    markReady();
    void server.closed.then(() => stop(0, 'stdin closed'));
    return;
  }

  let service: HttpService;
  try {
    const dispatcher = served(app.dispatcher);
    service = await web![0].openHttpService(
      config,
      dispatcher === app.dispatcher ? app : { ...app, dispatcher },
      logger,
      tls,
      { metrics: prom, phase: () => phase },
    );
  } catch (error) {
    await app.close();
    throw error;
  }
  const { http, auth, required } = service;
  try {
    checkOneOfSeveral(config, auth, logger);
  } catch (error) {
    await service.close();
    await app.close();
    throw error;
  }
  let metricsService: MetricsService | null = null;
  const server = http.app.server as { setSecureContext?: (options: object) => void };
  if (tls && server.setSecureContext) {
    setTls = (material) => server.setSecureContext!({ cert: material.cert, key: material.key });
  }
  if (!required && !isLoopbackAddress(config.http.host)) {
    logger.warn(
      { host: config.http.host },
      'authentication is OFF (--no-auth) on a non-loopback address: anyone who can reach this server can use it',
    );
  }
  closeAll = async () => {
    app.shutdown.abort();
    await metricsService?.close();
    // Tasks record their end in the state database, so they stop (before the calls, so they end
    // "the server shut down") and are recorded before it closes, last.
    const tasksClosed = app.tasks.close();
    app.stopCalls.abort();
    await tasksClosed;
    await http.close();
    await app.close();
    await auth.close();
  };
  drain = () => drainHttp(http.drain, app, config.server.shutdownTimeoutMs, logger);
  const { url } = await http.listen().catch(async (error: unknown) => {
    // Bound by another process since the check above.
    const problem = listenProblem(error, config.http.host, config.http.port);
    if (problem === null) throw error;
    await closeAll().catch(() => undefined);
    throw configError(problem, 'http');
  });
  if (prom) {
    const { serveMetrics } = await import('./metrics-serve.js');
    metricsService = await serveMetrics(config, app, http, prom, logger).catch(async (error) => {
      await closeAll().catch(() => undefined);
      throw error;
    });
  }
  if (!isLoopbackAddress(config.http.host) && config.http.allowedHosts.length === 0) {
    // Without an allow-list any Host passes, and a browser page on another name could reach
    // this server through DNS rebinding.
    logger.warn(
      { host: config.http.host },
      'serving on a non-loopback address with no http.allowedHosts: set the names clients use to reach this server',
    );
  }
  const credentials = await checkCredentials(app.db, auth, logger);
  const mode = config.database.allowWrites ? 'writes allowed' : 'read-only';
  // With authentication required, a configuration without the header would only get 401s.
  const entry = required
    ? { type: 'http', url, headers: { Authorization: 'Bearer <token>' } }
    : { type: 'http', url };
  const clientConfig = { mcpServers: { [app.dispatcher.serverInfo.name]: entry } };
  process.stdout.write(
    [
      `pgmcp ${VERSION} serving MCP at ${url}`,
      `database: ${app.db.name} (${app.db.kind}, ${mode})`,
      ...unreachableLines(app.unreachable),
      '',
      `authentication: ${required ? 'required (bearer token)' : 'off (loopback only)'}`,
      '',
      required
        ? 'Client configuration (paste into your MCP client, with a token in place of <token>):'
        : 'Client configuration (paste into your MCP client):',
      JSON.stringify(clientConfig, null, 2),
      '',
      ...(required && credentials === 0
        ? [
            'No API token or user exists yet. Create the first token with:',
            `  pgmcp token create --name admin --role admin${config.embedded.dataDir ? ` --data-dir ${config.embedded.dataDir}` : ''}`,
            'and send it as "Authorization: Bearer <token>".',
            '',
          ]
        : []),
      ...(metricsService?.url ? [`metrics: ${metricsService.url}`, ''] : []),
    ].join('\n'),
  );
  phase = 'serving';
}

/**
 * SIGTERM's first step on HTTP: readiness false and new requests refused (http/drain.ts), the
 * subscription streams ended, the calls in flight given `timeoutMs` to finish; those still
 * running then are cancelled (in PostgreSQL too) and given a moment to answer so.
 */

/** Fails with a message that says what to do when the HTTP address cannot be bound. */
async function ensureListenable(host: string, port: number): Promise<void> {
  const error = await probeListen(host, port);
  if (error === null) return;
  throw configError(
    listenProblem(error, host, port) ?? `http: cannot listen on ${host}:${port}: ${error.message}`,
    'http',
  );
}

/** stdio: the caller is the local user who started pgmcp (auth.stdio / PGMCP_USER_ID …). */
export function stdioPrincipal(config: Config): Principal {
  const { userId, tenantId, roles, pgRole } = config.auth.stdio;
  if (userId === null) {
    return { kind: 'anonymous', userId: null, tenantId, roles, scopes: [], claims: {}, pgRole };
  }
  return { kind: 'local', userId, tenantId, roles, scopes: [], claims: {}, pgRole };
}

/** The roles the login role cannot SET ROLE to. */
async function notMemberOf(db: Database, roles: readonly string[]): Promise<string[]> {
  if (roles.length === 0) return [];
  const { rows } = await db.withOwnConnection((client) =>
    client.query<{ role: string }>(
      `SELECT r AS role FROM unnest($1::text[]) AS r
       WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r)
          OR NOT pg_catalog.pg_has_role(current_user, r, 'MEMBER')`,
      [roles],
    ),
  );
  return rows.map((row) => row.role);
}

/**
 * At start, one read of the stored tokens and users: warns about PostgreSQL roles the login
 * role cannot take, and returns how many credentials exist (for the first-token hint; -1 when
 * they could not be read).
 */
async function checkCredentials(
  db: Database,
  auth: Authenticator,
  logger: Logger,
): Promise<number> {
  try {
    const [tokens, users] = await Promise.all([
      auth.tokens.list({ activeOnly: true }),
      auth.users.list(),
    ]);
    const wanted = new Set<string>();
    for (const t of tokens) if (t.pgRole) wanted.add(t.pgRole);
    for (const u of users) if (u.pgRole) wanted.add(u.pgRole);
    const missing = await notMemberOf(db, [...wanted]);
    if (missing.length > 0) {
      logger.warn(
        { roles: missing },
        'some tokens or users name PostgreSQL roles the login role is not a member of: their calls will fail until it is granted them (GRANT role TO login_role)',
      );
    }
    return tokens.length + users.length;
  } catch (error) {
    logger.warn(
      { err: { message: (error as Error).message } },
      'could not read stored credentials',
    );
    return -1;
  }
}
