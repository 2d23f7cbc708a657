// The state schema, versioned: sql/state/NNN_name.sql, each file one migration whose version is
// its number and whose description (recorded in pgmcp.schema_version) is its `-- description:`
// line. Each migration runs once, in version order, inside one transaction that holds an
// advisory lock, so several pgmcp instances starting together apply it exactly once; once the
// schema is current, opening costs one read and takes no lock.
//
// A migration is pending when its version is not recorded, not merely when it is above the
// highest recorded one: branches add versions side by side (2 on one, 3 on another), and a
// state database that met 3 first still gets 2 when both land. Each migration must therefore
// stand on version 1 alone and never depend on a neighbour it was written beside. A state
// database knows its migrations by version only, so a released file keeps its number; a change
// to the schema is a new file.
import { readdirSync, readFileSync } from 'node:fs';
import { AppError, ErrorCodes } from '../core/errors.js';
import { packagePath } from '../core/package-path.js';
import type { StateDb } from './state-db.js';

const STATE_SCRIPTS_DIR = packagePath('sql/state');
const SCRIPT_NAME = /^(\d{3})_[a-z0-9_-]+\.sql$/;
const DESCRIPTION = /^-- description: (.+)$/m;

export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

// Arbitrary but fixed: the advisory lock key that serialises migrations of the pgmcp schema.
const MIGRATION_LOCK_KEY = 7_046_211_903;

/** The migrations in `dir` (sql/state of the installed package), in version order. */
export function stateMigrations(dir = STATE_SCRIPTS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((file) => SCRIPT_NAME.test(file))
    .sort();
  if (files.length === 0) throw new Error(`no state migrations (NNN_name.sql) in ${dir}`);
  return files.map((file) => {
    const sql = readFileSync(`${dir}/${file}`, 'utf8');
    const description = DESCRIPTION.exec(sql)?.[1]?.trim();
    if (!description) throw new Error(`${dir}/${file} has no "-- description:" line`);
    return { version: Number(SCRIPT_NAME.exec(file)![1]), description, sql };
  });
}

export const MIGRATIONS: readonly Migration[] = stateMigrations();

export const LATEST_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

/** The versions recorded in the state database; empty when the pgmcp schema is not there yet. */
async function appliedVersions(db: Pick<StateDb, 'query'>): Promise<Set<number>> {
  const { rows } = await db.query<{ present: boolean }>(
    "SELECT to_regclass('pgmcp.schema_version') IS NOT NULL AS present",
  );
  if (!rows[0]?.present) return new Set();
  const versions = await db.query<{ v: number }>(
    'SELECT version::int AS v FROM pgmcp.schema_version',
  );
  return new Set(versions.rows.map((r) => r.v));
}

/** The highest version recorded in the state database; 0 when there is none. */
export async function stateVersion(db: Pick<StateDb, 'query'>): Promise<number> {
  return Math.max(0, ...(await appliedVersions(db)));
}

export interface MigrateOptions {
  /** false: report an older schema instead of upgrading it. */
  migrate: boolean;
  /** For tests: another list than MIGRATIONS. */
  migrations?: readonly Migration[];
}

/** Brings the pgmcp schema to the newest version; returns the versions it applied. */
export async function migrateState(db: StateDb, options: MigrateOptions): Promise<number[]> {
  const migrations = [...(options.migrations ?? MIGRATIONS)].sort((a, b) => a.version - b.version);
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const pendingIn = (applied: Set<number>): Migration[] =>
    migrations.filter((m) => !applied.has(m.version));
  const before = await appliedVersions(db);
  const current = Math.max(0, ...before);
  checkNotNewer(current, latest, db.description);
  if (pendingIn(before).length === 0) return [];
  if (!options.migrate) {
    throw new AppError(
      ErrorCodes.STATE_SCHEMA_MISMATCH,
      `The pgmcp schema in the state database (${db.description}) is at version ${current}; ` +
        `this pgmcp needs version ${latest}. Run \`pgmcp token list\` (or start pgmcp) once to upgrade it.`,
      { category: 'unavailable', details: { found: current, expected: latest } },
    );
  }
  return db.transaction(async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query('CREATE SCHEMA IF NOT EXISTS pgmcp');
    await client.query(
      `CREATE TABLE IF NOT EXISTS pgmcp.schema_version (
         version integer PRIMARY KEY,
         description text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    // Read again under the lock: another instance may have migrated while we waited.
    const now = await appliedVersions(client);
    checkNotNewer(Math.max(0, ...now), latest, db.description);
    const applied: number[] = [];
    for (const migration of pendingIn(now)) {
      await client.query(migration.sql);
      await client.query(
        'INSERT INTO pgmcp.schema_version (version, description) VALUES ($1, $2)',
        [migration.version, migration.description],
      );
      applied.push(migration.version);
    }
    return applied;
  });
}

function checkNotNewer(found: number, latest: number, description: string): void {
  if (found <= latest) return;
  throw new AppError(
    ErrorCodes.STATE_SCHEMA_MISMATCH,
    `The pgmcp schema in the state database (${description}) is at version ${found}, newer than ` +
      `this pgmcp knows (${latest}). Upgrade pgmcp, or point state.url at another database.`,
    { category: 'unavailable', details: { found, expected: latest } },
  );
}
