// What the DBA tools need from the server, asked on the call's own connection: HypoPG for
// hypothetical indexes, pg_stat_statements (installed and preloaded) for the workload, and the
// right to read other sessions' statistics. A missing piece is one clear error that says what
// to install, which setting to change or which grant to ask for.
import type pg from 'pg';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { quoteIdent } from '../../core/sql.js';

export function extensionMissing(message: string): AppError {
  return new AppError(ErrorCodes.EXTENSION_UNAVAILABLE, message, { category: 'unavailable' });
}

/** The schema an extension is installed in, or null. */
export async function extensionSchema(client: pg.ClientBase, name: string): Promise<string | null> {
  const { rows } = await client.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_catalog.pg_extension e
     JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = $1`,
    [name],
  );
  return rows[0]?.schema ?? null;
}

/** HypoPG's schema, quoted for use in SQL; throws when it is not installed. */
export async function requireHypopg(client: pg.ClientBase): Promise<string> {
  const schema = await extensionSchema(client, 'hypopg');
  if (schema === null) {
    throw extensionMissing(
      'Hypothetical indexes need the HypoPG extension, which is not installed in this database. Install the server package (Debian/Ubuntu: postgresql-<version>-hypopg), then run CREATE EXTENSION hypopg in this database (a superuser or the database owner). The embedded database does not have it.',
    );
  }
  return quoteIdent(schema);
}

/**
 * pg_stat_statements' schema, quoted; throws when the extension is not installed or its
 * library was not preloaded (the view then fails on every read).
 */
export async function requireStatStatements(client: pg.ClientBase): Promise<string> {
  const schema = await extensionSchema(client, 'pg_stat_statements');
  const advice =
    'Add pg_stat_statements to shared_preload_libraries in postgresql.conf and restart the server, then run CREATE EXTENSION pg_stat_statements in this database (a superuser). The embedded database does not have it.';
  if (schema === null) {
    throw extensionMissing(
      `Query statistics need the pg_stat_statements extension, which is not installed in this database. ${advice}`,
    );
  }
  const { rows } = await client.query<{ loaded: boolean }>(
    "SELECT pg_catalog.current_setting('shared_preload_libraries') ~ '(^|[ ,])pg_stat_statements([ ,]|$)' AS loaded",
  );
  if (rows[0]?.loaded !== true) {
    throw extensionMissing(
      `pg_stat_statements is installed in this database but its library is not loaded, so it records nothing. ${advice}`,
    );
  }
  return quoteIdent(schema);
}

/** Whether the caller's role reads other sessions' statistics (query texts, activity). */
export async function readsAllStats(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ ok: boolean }>(
    `SELECT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user)
         OR pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER') AS ok`,
  );
  return rows[0]?.ok === true;
}

export const ALL_STATS_ADVICE =
  "This role cannot read other sessions' statistics, so statements run by other roles are left out. Ask a superuser to GRANT pg_read_all_stats TO the role pgmcp connects as.";
