// The half of the app that opens the databases and fills the registry: the database driver,
// the catalog, the built-in tools, routines and handlers. Loaded by createApp after the
// dispatcher exists, so a stdio server answers `initialize` and `server/discover` while this
// code is still loading (cold start, bench/cold-start.mjs).
import type { Logger } from 'pino';
import type { Catalog } from '../catalog/index.js';
import type { Config, ResolvedDatabase } from '../config/index.js';
import { ErrorCodes, isAppError } from '../core/errors.js';
import { NO_METRICS, type Metrics } from '../core/metrics.js';
import type { Signer } from '../core/signed.js';
import { createNonceLedger, type NonceLedger } from '../core/used-nonces.js';
import { registerDatabaseRouting } from '../tools/database-routing.js';
import {
  createDatabaseDirectory,
  type DatabaseDirectory,
  type DatabaseTarget,
} from '../tools/databases.js';
import { createDatabase, type Database } from '../db/database.js';
import { targetsOfUrl } from '../db/host-pool.js';
import { createCatalog } from '../catalog/index.js';
import { createAccessPolicy } from '../tools/access-policy.js';
import {
  createPolicyCache,
  GENERATION_KEPT_SQL,
  registerBuiltins,
  type PolicyCache,
} from '../tools/builtin/index.js';
import { createEmbeddingProviders, type EmbeddingProviders } from '../embeddings/index.js';
import { installCatalogTrigger, startCatalogWatch, type CatalogWatch } from '../catalog/watch.js';
import { configError } from '../config/index.js';
import { createExchangeLog, type ExchangeLog } from '../tools/handlers/index.js';
import { createLiveCatalog, nameClashError, type LiveCatalog } from '../tools/live-catalog.js';
import { createDatabaseCatalogs } from '../tools/database-catalog.js';
import { createRegistry, type Registry } from '../tools/registry.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../tools/sql-guard.js';
import { countEmbeddings } from './metrics-feeds.js';
import { asks, firstContact, warnUnreachable, type Unreachable } from './start-contact.js';

/** The state database's schema (auth/); denied to every tool. */
const STATE_SCHEMA = 'pgmcp';
/** The event trigger and the catalog generation (sql/watch); hidden with the state schema. */
const WATCH_SCHEMA = 'pgmcp_watch';

/** How long a catalog snapshot serves before it is reloaded. */
const CATALOG_TTL_MS = 60_000;

export interface OpenedDatabase {
  entry: ResolvedDatabase;
  db: Database;
}

export interface OpenedDatabases {
  opened: OpenedDatabase[];
  /** The default database. */
  main: OpenedDatabase;
  directory: DatabaseDirectory;
  catalogs: Map<string, Catalog>;
  watches: CatalogWatch[];
  /** mcp.exchange, where the registry is installed and the log enabled. */
  exchangeLog: ExchangeLog | null;
  /** The databases the first connection at start could not reach, and why. */
  unreachable: Unreachable[];
  closeOpened(): Promise<void>;
}

/**
 * Opens every configured database and fills `registry` with the built-ins, the routines and
 * the registry handlers of each. Closes what it opened on failure.
 */
