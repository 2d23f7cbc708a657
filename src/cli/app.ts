// Composition of everything that serves MCP, shared by the stdio and HTTP front ends.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { createDatabase, type Database } from '../db/database.js';
import type { ContextExtender } from '../mcp/call-context.js';
import { createDispatcher, type Dispatcher } from '../mcp/dispatcher.js';
import { createSigner } from '../core/signed.js';
import { createCatalog } from '../catalog/index.js';
import { createAccessPolicy } from '../tools/access-policy.js';
import { registerBuiltins } from '../tools/builtin/index.js';
import { createEmbeddingProviders } from '../embeddings/index.js';
import { startCatalogWatch } from '../catalog/watch.js';
import { configError } from '../config/index.js';
import { createExchangeLog, type ExchangeRecord } from '../tools/handlers/index.js';
import { createLiveCatalog, nameClashError } from '../tools/live-catalog.js';
import { createRegistry, type Registry } from '../tools/registry.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../tools/sql-guard.js';
import { VERSION } from './version.js';

/** The state database's schema (auth/); denied to every tool. */
const STATE_SCHEMA = 'pgmcp';

/** How long a catalog snapshot serves before it is reloaded. */
const CATALOG_TTL_MS = 60_000;

export interface App {
  config: Config;
  db: Database;
  registry: Registry;
  dispatcher: Dispatcher;
  /** Aborted when the app shuts down (ends long-lived streams gracefully). */
  shutdown: AbortController;
  /** Hear of every answered request (the audit log listens); returns the unsubscribe. */
  onExchange(listener: (record: ExchangeRecord) => void): () => void;
  close(): Promise<void>;
}

/**
 * What a test composition adds to the app (the conformance fixture server,
 * test/conformance/serve.ts). pgmcp itself never passes one.
 */
export interface AppExtension {
  /** Registers more tools, resources and prompts, after the built-ins and the routines. */
  register?(registry: Registry): void;
  /** Adds to the CallContext of every call (see ContextInput.extend in mcp/call-context.ts). */
  extendContext?: ContextExtender;
}

export async function createApp(
  config: Config,
  logger: Logger,
  extension?: AppExtension,
): Promise<App> {
  const db = await createDatabase(
    {
      url: config.database.url,
      poolSize: config.database.poolSize,
      embedded: { dataDir: config.embedded.dataDir, demo: config.embedded.demo },
      role: config.database.role,
    },
    logger,
  );
  await loadSqlParser();
  const signer = createSigner(config.server.stateSecret);
  // Where the state schema (tokens, users, sessions, audit) shares the served database (the
  // embedded default keeps it beside the demo data), it is never served: its password hashes
  // are nobody's business. (An active policy also hides the planner statistics, which hold
  // sample values of every column.)
  const stateServed =
    config.state.url === null
      ? config.database.url === null
      : config.state.url === config.database.url;
  const policy = createAccessPolicy({
    ...config.database.access,
    denySchemas: stateServed
      ? [...new Set([...config.database.access.denySchemas, STATE_SCHEMA])]
      : config.database.access.denySchemas,
  });
  const deniedFunctions = [...DEFAULT_DENIED_FUNCTIONS, ...config.database.deniedFunctions];
  const limits = {
    defaultRows: config.database.defaultRows,
    maxRows: config.database.maxRows,
    maxResultBytes: config.database.maxResultBytes,
    statementTimeoutMs: config.database.statementTimeoutMs,
  };
  const catalog = createCatalog(db, policy, { ttlMs: CATALOG_TTL_MS });
  const registry = createRegistry();
  registerBuiltins(registry, {
    db,
    catalog,
    policy,
    limits,
    allowWrites: config.database.allowWrites,
    deniedFunctions,
    showQueryText: config.database.showQueryText,
    queryDatabase: {
      maxPlanCost: config.database.maxPlanCost,
      maxPlanRows: config.database.maxPlanRows,
      signer,
    },
    toolRoles: Object.fromEntries(
      Object.entries(config.tools).map(([name, settings]) => [name, settings.roles]),
    ),
    embeddings: createEmbeddingProviders(config.embeddings),
  });
  for (const name of Object.keys(config.tools)) {
    if (!registry.tool(name)) {
      await db.close();
      throw configError(
        `tools.${name}: no built-in tool by that name (built-ins: ${registry
          .tools()
          .map((t) => t.name)
          .join(', ')}; routines use @authorize, registry handlers requiresAuth)`,
        `tools.${name}`,
      );
    }
  }
  // Routines and registry handlers: loaded now, and again whenever the database says they
  // changed (NOTIFY from an event trigger, or a TTL poll where none can be installed).
  const live = createLiveCatalog({
    db,
    registry,
    catalog,
    logger,
    routines: {
      allowWrites: config.database.allowWrites,
      statementTimeoutMs: config.database.statementTimeoutMs,
      maxRows: config.database.maxRows,
      maxResultBytes: config.database.maxResultBytes,
      ...(config.database.routineSchemas.length > 0
        ? { schemas: config.database.routineSchemas }
        : {}),
    },
    handlers: {
      statementTimeoutMs: config.database.statementTimeoutMs,
      allowWrites: config.database.allowWrites,
    },
  });
  const first = await live.reload('start');
  if (first.clashes.length > 0) {
    await db.close();
    throw nameClashError(first.clashes);
  }
  // Every answered request goes to mcp.exchange, from the dispatcher (so registry handlers do
  // not log their own calls): only where the registry schema exists to hold it.
  const exchangeLog =
    config.database.exchangeLog.enabled && (await registryInstalled(db))
      ? createExchangeLog(db, {
          logArguments: config.database.exchangeLog.logArguments,
          onError: (error) =>
            logger.warn({ err: { message: error.message } }, 'exchange log write failed'),
        })
      : null;
  const watch = startCatalogWatch({
    db,
    logger,
    ttlMs: CATALOG_TTL_MS,
    // Serving never changes the database: the trigger is installed by `pgmcp install`.
    installTrigger: false,
    onChange: (reason) => live.reload(reason).then(() => undefined),
  });
  extension?.register?.(registry);
  const shutdown = new AbortController();
  const exchangeListeners = new Set<(record: ExchangeRecord) => void>();
  const dispatcher = createDispatcher({
    registry,
    logger,
    shutdown: shutdown.signal,
    serverInfo: { name: config.server.name ?? db.name, version: VERSION, title: 'pgmcp' },
    instructions: config.server.instructions,
    toolDescriptionSuffix: config.server.toolDescriptionSuffix,
    signer,
    filterByAccess: config.auth.filterToolsByRole,
    onExchange: (record) => {
      exchangeLog?.record(record);
      for (const listener of exchangeListeners) listener(record);
    },
    extendContext: extension?.extendContext,
  });
  return {
    config,
    db,
    registry,
    dispatcher,
    shutdown,
    onExchange(listener) {
      exchangeListeners.add(listener);
      return () => exchangeListeners.delete(listener);
    },
    async close() {
      shutdown.abort();
      await watch.stop();
      await exchangeLog?.close();
      await db.close();
    },
  };
}

/** Whether the SQL handler registry (schema mcp, with its exchange table) is installed. */
async function registryInstalled(db: Database): Promise<boolean> {
  try {
    const { rows } = await db.withOwnConnection((client) =>
      client.query<{ ok: boolean }>("SELECT to_regclass('mcp.exchange') IS NOT NULL AS ok"),
    );
    return rows[0]?.ok === true;
  } catch {
    return false;
  }
}
