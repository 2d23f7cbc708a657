// The one entry point the serving side needs: authenticateBearer(raw) → Principal or why not.
// The token's shape says where to look (API token or login session), so a request costs at most
// one indexed lookup, and none at all while a recent answer is cached. The cache holds positive
// answers only, for auth.cacheTtlMs (default 5 s) and never past the token's own expiry;
// revocations, logouts and user changes made through THIS process drop entries at once, while
// another instance keeps trusting its cached answer for up to cacheTtlMs. Open streams, which
// outlive the request that authenticated them, are re-checked in batches (lapsedBearers).
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Principal } from '../core/principal.js';
import { createAuditLog, type AuditLog } from '../state/audit.js';
import { createConversationStore, type ConversationStore } from '../state/conversation-store.js';
import type { LockoutPolicy } from '../state/lockout.js';
import { bearerKind, hashBearer, type ScryptParams } from '../state/secrets.js';
import {
  createSessionStore,
  type SessionStore,
  type SessionStoreOptions,
} from '../state/session-store.js';
import { openStateDatabase, type OpenStateOptions, type StateDb } from '../state/state-db.js';
import { createTokenStore, type TokenStore } from '../state/token-store.js';
import type { AuthFailure, Invalidation, LapseReason, Verified } from '../state/types.js';
import { createUserStore, type UserStore } from '../state/user-store.js';

export interface Authenticator {
  readonly db: StateDb;
  readonly tokens: TokenStore;
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly audit: AuditLog;
  /** Each signed-in caller's chat history (GET /api/conversations, the chat loop). */
  readonly conversations: ConversationStore;
  /** `Authorization: Bearer <raw>` → who is calling, or why not. Never throws for a bad token. */
  authenticateBearer(rawToken: string): Promise<Principal | AuthFailure>;
  /**
   * Of these bearers (by `hashBearer`), the ones that no longer check out and why, in one query
   * for all of them; they are dropped from the cache too. Throws when the state database
   * cannot be reached.
   */
  lapsedBearers(hashes: readonly string[]): Promise<Map<string, LapseReason>>;
  /** Flushes the audit log; closes the state database when this authenticator opened it. */
  close(): Promise<void>;
}

export interface AuthOptions {
  sessionTtlSeconds: number;
  /** 0 turns the cache off. */
  cacheTtlMs: number;
  lockout: LockoutPolicy;
  audit?: AuditLog;
  scrypt?: ScryptParams;
  slowDown?: SessionStoreOptions['slowDown'];
  lastUseIntervalMs?: number;
  maxCacheEntries?: number;
  onError?: (error: Error) => void;
  /** Close `db` in close() (default false: the caller owns it). */
  ownsDb?: boolean;
}

interface CacheEntry {
  verified: Verified;
  until: number;
}