export async function openDatabases(
  config: Config,
  logger: Logger,
  resolved: readonly ResolvedDatabase[],
  registry: Registry,
  signer: Signer,
  metrics: Metrics = NO_METRICS,
  nonces: NonceLedger = createNonceLedger(),
): Promise<OpenedDatabases> {
  const several = resolved.length > 1;
  const opened: { entry: ResolvedDatabase; db: Database }[] = [];
  const closeOpened = async (): Promise<void> => {
    await Promise.all(opened.map(({ db }) => db.close()));
  };
  try {
    for (const entry of resolved) {
      const db = await createDatabase(
        {
          url: entry.url,
          poolSize: entry.poolSize,
          queueLimit: entry.queueLimit,
          queueTimeoutMs: entry.queueTimeoutMs,
          connectTimeoutMs: entry.connectTimeoutMs,
          idleTimeoutMs: entry.idleTimeoutMs,
          embedded: { dataDir: config.embedded.dataDir, demo: config.embedded.demo },
          role: entry.role,
          replicas: {
            urls: entry.readReplicas,
            maxLagMs: entry.replicaMaxLagMs,
            readYourWritesMs: entry.readYourWritesMs,
          },
          // The single database.url form keeps the URL's database name (or pgmcp-embedded).
          ...(config.databases.length > 0 ? { name: entry.name } : {}),
        },
        logger,
      );
      opened.push({ entry, db });
      // The embedded database is pgmcp's own: it keeps the catalog generation that lets the
      // access policy reuse its lookups (sql/watch/002_generation.sql). A PostgreSQL database
      // gets it from `pgmcp install`; serving never changes one.
      if (db.kind === 'embedded') {
        await db
          .withOwnConnection((client) => installCatalogTrigger(client))
          .catch((error: unknown) =>
            logger.warn(
              { err: { message: (error as Error).message } },
              'the catalog generation could not be installed: the access policy looks the catalog up on every call',
            ),
          );
      }
    }
  } catch (error) {
    await closeOpened();
    throw error;
  }
  // The parser (WASM) loads in the background: the first answer (initialize, tools/list) does
  // not wait for it, and every tool that parses awaits it before its first statement.
  loadSqlParser().catch((error: unknown) =>
    logger.warn({ err: { message: (error as Error).message } }, 'the SQL parser did not load'),
  );
  const main = opened.find(({ entry }) => entry.isDefault)!;
  const db = main.db;
  const toolRoles = Object.fromEntries(
    Object.entries(config.tools).map(([name, settings]) => [name, settings.roles]),
  );
  const toolEnabled = Object.fromEntries(
    Object.entries(config.tools).map(([name, settings]) => [name, settings.enabled]),
  );
  // Where a served database holds the state schema (tokens, users, sessions, audit) — the
  // embedded database keeps it beside the demo data; a state.url may name a served database in
  // another spelling — it is never served: its hashes are nobody's business. (An active policy
  // also hides the planner statistics, which hold sample values of every column.)
  // Asked of every database at once: one that is down answers only after its connect timeout.
  // The first connection to each, so it also tells which cannot be reached (start-contact.ts).
  const contacts = await Promise.all(
    opened.map(async ({ entry, db: target }) =>
      config.state.url === null && entry.url === null
        ? { name: entry.name, holdsState: true, unreachable: null }
        : { name: entry.name, ...(await firstContact(target, STATE_SCHEMA)) },
    ),
  );
  const stateServed = new Map(contacts.map((c) => [c.name, c.holdsState]));
  const unreachable = contacts.flatMap(({ name, unreachable: reason }) =>
    reason === null ? [] : [{ database: name, reason, entry: config.databases.length > 0 }],
  );
  warnUnreachable(logger, unreachable);
  const embeddings = countEmbeddings(createEmbeddingProviders(config.embeddings), metrics);
  const disabledTools = new Set<string>();
  const catalogs = new Map<string, Catalog>();
  const policyCaches = new Map<string, PolicyCache>();
  const targets: DatabaseTarget[] = opened.map(({ entry, db: target }) => {
    // With one database the built-ins go straight into the shared registry, as they always did;
    // with several, each database gets its own and the shared one routes to them.
    const own = several ? createRegistry() : registry;
    const policyCache = createPolicyCache();
    policyCache.available = false; // until the database says it keeps the generation
    policyCaches.set(entry.name, policyCache);
    const catalog = registerBuiltinsFor(
      own,
      entry,
      target,
      config,
      { signer, nonces },
      several ? {} : toolRoles,
      toolEnabled,
      disabledTools,
      stateServed.get(entry.name) ?? true,
      embeddings,
      policyCache,
      several ? logger.child({ database: entry.name }) : logger,
    );
    catalogs.set(entry.name, catalog);
    return {
      name: entry.name,
      location: entry.location,
      availableToUsers: entry.availableToUsers,
      allowWrites: entry.allowWrites,
      db: target,
      registry: own,
    };
  });
  // Whether each database keeps the catalog generation (asked again on every catalog reload):
  // without it the access policy looks the catalog up on every call, as it always did. Not
  // awaited: a database that is down would hold the start up for its connect timeout.
  const refreshGeneration = async (name: string, target: Database): Promise<void> => {
    policyCaches.get(name)!.available = await asks(target, GENERATION_KEPT_SQL, false);
  };
  for (const { entry, db: target } of opened) void refreshGeneration(entry.name, target);
  const directory = createDatabaseDirectory(targets, main.entry.name);
  if (several) {
    registerDatabaseRouting(registry, directory, {
      databaseTools: config.server.databaseTools,
      toolRoles,
    });
  }
  for (const name of Object.keys(config.tools)) {
    if (!registry.tool(name) && !disabledTools.has(name)) {
      await closeOpened();
      throw configError(
        `tools.${name}: no built-in tool by that name (built-ins: ${registry
          .tools()
          .map((t) => t.name)
          .join(', ')}; routines use @authorize, registry handlers requiresAuth)`,
        `tools.${name}`,
      );
    }
  }
  // Routines and registry handlers of every database: loaded now, and again whenever that
  // database says they changed (NOTIFY from an event trigger, or a TTL poll where none can be
  // installed). With one database they go straight into the shared registry; with several,
  // into each database's own, and the shared one routes to them (tools/database-catalog.ts).
  const lives = new Map<string, LiveCatalog>();
  for (const { entry, db: target } of opened) {
    lives.set(
      entry.name,
      createLiveCatalog({
        db: target,
        // With several databases every warning says which one it is about.
        ...(several ? { database: entry.name } : {}),
        registry: several ? directory.get(entry.name)!.registry : registry,
        // A reload (change notification or TTL) drops the policy's remembered lookups too.
        catalog: {
          invalidate: () => {
            catalogs.get(entry.name)!.invalidate();
            policyCaches.get(entry.name)!.invalidate();
          },
        },
        logger,
        routines: {
          allowWrites: entry.allowWrites,
          statementTimeoutMs: entry.statementTimeoutMs,
          maxRows: entry.maxRows,
          maxResultBytes: entry.maxResultBytes,
          enabled: config.database.routineTools,
          ...(config.database.routineSchemas.length > 0
            ? { schemas: config.database.routineSchemas }
            : {}),
        },
        handlers: {
          statementTimeoutMs: entry.statementTimeoutMs,
          allowWrites: entry.allowWrites,
          mode: config.registry.mode,
        },
      }),
    );
  }
  const routed = several
    ? createDatabaseCatalogs(
        registry,
        directory,
        (name) => lives.get(name)!.owned(),
        (name) => lives.get(name)!.known(),
      )
    : null;
  for (const { entry } of opened) {
    try {
      const first = await lives.get(entry.name)!.reload('start');
      // A clash in a database other than the default is skipped (the live catalog warned,
      // naming the database and both places): whoever writes routines in one database must
      // not be able to stop the server for every other.
      const fatal = !several || entry.name === directory.defaultName;
      if (first.clashes.length > 0 && fatal) {
        await closeOpened();
        throw nameClashError(
          several ? first.clashes.map((c) => `${c} (database ${entry.name})`) : first.clashes,
        );
      }
    } catch (error) {
      // With several databases the server starts even when some are down (the default one
      // too); their routines arrive with the first reload after they answer.
      if (!several || !isAppError(error) || error.code !== ErrorCodes.DB_UNAVAILABLE) {
        await closeOpened();
        throw error;
      }
      logger.warn(
        { database: entry.name },
        `database ${entry.name} is unavailable: its routines will be loaded when it answers`,
      );
    }
  }
  routed?.sync(null);
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
  const watches = opened.map(({ entry, db: target }) => {
    const live = lives.get(entry.name)!;
    return startCatalogWatch({
      db: target,
      logger: several ? logger.child({ database: entry.name }) : logger,
      ttlMs: CATALOG_TTL_MS,
      // Serving never changes the database: the trigger is installed by `pgmcp install`.
      installTrigger: false,
      // LISTEN on the server itself when a pooler sits in front of `url` (the watch notices
      // one on its own connection and then polls instead, saying so).
      ...(entry.directUrl ? { connection: targetsOfUrl(entry.directUrl).hosts[0]!.config } : {}),
      onChange: async (reason) => {
        await refreshGeneration(entry.name, target);
        const result = await live.reload(reason);
        routed?.sync(entry.name, result.changed);
      },
    });
  });
  return {
    opened,
    main,
    directory,
    catalogs,
    watches,
    exchangeLog,
    unreachable,
    closeOpened,
  };
}

