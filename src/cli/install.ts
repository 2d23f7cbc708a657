// `pgmcp install`: apply the SQL handler registry's scripts (schema mcp) to the database.
import type pg from 'pg';
import { AppError, ErrorCodes } from '../core/errors.js';
import { redactUrl, type Config } from '../config/index.js';
import {
  applyPgmiInterface,
  applyRegistryScripts,
  grantRuntime,
  parseCompatNames,
  pgRunner,
} from '../tools/handlers/install.js';
import { quoteIdent } from '../core/sql.js';
import { createDatabase } from '../db/database.js';
import { connectionDetail } from '../db/errors.js';
import { createLogger } from './logger.js';
import { installCatalogTrigger } from '../catalog/watch.js';

export interface InstallOptions {
  /** Interfaces of other systems to add over the registry (`--names pgmi`). */
  names?: string;
  /** The role pgmcp serves as: give it what it needs (`--grant-runtime ROLE`). */
  grantRuntime?: string;
}

async function requireRole(client: pg.PoolClient, role: string): Promise<void> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1', [
    role,
  ]);
  if (rowCount === 0) {
    throw new AppError(
      ErrorCodes.CONFIG_INVALID,
      `--grant-runtime: role "${role}" does not exist; create it first (CREATE ROLE ${quoteIdent(role)} LOGIN) or name the role pgmcp serves as. Nothing was changed.`,
      { category: 'input', details: { role } },
    );
  }
}

export async function install(config: Config, options: InstallOptions = {}): Promise<number> {
  const names = parseCompatNames(options.names);
  const out = (line: string): boolean => process.stdout.write(`${line}\n`);
  out(
    `database: ${config.database.url ? redactUrl(config.database.url) : `embedded PGlite at ${config.embedded.dataDir}`}`,
  );
  const db = await createDatabase(
    {
      url: config.database.url,
      poolSize: 1,
      embedded: { dataDir: config.embedded.dataDir, demo: config.embedded.demo },
    },
    createLogger('warn'),
  );
  let connected = false;
  try {
    return await db.withOwnConnection(async (client: pg.PoolClient) => {
      connected = true;
      // Checked before anything changes: a misspelt role would otherwise fail after the
      // registry is installed, leaving it without its grants and change notifications.
      if (options.grantRuntime) await requireRole(client, options.grantRuntime);
      const outcome = await applyRegistryScripts(pgRunner(client));
      out(`registry schema version before: ${outcome.before ?? 'not installed'}`);
      out(`registry schema version after:  ${outcome.after}`);
      out(
        outcome.applied.length > 0
          ? `applied: ${outcome.applied.join(', ')}`
          : 'already up to date; nothing applied',
      );
      if (names.includes('pgmi')) {
        await applyPgmiInterface(pgRunner(client));
        out(
          'pgmi interface: schema api (api.mcp_handle_request, api.create_or_replace_mcp_handler, …)',
        );
      }
      if (options.grantRuntime) {
        await grantRuntime(pgRunner(client), options.grantRuntime, names);
        out(`runtime grants: given to role ${options.grantRuntime}`);
      }
      // The event triggers that tell a running pgmcp about DDL (else it polls) and count it (the
      // catalog generation the access policy's reused lookups are checked against).
      const trigger = await installCatalogTrigger(client);
      out(
        trigger === 'installed'
          ? "change notifications: event trigger pgmcp_watch installed (running servers reload on DDL, and reuse the access policy's lookups until it changes)"
          : 'change notifications: this role may not create event triggers; servers will poll for changes',
      );
      return 0;
    });
  } catch (error) {
    if (connected) throw error;
    throw new AppError(ErrorCodes.DB_UNAVAILABLE, `Cannot connect: ${connectionDetail(error)}`, {
      category: 'unavailable',
      cause: error,
    });
  } finally {
    await db.close();
  }
}
