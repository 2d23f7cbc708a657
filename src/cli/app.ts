// Composition of everything that serves MCP, shared by the stdio and HTTP front ends.
// The dispatcher comes first and needs no database; the databases, the driver and the tools
// load after it (app-open.ts), so a stdio client's first request is answered during start-up.
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/index.js';
import { resolveDatabases, type Config, type ResolvedDatabase } from '../config/index.js';
import type { DatabaseDirectory } from '../tools/databases.js';
import type { Database } from '../db/database.js';
import type { HealthReport } from '../http/server.js';
import { databaseNameOf } from '../db/names.js';
import { findAppViews } from '../mcp/apps.js';
import { createDispatcher, type Dispatcher } from '../mcp/dispatcher.js';
import { createTaskService, type TaskService } from '../mcp/tasks/service.js';
import type { Metrics } from '../core/metrics.js';
import { createSigner } from '../core/signed.js';
import { createNonceLedger, type NonceLedger } from '../core/used-nonces.js';
import type { ExchangeLog, ExchangeRecord } from '../tools/handlers/index.js';
import { createRegistry, type Registry } from '../tools/registry.js';
import type { Unreachable } from './start-contact.js';
import { VERSION } from './version.js';

export interface App {
  config: Config;
  /** The default database. */
  db: Database;
  /** The embedded PGlite when one of the databases is it (the state may live beside it). */
  embeddedDb: Database | null;
  /** Every configured database by its configured name (the metrics read their pools). */
  databases: readonly { name: string; db: Database }[];
  /** The databases that could not be reached at start, and why (the start banner names them). */
  unreachable: readonly Unreachable[];
  /** Every configured database, who may use which, and each caller's selection. */
  directory: DatabaseDirectory;
  registry: Registry;
  /** A configured database's cached catalog (the web client's schema browser reads it). */
  catalogOf(database: string): Catalog | undefined;
  dispatcher: Dispatcher;
  /**
   * Where redeemed write-confirmation nonces are recorded: this process until the HTTP side
   * sets a shared record (a state database the instances share).
   */
  nonces: NonceLedger;
  /** Tasks: kept in this process until the HTTP side sets the state database's store. */
  tasks: TaskService;
  /** Aborted when the app shuts down (ends long-lived streams gracefully). */
  shutdown: AbortController;
  /** Aborted when shutdown waits no longer for calls in flight: cancels them. */
  stopCalls: AbortController;
  /** Hear of every answered request (the audit log listens); returns the unsubscribe. */
  onExchange(listener: (record: ExchangeRecord) => void): () => void;
  /**
   * Record a tool call made outside the dispatcher (the chat agent's): it goes to the exchange
   * log and to the `onExchange` listeners exactly as an MCP call does.
   */
  recordExchange(record: ExchangeRecord): void;
  /** Each database's state; ok while at least one answers. */
  health(): Promise<AppHealth>;
  close(): Promise<void>;
}

export interface AppHealth {
  ok: boolean;
  /** The default database's state (the single-database field). */
  database: string;
  databases: NonNullable<HealthReport['databases']>;
}

/** How a front end takes part in start-up (stdio answers its first requests early). */
export interface AppStart {
  /**
   * Called with the dispatcher as soon as it exists: before any database is opened when there is
   * one database, after they are opened when there are several (routing needs them).
   */
  onDispatcher?(dispatcher: Dispatcher): void;
  /**
   * Requests other than initialize, ping, server/discover and logging/setLevel wait for this
   * (the caller resolves it once the app and its own setup, such as the audit, are complete).
   */
  ready?: Promise<unknown>;
  /** Where embedding requests are counted (metrics.enabled). */
  metrics?: Metrics;
}

/** The name a database is served under (serverInfo.name unless server.name says otherwise). */
function servedName(config: Config, entry: ResolvedDatabase): string {
  return config.databases.length > 0 ? entry.name : databaseNameOf(entry.url);
}