/** The built-ins of one database into `registry`; returns that database's catalog. */
function registerBuiltinsFor(
  registry: Registry,
  entry: ResolvedDatabase,
  db: Database,
  config: Config,
  { signer, nonces }: { signer: Signer; nonces: NonceLedger },
  toolRoles: Record<string, readonly string[]>,
  toolEnabled: Record<string, boolean>,
  /** Filled with the built-ins tools.<name>.enabled left out. */
  disabledTools: Set<string>,
  stateServed: boolean,
  embeddings: EmbeddingProviders,
  policyCache: PolicyCache,
  logger: Logger,
): Catalog {
  const policy = createAccessPolicy({
    ...entry.access,
    denySchemas: stateServed
      ? [...new Set([...entry.access.denySchemas, STATE_SCHEMA, WATCH_SCHEMA])]
      : entry.access.denySchemas,
  });
  const catalog = createCatalog(db, policy, { ttlMs: CATALOG_TTL_MS });
  const disabled = registerBuiltins(registry, {
    db,
    catalog,
    policy,
    limits: {
      defaultRows: entry.defaultRows,
      maxRows: entry.maxRows,
      maxResultBytes: entry.maxResultBytes,
      statementTimeoutMs: entry.statementTimeoutMs,
    },
    allowWrites: entry.allowWrites,
    deniedFunctions: [...DEFAULT_DENIED_FUNCTIONS, ...entry.deniedFunctions],
    showQueryText: entry.showQueryText,
    queryDatabase: {
      maxPlanCost: entry.maxPlanCost,
      maxPlanRows: entry.maxPlanRows,
      signer,
      nonces,
    },
    toolRoles,
    toolEnabled,
    embeddings,
    policyCache,
    logger,
  });
  for (const name of disabled) disabledTools.add(name);
  return catalog;
}

/** Whether the SQL handler registry (schema mcp, with its exchange table) is installed. */
const registryInstalled = (db: Database): Promise<boolean> =>
  asks(db, "SELECT to_regclass('mcp.exchange') IS NOT NULL AS ok", false);
