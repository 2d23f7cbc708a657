// API tokens: created by `pgmcp token create`, shown once, stored as SHA-256 hex. Verifying is
// one lookup by the unique hash index; last-use times are written at most once a minute per
// token, so a busy token does not turn every request into a write.
import { randomUUID } from 'node:crypto';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { AuditLog } from './audit.js';
import { bearerKind, hashBearer, isDisplayPrefix, newBearerSecret, sameDigest } from './secrets.js';
import type { StateDb } from './state-db.js';
import type { AuthFailure, ChangeContext, InvalidationListener, Verified } from './types.js';
import { assertName, assertPgRole, assertRoles, createLastUseThrottle } from './validate.js';

export interface TokenRecord {
  readonly id: string;
  readonly name: string;
  /** `pgmcp_` and the first characters of the secret: enough to recognise it, useless to use. */
  readonly prefix: string;
  readonly roles: readonly string[];
  readonly boundDatabase: string | null;
  readonly pgRole: string | null;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
}

export interface CreateTokenInput {
  name: string;
  /** Seconds from now; null: never expires. */
  expiresInSeconds: number | null;
  roles?: readonly string[];
  boundDatabase?: string | null;
  pgRole?: string | null;
}

export interface CreatedToken {
  /** The secret. Shown to the operator once; only its hash is kept. */
  readonly token: string;
  readonly record: TokenRecord;
}

export interface TokenStore {
  create(input: CreateTokenInput, context?: ChangeContext): Promise<CreatedToken>;
  /** Every token, newest first; revoked ones too unless `activeOnly`. */
  list(options?: { activeOnly?: boolean }): Promise<TokenRecord[]>;
  /** By id or by listed prefix. Revoking a revoked token is not an error; it returns it as is. */
  revoke(idOrPrefix: string, context?: ChangeContext): Promise<TokenRecord>;
  verify(rawToken: string): Promise<Principal | AuthFailure>;
  /** verify() plus the token's expiry, for a cache. */
  lookup(rawToken: string): Promise<Verified | AuthFailure>;
}

export interface TokenStoreOptions {
  audit?: AuditLog;
  onInvalidate?: InvalidationListener;
  /** Minimum time between two last-use writes of one token (default 60 s). */
  lastUseIntervalMs?: number;
  onError?: (error: Error) => void;
}

