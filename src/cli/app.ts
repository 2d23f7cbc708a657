// Composition of everything that serves MCP, shared by the stdio and HTTP front ends.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { createDatabase, type Database } from '../db/database.js';
import { createDispatcher, type Dispatcher } from '../mcp/dispatcher.js';
import { createSigner } from '../core/signed.js';
import { createQueryDatabaseTool } from '../tools/builtin/query-database.js';
import { registerConformanceFixtures } from '../tools/conformance/index.js';
import { createCatalog } from '../catalog/index.js';
import { createAccessPolicy } from '../tools/access-policy.js';
import { registerBuiltins } from '../tools/builtin/index.js';
import { loadRoutineTools } from '../tools/routines/index.js';
import {
  addRegistryHandlers,
  createExchangeLog,
  loadRegistryHandlers,
  type ExchangeLog,
} from '../tools/handlers/index.js';
import { createRegistry, type Registry } from '../tools/registry.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../tools/sql-guard.js';
import { VERSION } from './version.js';

/** How long a catalog snapshot serves before it is reloaded. */
const CATALOG_TTL_MS = 60_000;

export interface App {
  config: Config;
  db: Database;
  registry: Registry;
  dispatcher: Dispatcher;
  /** Aborted when the app shuts down (ends long-lived streams gracefully). */
  shutdown: AbortController;
  close(): Promise<void>;
}

export async function createApp(config: Config, logger: Logger): Promise<App> {
  const db = await createDatabase(
    {
      url: config.database.url,
      poolSize: config.database.poolSize,
      statementTimeoutMs: config.database.statementTimeoutMs,
      embedded: { dataDir: config.embedded.dataDir, demo: config.embedded.demo },
    },
    logger,
  );
  await loadSqlParser();
  const signer = createSigner(config.server.stateSecret);
  const policy = createAccessPolicy(config.database.access);
  const deniedFunctions = [...DEFAULT_DENIED_FUNCTIONS, ...config.database.deniedFunctions];
  const limits = {
    defaultRows: config.database.defaultRows,
    maxRows: config.database.maxRows,
    maxResultBytes: config.database.maxResultBytes,
    statementTimeoutMs: config.database.statementTimeoutMs,
  };
  const catalog = createCatalog(db, policy, { ttlMs: CATALOG_TTL_MS });
  const registry = createRegistry();
  registry.addTool(
    createQueryDatabaseTool(db, {
      limits,
      allowWrites: config.database.allowWrites,
      deniedFunctions,
      policy,
      maxPlanCost: config.database.maxPlanCost,
      maxPlanRows: config.database.maxPlanRows,
      signer,
    }),
  );
  registerBuiltins(registry, {
    db,
    catalog,
    policy,
    limits,
    allowWrites: config.database.allowWrites,
    deniedFunctions,
    showQueryText: config.database.showQueryText,
  });
  await registerRoutines(registry, db, config, logger);
  const exchangeLog = createExchangeLog(db, {
    logArguments: false,
    onError: (error) =>
      logger.warn({ err: { message: error.message } }, 'exchange log write failed'),
  });
  await registerSqlHandlers(registry, db, config, logger, exchangeLog);
  if (config.server.conformance) registerConformanceFixtures(registry);
  const shutdown = new AbortController();
  const dispatcher = createDispatcher({
    registry,
    logger,
    shutdown: shutdown.signal,
    serverInfo: { name: config.server.name ?? db.name, version: VERSION, title: 'pgmcp' },
    instructions: config.server.instructions,
    toolDescriptionSuffix: config.server.toolDescriptionSuffix,
    signer,
  });
  return {
    config,
    db,
    registry,
    dispatcher,
    shutdown,
    async close() {
      shutdown.abort();
      await exchangeLog.close();
      await db.close();
    },
  };
}

/**
 * Functions and procedures annotated `@mcp` become tools. A database that cannot be read at
 * start (down, or a role without catalog access) leaves them out with a warning.
 */
async function registerRoutines(registry: Registry, db: Database, config: Config, logger: Logger) {
  let tools;
  try {
    tools = await loadRoutineTools(db, {
      allowWrites: config.database.allowWrites,
      statementTimeoutMs: config.database.statementTimeoutMs,
      warn: (message) => logger.warn(message),
    });
  } catch (error) {
    logger.warn({ err: { message: (error as Error).message } }, 'annotated routines not loaded');
    return;
  }
  for (const tool of tools) {
    try {
      registry.addTool(tool);
    } catch (error) {
      // A routine whose tool name is already taken (e.g. by a built-in) is left out.
      logger.warn(
        { err: { message: (error as Error).message } },
        'annotated routine not registered',
      );
    }
  }
}

/** Handlers written in SQL (`pgmcp install`, then mcp.create_or_replace_handler). */
async function registerSqlHandlers(
  registry: Registry,
  db: Database,
  config: Config,
  logger: Logger,
  exchangeLog: ExchangeLog,
) {
  try {
    const handlers = await loadRegistryHandlers(db, {
      statementTimeoutMs: config.database.statementTimeoutMs,
      allowWrites: config.database.allowWrites,
      exchangeLog,
    });
    if (!handlers.installed) return;
    addRegistryHandlers(registry, handlers, (what, error) =>
      logger.warn({ err: { message: error.message } }, `registry handler skipped: ${what}`),
    );
  } catch (error) {
    logger.warn({ err: { message: (error as Error).message } }, 'SQL handlers not loaded');
  }
}
