// `pgmcp doctor`: connect with the effective configuration and say what would be unsafe.
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { redactUrl } from '../config/index.js';
import { createHostPool, targetsOfUrl } from '../db/host-pool.js';
import { openEmbeddedAccess } from '../db/embedded/attach.js';
import { connectionDetail } from '../db/errors.js';
import { createLogger } from './logger.js';

const PRIVILEGES_SQL = `
SELECT r.rolsuper AS superuser, r.rolbypassrls AS bypass_rls, r.rolcreaterole AS create_role,
  EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r','p') AND n.nspname NOT IN ('pg_catalog','information_schema')
            AND (has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE')
                 OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE'))) AS table_writes,
  EXISTS (SELECT 1 FROM pg_catalog.pg_namespace n
          WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
            AND has_schema_privilege(n.oid, 'CREATE')) AS schema_create
FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`;

export async function doctor(config: Config): Promise<number> {
  const logger = createLogger('warn');
  const out = (line = ''): boolean => process.stdout.write(`${line}\n`);
  out(
    `database: ${config.database.url ? redactUrl(config.database.url) : `embedded PGlite at ${config.embedded.dataDir}`}`,
  );
  try {
    return await withConnection(config, logger, async (client, kind) => {
      const info = await client.query<{ version: string; role: string; db: string }>(
        'SELECT version() AS version, current_user AS role, current_database() AS db',
      );
      const row = info.rows[0]!;
      out(`server: ${row.version}`);
      out(`connected as role "${row.role}" to database "${row.db}"`);
      const priv = (await client.query(PRIVILEGES_SQL)).rows[0] as
        Record<string, boolean> | undefined;
      const ext = await client.query<{ extname: string; extversion: string }>(
        'SELECT extname, extversion FROM pg_catalog.pg_extension ORDER BY extname',
      );
      out(
        `extensions: ${ext.rows.map((e) => `${e.extname} ${e.extversion}`).join(', ') || 'none'}`,
      );
      out(
        `mode: ${config.database.allowWrites ? 'writes allowed (allowWrites: true)' : 'read-only transactions'}`,
      );
      const fixes: string[] = [];
      if (kind === 'embedded') {
        out(
          'role privileges: embedded database (single local user); read-only is enforced per transaction',
        );
      } else if (priv) {
        const can = [
          priv['superuser'] && 'is a superuser',
          priv['bypass_rls'] && 'bypasses row-level security',
          priv['create_role'] && 'can create roles',
          priv['table_writes'] && 'can INSERT/UPDATE/DELETE/TRUNCATE some tables',
          priv['schema_create'] && 'can CREATE objects in some schemas',
        ].filter(Boolean);
        if (can.length === 0) out('role privileges: cannot write anywhere (good)');
        else {
          out(`WARNING: role "${row.role}" ${can.join(', ')}.`);
          fixes.push(
            'pgmcp keeps every call in a READ ONLY transaction, but a role without write grants is the first wall.',
            'Create a read-only role and connect as it, for example:',
            "  CREATE ROLE pgmcp_reader LOGIN PASSWORD '…';",
            `  GRANT CONNECT ON DATABASE "${row.db}" TO pgmcp_reader;`,
            '  GRANT pg_read_all_data TO pgmcp_reader;   -- PostgreSQL 14+; else GRANT USAGE/SELECT per schema',
          );
        }
      }
      if (fixes.length > 0) {
        out();
        out('What to fix:');
        for (const line of fixes) out(`  ${line}`);
      } else {
        out();
        out('Nothing to fix.');
      }
      return 0;
    });
  } catch (error) {
    out(`ERROR: could not use the database: ${connectionDetail(error)}`);
    if (config.database.url !== null) {
      out(
        'Check the URL (host, port, database, user), that the server is running, and that this role may connect.',
      );
    }
    return 1;
  } finally {
    logger.flush();
  }
}

/**
 * One connection to the database the configuration names. The embedded one is reached the way
 * `pgmcp token` reaches it: through the socket of a server that holds its data directory, or
 * started here when none does.
 */
async function withConnection<T>(
  config: Config,
  logger: Logger,
  work: (client: pg.ClientBase, kind: 'postgres' | 'embedded') => Promise<T>,
): Promise<T> {
  if (config.database.url === null) {
    const access = await openEmbeddedAccess({
      dataDir: config.embedded.dataDir,
      logger,
      seedDemo: config.embedded.demo,
    });
    try {
      return await withClient(access.connection, (client) => work(client, 'embedded'));
    } finally {
      await access.close();
    }
  }
  // One host or several (libpq's multi-host URL): the one the configuration would use.
  const pool = createHostPool(targetsOfUrl(config.database.url), {
    pool: { max: 1, connectionTimeoutMillis: 10_000 },
    onIdleError: () => undefined,
  });
  try {
    const client = await pool.connect();
    try {
      return await work(client, 'postgres');
    } finally {
      client.release(true);
    }
  } finally {
    await pool.end();
  }
}

async function withClient<T>(
  connection: pg.ClientConfig,
  work: (client: pg.ClientBase) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ ...connection, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