interface TokenRow {
  id: string;
  name: string;
  prefix: string;
  token_hash: string;
  roles: string[];
  bound_database: string | null;
  pg_role: string | null;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS =
  'id, name, prefix, token_hash, roles, bound_database, pg_role, created_at, expires_at, last_used_at, revoked_at';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function toRecord(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    roles: row.roles,
    boundDatabase: row.bound_database,
    pgRole: row.pg_role,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

/**
 * The principal of a token. Its userId is the token's NAME: the name is the identity (what
 * RLS policies and the audit see) and the token is a credential for it, so a rotated token
 * (revoke, create again with the same name) keeps the caller's identity. tokenId tells
 * credentials apart.
 */
export function tokenPrincipal(
  row: Pick<TokenRow, 'id' | 'name' | 'roles' | 'bound_database' | 'pg_role'>,
): Principal {
  return Object.freeze({
    kind: 'token',
    userId: row.name,
    tenantId: null,
    roles: Object.freeze([...row.roles]),
    scopes: Object.freeze([]),
    claims: Object.freeze({}),
    pgRole: row.pg_role,
    boundDatabase: row.bound_database,
    tokenId: row.id,
  });
}

export function createTokenStore(db: StateDb, options: TokenStoreOptions = {}): TokenStore {
  const touch = createLastUseThrottle(options.lastUseIntervalMs ?? 60_000);
  const onError = options.onError ?? (() => undefined);

  const lookup = async (rawToken: string): Promise<Verified | AuthFailure> => {
    if (bearerKind(rawToken) !== 'token') return { reason: 'malformed' };
    const hash = hashBearer(rawToken);
    const { rows } = await db.query<TokenRow>(
      `SELECT ${COLUMNS} FROM pgmcp.tokens WHERE token_hash = $1`,
      [hash],
    );
    const row = rows[0];
    // The index found it by hash; compare again in constant time so no code path depends on
    // how many leading characters of a guess were right.
    if (!row || !sameDigest(row.token_hash, hash)) return { reason: 'unknown' };
    if (row.revoked_at) return { reason: 'revoked' };
    const now = Date.now();
    if (row.expires_at && row.expires_at.getTime() <= now) return { reason: 'expired' };
    if (touch.due(row.id, row.last_used_at, now)) {
      db.query(
        `UPDATE pgmcp.tokens SET last_used_at = now()
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
        [row.id, touch.intervalMs / 1000],
      ).catch((error: unknown) => onError(error as Error));
    }
    return { principal: tokenPrincipal(row), expiresAt: row.expires_at };
  };

  const find = async (idOrPrefix: string): Promise<TokenRow> => {
    const value = idOrPrefix.trim();
    let rows: TokenRow[];
    if (UUID.test(value)) {
      rows = (
        await db.query<TokenRow>(`SELECT ${COLUMNS} FROM pgmcp.tokens WHERE id = $1`, [value])
      ).rows;
    } else if (isDisplayPrefix(value)) {
      // A longer prefix than the stored one (someone pasted more) narrows by the stored part.
      rows = (
        await db.query<TokenRow>(
          `SELECT ${COLUMNS} FROM pgmcp.tokens WHERE prefix = left($1, length(prefix)) OR prefix LIKE $2 ORDER BY created_at DESC`,
          [value, `${value.replace(/[\\%_]/g, '\\$&')}%`],
        )
      ).rows;
    } else {
      throw new AppError(
        ErrorCodes.AUTH_INVALID_INPUT,
        `expected a token id (a UUID) or a token prefix such as pgmcp_AbCdEfGh, got ${JSON.stringify(value)}`,
        { category: 'input' },
      );
    }
    if (rows.length === 0) {
      throw new AppError(
        ErrorCodes.AUTH_NOT_FOUND,
        `No token with id or prefix ${value}. \`pgmcp token list\` shows them.`,
        {
          category: 'not_found',
        },
      );
    }
    if (rows.length > 1) {
      throw new AppError(
        ErrorCodes.AUTH_CONFLICT,
        `The prefix ${value} matches ${rows.length} tokens; give the token's id instead.`,
        { category: 'conflict', details: { ids: rows.map((r) => r.id) } },
      );
    }
    return rows[0]!;
  };

  return {
    lookup,
    async verify(rawToken) {
      const result = await lookup(rawToken);
      return 'reason' in result ? result : result.principal;
    },

    async create(input, context = {}) {
      const name = assertName(input.name, 'token name');
      const roles = assertRoles(input.roles ?? []);
      const secret = newBearerSecret('token');
      const id = randomUUID();
      let row: TokenRow | undefined;
      try {
        const { rows } = await db.query<TokenRow>(
          `INSERT INTO pgmcp.tokens (id, name, prefix, token_hash, roles, bound_database, pg_role, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $8::float8) END)
           RETURNING ${COLUMNS}`,
          [
            id,
            name,
            secret.displayPrefix,
            secret.hash,
            roles,
            input.boundDatabase ?? null,
            assertPgRole(input.pgRole),
            input.expiresInSeconds,
          ],
        );
        row = rows[0];
      } catch (error) {
        if ((error as { code?: string }).code === '23505') {
          throw new AppError(
            ErrorCodes.AUTH_CONFLICT,
            `A token named ${name} already exists and is not revoked. Revoke it first, or choose another name.`,
            { category: 'conflict', details: { name } },
          );
        }
        throw error;
      }
      const record = toRecord(row!);
      options.audit?.record({
        event: 'token_created',
        outcome: 'success',
        actor: context.actor ?? null,
        clientAddress: context.clientAddress ?? null,
        details: {
          token_id: id,
          name,
          prefix: record.prefix,
          roles: [...roles],
          expires_at: record.expiresAt?.toISOString() ?? null,
        },
      });
      return { token: secret.raw, record };
    },

    async list(listOptions = {}) {
      const where = listOptions.activeOnly
        ? 'WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())'
        : '';
      const { rows } = await db.query<TokenRow>(
        `SELECT ${COLUMNS} FROM pgmcp.tokens ${where} ORDER BY created_at DESC, name`,
      );
      return rows.map(toRecord);
    },

    async revoke(idOrPrefix, context = {}) {
      const found = await find(idOrPrefix);
      if (found.revoked_at) return toRecord(found);
      const { rows } = await db.query<TokenRow>(
        `UPDATE pgmcp.tokens SET revoked_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
        [found.id],
      );
      options.onInvalidate?.({ tokenId: found.id });
      options.audit?.record({
        event: 'token_revoked',
        outcome: 'success',
        actor: context.actor ?? null,
        clientAddress: context.clientAddress ?? null,
        details: { token_id: found.id, name: found.name, prefix: found.prefix },
      });
      return toRecord(rows[0] ?? found);
    },
  };
}