export async function createApp(
  config: Config,
  logger: Logger,
  start: AppStart = {},
): Promise<App> {
  const resolved = resolveDatabases(config);
  const several = resolved.length > 1;
  const registry = createRegistry();
  const signer = createSigner(config.server.stateSecret);
  const nonces = createNonceLedger();
  const shutdown = new AbortController();
  const stopCalls = new AbortController();
  // Every call in flight listens on this one signal (shared.ts withContext) and stops listening
  // when it ends: more than Node's default of 10 at once is normal, not a leak.
  setMaxListeners(0, stopCalls.signal);
  // In this process until the HTTP side sets the shared state database's store.
  const tasks = createTaskService({
    maxTtlMs: config.tasks.maxTtlMs,
    maxRunningPerCaller: config.tasks.maxRunningPerCaller,
    maxStoredPerCaller: config.tasks.maxStoredPerCaller,
    heartbeatMs: config.tasks.heartbeatIntervalMs,
    sweepIntervalMs: config.tasks.sweepIntervalMs,
  });
  const exchangeListeners = new Set<(record: ExchangeRecord) => void>();
  let exchangeLog: ExchangeLog | null = null;
  const recordExchange = (record: ExchangeRecord): void => {
    exchangeLog?.record(record);
    for (const listener of exchangeListeners) listener(record);
  };
  // The MCP Apps views, checked once: a checkout without the web build serves none.
  const apps = findAppViews(undefined, logger);
  const dispatcherFor = (name: string, databases?: DatabaseDirectory): Dispatcher =>
    createDispatcher({
      registry,
      logger,
      shutdown: shutdown.signal,
      stopCalls: stopCalls.signal,
      tasks,
      serverInfo: {
        name: config.server.name ?? name,
        version: config.server.version ?? VERSION,
        title: 'pgmcp',
      },
      instructions: config.server.instructions,
      toolDescriptionSuffix: config.server.toolDescriptionSuffix,
      signer,
      filterByAccess: config.auth.filterToolsByRole || config.auth.oauth.filterToolsByRole,
      onExchange: recordExchange,
      apps,
      ...(databases ? { databases } : {}),
      ...(start.ready ? { ready: start.ready } : {}),
    });
  let dispatcher: Dispatcher | null = null;
  if (!several) {
    dispatcher = dispatcherFor(servedName(config, resolved[0]!));
    if (start.onDispatcher) {
      start.onDispatcher(dispatcher);
      // One turn of the event loop before the heavy half loads: loading and evaluating it takes
      // the thread for a while, and a first message already waiting on stdin is answered now.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  const { openDatabases } = await import('./app-open.js');
  const { opened, main, directory, catalogs, watches, closeOpened, ...rest } = await openDatabases(
    config,
    logger,
    resolved,
    registry,
    signer,
    start.metrics,
    nonces,
  );
  exchangeLog = rest.exchangeLog;
  const db = main.db;
  if (dispatcher === null) {
    dispatcher = dispatcherFor(db.name, directory);
    start.onDispatcher?.(dispatcher);
  }
  return {
    config,
    db,
    embeddedDb: opened.find(({ db: d }) => d.kind === 'embedded')?.db ?? null,
    databases: opened.map(({ entry, db: d }) => ({ name: entry.name, db: d })),
    unreachable: rest.unreachable,
    directory,
    registry,
    catalogOf: (name) => catalogs.get(name),
    dispatcher,
    nonces,
    tasks,
    shutdown,
    stopCalls,
    onExchange(listener) {
      exchangeListeners.add(listener);
      return () => exchangeListeners.delete(listener);
    },
    recordExchange,
    async health() {
      const states = await Promise.all(
        opened.map(async ({ entry, db: d }) => {
          const [health, replicas] = await Promise.all([
            d.health().catch(() => ({ ok: false })),
            // Read replicas (only when configured): reads fall back to the primary without one.
            entry.readReplicas.length > 0 ? d.replicaStates().catch(() => []) : [],
          ]);
          return {
            name: entry.name,
            status: health.ok ? 'up' : 'unavailable',
            ...(replicas.length > 0 ? { replicas } : {}),
          };
        }),
      );
      const up = states.filter((s) => s.status === 'up').length;
      return {
        ok: up > 0,
        database:
          states.find((s) => s.name === main.entry.name)?.status === 'up' ? 'up' : 'unreachable',
        databases: states,
      };
    },
    async close() {
      shutdown.abort();
      await tasks.close();
      await Promise.all(watches.map((w) => w.stop()));
      await exchangeLog?.close();
      await closeOpened();
    },
  };
}
