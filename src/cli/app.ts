// Composition of everything that serves MCP, shared by the stdio and HTTP front ends.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { createDatabase, type Database } from '../db/database.js';
import { createDispatcher, type Dispatcher } from '../mcp/dispatcher.js';
import { createSigner } from '../core/signed.js';
import { createQueryDatabaseTool } from '../tools/builtin/query-database.js';
import { registerConformanceFixtures } from '../tools/conformance/index.js';
import { createRegistry, type Registry } from '../tools/registry.js';
import { VERSION } from './version.js';

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
  const registry = createRegistry();
  registry.addTool(
    createQueryDatabaseTool(
      db,
      {
        defaultRows: config.database.defaultRows,
        maxRows: config.database.maxRows,
        maxResultBytes: config.database.maxResultBytes,
        statementTimeoutMs: config.database.statementTimeoutMs,
      },
      config.database.allowWrites,
    ),
  );
  if (config.server.conformance) registerConformanceFixtures(registry);
  const shutdown = new AbortController();
  const dispatcher = createDispatcher({
    registry,
    logger,
    shutdown: shutdown.signal,
    serverInfo: { name: config.server.name ?? db.name, version: VERSION, title: 'pgmcp' },
    instructions: config.server.instructions,
    toolDescriptionSuffix: config.server.toolDescriptionSuffix,
    signer: createSigner(config.server.stateSecret),
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
