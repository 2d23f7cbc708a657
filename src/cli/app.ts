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
      await db.close();
    },
  };
}