export function createAuth(db: StateDb, options: AuthOptions): Authenticator {
  const cache = new Map<string, CacheEntry>();
  const maxEntries = options.maxCacheEntries ?? 10_000;
  const onError = options.onError ?? (() => undefined);
  const audit = options.audit ?? createAuditLog({ db: null, file: null });

  // Bumped by every invalidation: a lookup that was in flight meanwhile is not cached, so a
  // token revoked during its own check is not trusted for another cacheTtlMs.
  let generation = 0;
  const invalidate = (what: Invalidation): void => {
    generation++;
    for (const [key, entry] of cache) {
      const { principal, sessionId } = entry.verified;
      const hit =
        ('tokenId' in what && principal.tokenId === what.tokenId) ||
        ('sessionId' in what && sessionId === what.sessionId) ||
        ('userId' in what && principal.kind === 'user' && principal.userId === what.userId);
      if (hit) cache.delete(key);
    }
  };

  const shared = {
    audit,
    onInvalidate: invalidate,
    onError,
    lastUseIntervalMs: options.lastUseIntervalMs,
  };
  const tokens = createTokenStore(db, shared);
  const users = createUserStore(db, { audit, onInvalidate: invalidate, scrypt: options.scrypt });
  const sessions = createSessionStore(db, {
    ...shared,
    ttlSeconds: options.sessionTtlSeconds,
    lockout: options.lockout,
    scrypt: options.scrypt,
    slowDown: options.slowDown,
  });

  const remember = (key: string, verified: Verified, now: number): void => {
    if (options.cacheTtlMs <= 0) return;
    const until = Math.min(now + options.cacheTtlMs, verified.expiresAt?.getTime() ?? Infinity);
    if (cache.size >= maxEntries) {
      // Map order is insertion order: drop the oldest tenth in one go.
      let drop = Math.ceil(maxEntries / 10);
      for (const oldest of cache.keys()) {
        cache.delete(oldest);
        if (--drop === 0) break;
      }
    }
    cache.set(key, { verified, until });
  };

  return {
    db,
    tokens,
    users,
    sessions,
    audit,
    conversations: createConversationStore(db),
    async authenticateBearer(rawToken) {
      const kind = typeof rawToken === 'string' ? bearerKind(rawToken.trim()) : null;
      if (kind === null) return { reason: 'malformed' };
      const raw = rawToken.trim();
      const key = hashBearer(raw);
      const now = Date.now();
      const hit = cache.get(key);
      if (hit && hit.until > now) return hit.verified.principal;
      if (hit) cache.delete(key);
      const seen = generation;
      const result = kind === 'token' ? await tokens.lookup(raw) : await sessions.lookup(raw);
      if ('reason' in result) return result;
      if (seen === generation) remember(key, result, now);
      return result.principal;
    },
    async lapsedBearers(hashes) {
      const lapsed = new Map<string, LapseReason>();
      if (hashes.length === 0) return lapsed;
      const wanted = [...new Set(hashes)];
      // API tokens and login sessions in one round trip; a session that is gone (logout, a
      // password change, its user disabled or removed) is absent from both.
      const { rows } = await db.query<{ hash: string; lapsed: LapseReason | null }>(
        `SELECT token_hash AS hash,
                CASE WHEN revoked_at IS NOT NULL THEN 'revoked'
                     WHEN expires_at IS NOT NULL AND expires_at <= now() THEN 'expired' END AS lapsed
           FROM pgmcp.tokens WHERE token_hash = ANY($1::text[])
         UNION ALL
         SELECT s.token_hash,
                CASE WHEN u.disabled THEN 'disabled' WHEN s.expires_at <= now() THEN 'expired' END
           FROM pgmcp.sessions s JOIN pgmcp.users u ON u.id = s.user_id
          WHERE s.token_hash = ANY($1::text[])`,
        [wanted],
      );
      const found = new Map(rows.map((row) => [row.hash, row.lapsed]));
      for (const hash of wanted) {
        const reason = found.has(hash) ? (found.get(hash) ?? null) : 'ended';
        if (reason !== null) lapsed.set(hash, reason);
      }
      if (lapsed.size > 0) {
        // A request with one of them must be refused from now on, not in up to cacheTtlMs.
        generation++;
        for (const hash of lapsed.keys()) cache.delete(hash);
      }
      return lapsed;
    },
    async close() {
      cache.clear();
      await audit.close();
      if (options.ownsDb) await db.close();
    },
  };
}

export interface OpenAuthOptions {
  logger: Logger;
  /** See OpenStateOptions.via. */
  via?: OpenStateOptions['via'];
  /** Overrides for tests and benchmarks. */
  scrypt?: ScryptParams;
  slowDown?: SessionStoreOptions['slowDown'];
}

/**
 * Opens the state database the configuration names (state.url, else the embedded database in
 * embedded.dataDir), brings its schema up to date, and builds the authenticator and audit log
 * from the auth and audit sections.
 */
export async function openAuth(config: Config, options: OpenAuthOptions): Promise<Authenticator> {
  const db = await openStateDatabase({
    url: config.state.url,
    dataDir: config.embedded.dataDir,
    logger: options.logger,
    ...(options.via ? { via: options.via } : {}),
  });
  const onError = (error: Error): void =>
    options.logger.warn({ err: { message: error.message } }, 'auth state write failed');
  const audit = createAuditLog({
    db: config.audit.database ? db : null,
    file: config.audit.file,
    onError,
  });
  return createAuth(db, {
    sessionTtlSeconds: config.auth.sessionTtlSeconds,
    cacheTtlMs: config.auth.cacheTtlMs,
    lockout: config.auth.lockout,
    audit,
    onError,
    ownsDb: true,
    ...(options.scrypt ? { scrypt: options.scrypt } : {}),
    ...(options.slowDown ? { slowDown: options.slowDown } : {}),
  });
}
