// The state schema, versioned. Each migration runs once, in version order, inside one transaction
// that holds an advisory lock, so several pgmcp instances starting together apply it exactly
// once; once the schema is current, opening costs one read and takes no lock.
//
// A migration is pending when its version is not recorded, not merely when it is above the
// highest recorded one: branches add versions side by side (2 on one, 3 on another), and a
// state database that met 3 first still gets 2 when both land. Each migration must therefore
// stand on version 1 alone and never depend on a neighbour it was written beside.
import { AppError, ErrorCodes } from '../core/errors.js';
import type { StateDb } from './state-db.js';

export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

// Arbitrary but fixed: the advisory lock key that serialises migrations of the pgmcp schema.
const MIGRATION_LOCK_KEY = 7_046_211_903;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'tokens, users, sessions, login attempts, lockouts, audit',
    sql: `
      CREATE TABLE pgmcp.tokens (
        id uuid PRIMARY KEY,
        name text NOT NULL,
        prefix text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        roles text[] NOT NULL DEFAULT '{}',
        bound_database text,
        pg_role text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz,
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      CREATE UNIQUE INDEX tokens_active_name ON pgmcp.tokens (name) WHERE revoked_at IS NULL;
      CREATE INDEX tokens_prefix ON pgmcp.tokens (prefix);

      CREATE TABLE pgmcp.users (
        id uuid PRIMARY KEY,
        username text NOT NULL UNIQUE,
        password_hash text NOT NULL,
        roles text[] NOT NULL DEFAULT '{}',
        pg_role text,
        disabled boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        last_login_at timestamptz
      );

      CREATE TABLE pgmcp.sessions (
        id uuid PRIMARY KEY,
        token_hash text NOT NULL UNIQUE,
        user_id uuid NOT NULL REFERENCES pgmcp.users (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        last_used_at timestamptz,
        client_address text
      );
      CREATE INDEX sessions_user ON pgmcp.sessions (user_id);
      CREATE INDEX sessions_expires ON pgmcp.sessions (expires_at);

      -- Failed logins only; the flags are cleared when a lock is set (and, for the user, on a
      -- successful login) so the next window starts from zero.
      CREATE TABLE pgmcp.login_attempts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        username text NOT NULL,
        client_address text,
        at timestamptz NOT NULL DEFAULT now(),
        counts_for_user boolean NOT NULL DEFAULT true,
        counts_for_address boolean NOT NULL DEFAULT true
      );
      CREATE INDEX login_attempts_user ON pgmcp.login_attempts (username, at);
      CREATE INDEX login_attempts_address ON pgmcp.login_attempts (client_address, at);
      CREATE INDEX login_attempts_at ON pgmcp.login_attempts (at);

      CREATE TABLE pgmcp.lockouts (
        subject_kind text NOT NULL CHECK (subject_kind IN ('user', 'address')),
        subject text NOT NULL,
        locked_until timestamptz NOT NULL,
        PRIMARY KEY (subject_kind, subject)
      );

      CREATE TABLE pgmcp.audit (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL DEFAULT now(),
        event text NOT NULL,
        outcome text NOT NULL,
        principal_kind text,
        principal_id text,
        client_address text,
        database text,
        tool text,
        duration_ms integer,
        details jsonb NOT NULL DEFAULT '{}'
      );
      CREATE INDEX audit_at ON pgmcp.audit (at);
    `,
  },
  {
    version: 2,
    description: 'conversations (chat history per owner, with token usage)',
    // The owner is part of the key: a conversation id names nothing outside its owner's own
    // list, so a lookup of another owner's id finds no row (a 404), and a client-chosen id
    // (useChat's) can never collide with someone else's. title and preview are kept beside
    // the messages so listing never reads the jsonb.
    sql: `
      CREATE TABLE pgmcp.conversations (
        owner text NOT NULL,
        id text NOT NULL,
        username text NOT NULL,
        title text NOT NULL,
        title_set boolean NOT NULL DEFAULT false,
        preview text NOT NULL DEFAULT '',
        provider text,
        model text,
        connection text,
        messages jsonb NOT NULL DEFAULT '[]',
        message_count integer NOT NULL DEFAULT 0,
        input_tokens bigint NOT NULL DEFAULT 0,
        output_tokens bigint NOT NULL DEFAULT 0,
        total_tokens bigint NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (owner, id)
      );
      CREATE INDEX conversations_recent ON pgmcp.conversations (owner, updated_at DESC, id DESC);
    `,
  },
  {
    version: 3,
    description:
      'built-in OAuth authorization server: signing keys, clients, requests, codes, refresh tokens',
    // Users are named, not referenced by id: a removed user's grants are refused at use (the
    // token endpoint reads pgmcp.users), and the tables stand on version 1 alone.
    sql: `
      CREATE TABLE pgmcp.oauth_keys (
        kid text PRIMARY KEY,
        alg text NOT NULL,
        public_jwk jsonb NOT NULL,
        private_jwk jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        retired_at timestamptz
      );

      CREATE TABLE pgmcp.oauth_clients (
        client_id text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
        client_name text,
        redirect_uris text[] NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        fetched_at timestamptz NOT NULL DEFAULT now()
      );

      -- An authorization in progress in one browser: between the authorize request, the login
      -- form and the consent form. Only hashes of its id, CSRF token and browser cookie are kept.
      CREATE TABLE pgmcp.oauth_requests (
        id_hash text PRIMARY KEY,
        browser_hash text NOT NULL,
        csrf_hash text NOT NULL,
        client_id text NOT NULL,
        redirect_uri text NOT NULL,
        scopes text[] NOT NULL,
        state text,
        code_challenge text NOT NULL,
        resource text NOT NULL,
        username text,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX oauth_requests_expires ON pgmcp.oauth_requests (expires_at);

      CREATE TABLE pgmcp.oauth_codes (
        code_hash text PRIMARY KEY,
        family uuid NOT NULL,
        client_id text NOT NULL,
        username text NOT NULL,
        redirect_uri text NOT NULL,
        scopes text[] NOT NULL,
        resource text NOT NULL,
        code_challenge text NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      );
      CREATE INDEX oauth_codes_expires ON pgmcp.oauth_codes (expires_at);

      CREATE TABLE pgmcp.oauth_refresh_tokens (
        token_hash text PRIMARY KEY,
        family uuid NOT NULL,
        client_id text NOT NULL,
        username text NOT NULL,
        scopes text[] NOT NULL,
        resource text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX oauth_refresh_family ON pgmcp.oauth_refresh_tokens (family);
      CREATE INDEX oauth_refresh_user ON pgmcp.oauth_refresh_tokens (username);
    `,
  },
];

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
