// Applies the registry's versioned scripts (sql/registry/NNN_*.sql) in ONE transaction: the
// scripts newer than mcp.schema_version, in order. Re-running is a no-op; a newer script upgrades.
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { packagePath } from '../../core/package-path.js';

const REGISTRY_SCRIPTS_DIR = packagePath('sql/registry');

export interface RegistryScript {
  version: number;
  file: string;
  sql: string;
}

/** What the installer needs from a connection (pg client, or PGlite through an adapter). */
export interface ScriptRunner {
  /** Several statements, no parameters. */
  exec(sql: string): Promise<void>;
  query<R>(sql: string, params?: unknown[]): Promise<R[]>;
}

export interface InstallOutcome {
  /** The schema version before (null: not installed) and after. */
  before: number | null;
  after: number;
  applied: string[];
}

export function registryScripts(dir = REGISTRY_SCRIPTS_DIR): RegistryScript[] {
  return readdirSync(dir)
    .filter((file) => /^\d{3}_[a-z0-9_-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 3)),
      file,
      sql: readFileSync(`${dir}/${file}`, 'utf8'),
    }));
}

export function pgRunner(client: pg.ClientBase): ScriptRunner {
  return {
    exec: async (sql) => {
      await client.query(sql);
    },
    query: async <R>(sql: string, params: unknown[] = []) =>
      (await client.query(sql, params)).rows as R[],
  };
}

export async function installedVersion(runner: ScriptRunner): Promise<number | null> {
  // Two statements: one naming a missing table would fail when parsed.
  const rows = await runner.query<{ present: boolean }>(
    "SELECT to_regclass('mcp.schema_version') IS NOT NULL AS present",
  );
  if (!rows[0]?.present) return null;
  const current = await runner.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM mcp.schema_version',
  );
  return current[0]?.version ?? null;
}

export async function applyRegistryScripts(
  runner: ScriptRunner,
  scripts: readonly RegistryScript[] = registryScripts(),
): Promise<InstallOutcome> {
  await runner.exec('BEGIN');
  try {
    // Two installers at once (several instances starting): the second waits, then finds nothing to do.
    await runner.query("SELECT pg_advisory_xact_lock(hashtext('pgmcp-registry-install'))");
    const before = await installedVersion(runner);
    const applied: string[] = [];
    for (const script of scripts) {
      if (before !== null && script.version <= before) continue;
      await runner.exec(script.sql);
      applied.push(script.file);
    }
    const after = (await installedVersion(runner)) ?? 0;
    await runner.exec('COMMIT');
    return { before, after, applied };
  } catch (error) {
    await runner.exec('ROLLBACK').catch(() => undefined);
    throw installError(error);
  }
}

function installError(error: unknown): unknown {
  const sqlstate = (error as { code?: unknown })?.code;
  if (sqlstate === '42501') {
    return new AppError(
      ErrorCodes.CONFIG_INVALID,
      `This role may not create the registry schema "mcp" (${(error as Error).message}). ` +
        'Run `pgmcp install` as the database owner or a role with CREATE on the database, ' +
        "then give the serving role access with SELECT mcp.grant_runtime('<role>').",
      { category: 'config', details: { sqlstate }, cause: error },
    );
  }
  return error;
}

/** Interfaces of other systems `pgmcp install --names` can add over the registry. */
const COMPAT_NAMES = ['pgmi'] as const;
export type CompatName = (typeof COMPAT_NAMES)[number];

const PGMI_SCRIPT = packagePath('sql/compat/pgmi.sql');
/** The schema comment that marks an `api` schema as pgmcp's own (sql/compat/pgmi.sql). */
export const PGMI_MARK = 'pgmcp pgmi interface';

export function parseCompatNames(value: string | undefined): CompatName[] {
  if (value === undefined) return [];
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(COMPAT_NAMES as readonly string[]).includes(name)) {
      throw new AppError(
        ErrorCodes.PGMI_NAMES_UNKNOWN,
        `Unknown --names entry "${name}"; known: ${COMPAT_NAMES.join(', ')}.`,
        { category: 'config' },
      );
    }
  }
  return names as CompatName[];
}

/**
 * Who owns schema `api`: absent, pgmcp's pgmi interface, or someone else (pgmi itself, or an
 * unrelated schema) — which install never touches and `registry.mode: pgmi` serves as it is.
 */
export async function apiSchemaOwner(
  runner: ScriptRunner,
): Promise<'absent' | 'pgmcp' | 'foreign'> {
  const rows = await runner.query<{ present: boolean; note: string | null }>(
    "SELECT to_regnamespace('api') IS NOT NULL AS present, obj_description(to_regnamespace('api'), 'pg_namespace') AS note",
  );
  const row = rows[0];
  if (!row?.present) return 'absent';
  return row.note?.startsWith(PGMI_MARK) ? 'pgmcp' : 'foreign';
}

/** Adds (or refreshes) pgmi's `api` interface over the registry, in one transaction. */
export async function applyPgmiInterface(runner: ScriptRunner): Promise<void> {
  await runner.exec('BEGIN');
  try {
    if ((await apiSchemaOwner(runner)) === 'foreign') {
      throw new AppError(
        ErrorCodes.PGMI_SCHEMA_FOREIGN,
        'This database already has a schema "api" that pgmcp did not create (a pgmi deployment?); ' +
          'it was left untouched. To serve an existing pgmi deployment as it is, set registry.mode: pgmi.',
        { category: 'config' },
      );
    }
    await runner.exec(readFileSync(PGMI_SCRIPT, 'utf8'));
    await runner.exec('COMMIT');
  } catch (error) {
    await runner.exec('ROLLBACK').catch(() => undefined);
    throw installError(error);
  }
}

/** The grants the role pgmcp serves as needs (`pgmcp install --grant-runtime ROLE`). */
export async function grantRuntime(
  runner: ScriptRunner,
  role: string,
  names: readonly CompatName[],
): Promise<void> {
  await runner.query('SELECT mcp.grant_runtime($1)', [role]);
  if (names.includes('pgmi')) await runner.query('SELECT api.grant_runtime($1)', [role]);
}
