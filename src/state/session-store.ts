// Login sessions: a user name and password buy a session token, a bearer token like an API
// token (stored as SHA-256 hex, looked up by it), whose expiry lives in the state database so
// sessions survive a restart and work on every instance.
//
// Failures never say whether the user exists: an unknown name, a wrong password and a disabled
// user get the same error after the same scrypt work, and the lock counts names, not users.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { AuditLog } from './audit.js';
import { createLockout, DEFAULT_LOCKOUT, type LockoutPolicy } from './lockout.js';
import {
  bearerKind,
  DEFAULT_SCRYPT,
  hashBearer,
  hashPassword,
  needsRehash,
  newBearerSecret,
  sameDigest,
  spendPasswordWork,
  verifyPassword,
  type ScryptParams,
} from './secrets.js';
import type { StateDb } from './state-db.js';
import type { AuthFailure, InvalidationListener, Verified } from './types.js';
import { createLastUseThrottle } from './validate.js';

export interface LoginResult {
  /** The bearer token of the new session: give it to the client once. */
  readonly sessionToken: string;
  readonly expiresAt: Date;
  readonly principal: Principal;
}

export interface SessionStore {
  /** Throws LOGIN_FAILED (bad name or password) or LOGIN_LOCKED (too many failures). */
  login(username: string, password: string, clientAddress: string | null): Promise<LoginResult>;
  /** Ends the session; true when there was one. */
  logout(sessionToken: string): Promise<boolean>;
  verify(sessionToken: string): Promise<Principal | AuthFailure>;
  lookup(sessionToken: string): Promise<Verified | AuthFailure>;
}

export interface SessionStoreOptions {
  ttlSeconds: number;
  lockout?: LockoutPolicy;
  audit?: AuditLog;
  onInvalidate?: InvalidationListener;
  scrypt?: ScryptParams;
  /** Delay added to the n-th failure in a row: base·2^(n-1), capped (default 250 ms, 4 s). */
  slowDown?: { baseMs: number; maxMs: number };
  lastUseIntervalMs?: number;
  onError?: (error: Error) => void;
}

interface SessionRow {
  id: string;
  token_hash: string;
  expires_at: Date;
  last_used_at: Date | null;
  username: string;
  roles: string[];
  pg_role: string | null;
  disabled: boolean;
}

export function userPrincipal(user: {
  username: string;
  roles: readonly string[];
  pg_role: string | null;
}): Principal {
  return Object.freeze({
    kind: 'user',
    userId: user.username,
    tenantId: null,
    roles: Object.freeze([...user.roles]),
    scopes: Object.freeze([]),
    claims: Object.freeze({}),
    pgRole: user.pg_role,
    boundDatabase: null,
  });
}

const LOGIN_FAILED_MESSAGE = 'Invalid user name or password.';

export function createSessionStore(db: StateDb, options: SessionStoreOptions): SessionStore {
  const params = options.scrypt ?? DEFAULT_SCRYPT;
  const lockout = createLockout(db, options.lockout ?? DEFAULT_LOCKOUT);
  const slowDown = options.slowDown ?? { baseMs: 250, maxMs: 4_000 };
  const touch = createLastUseThrottle(options.lastUseIntervalMs ?? 60_000);
  const onError = options.onError ?? (() => undefined);
  const audit = options.audit;

  const failed = (): AppError =>
    new AppError(ErrorCodes.LOGIN_FAILED, LOGIN_FAILED_MESSAGE, { category: 'auth' });

  const lookup = async (sessionToken: string): Promise<Verified | AuthFailure> => {
    if (bearerKind(sessionToken) !== 'session') return { reason: 'malformed' };
    const hash = hashBearer(sessionToken);
    const { rows } = await db.query<SessionRow>(
      `SELECT s.id, s.token_hash, s.expires_at, s.last_used_at, u.username, u.roles, u.pg_role, u.disabled
         FROM pgmcp.sessions s JOIN pgmcp.users u ON u.id = s.user_id
        WHERE s.token_hash = $1`,
      [hash],
    );
    const row = rows[0];
    if (!row || !sameDigest(row.token_hash, hash)) return { reason: 'unknown' };
    if (row.disabled) return { reason: 'revoked' };
    const now = Date.now();
    if (row.expires_at.getTime() <= now) return { reason: 'expired' };
    if (touch.due(row.id, row.last_used_at, now)) {
      db.query('UPDATE pgmcp.sessions SET last_used_at = now() WHERE id = $1', [row.id]).catch(
        (error: unknown) => onError(error as Error),
      );
    }
    return { principal: userPrincipal(row), expiresAt: row.expires_at, sessionId: row.id };
  };

  return {
    lookup,
    async verify(sessionToken) {
      const result = await lookup(sessionToken);
      return 'reason' in result ? result : result.principal;
    },

    async login(username, password, clientAddress) {
      const name = typeof username === 'string' ? username.trim() : '';
      const actor = { kind: 'user', id: name || null };
      const { retryAfterSeconds } = await lockout.check(name, clientAddress);
      if (retryAfterSeconds > 0) {
        audit?.record({
          event: 'login_locked',
          outcome: 'denied',
          actor,
          clientAddress,
          details: { retry_after_s: retryAfterSeconds },
        });
        throw new AppError(
          ErrorCodes.LOGIN_LOCKED,
          `Too many failed logins. Try again in ${retryAfterSeconds} s.`,
          { category: 'auth', details: { retryAfterSeconds } },
        );
      }

      const { rows } = await db.query<{
        id: string;
        username: string;
        password_hash: string;
        roles: string[];
        pg_role: string | null;
        disabled: boolean;
      }>(
        'SELECT id, username, password_hash, roles, pg_role, disabled FROM pgmcp.users WHERE username = $1',
        [name],
      );
      const user = rows[0];
      let ok = false;
      if (user && typeof password === 'string') {
        ok = await verifyPassword(password, user.password_hash);
        ok = ok && !user.disabled;
      } else {
        await spendPasswordWork(typeof password === 'string' ? password : '', params);
      }

      if (!ok || !user) {
        const outcome = await lockout.recordFailure(name, clientAddress);
        audit?.record({ event: 'login_failed', outcome: 'failure', actor, clientAddress });
        for (const kind of outcome.locked) {
          audit?.record({
            event: 'lockout',
            outcome: 'denied',
            actor,
            clientAddress,
            details: {
              subject: kind,
              failures: kind === 'user' ? outcome.userFailures : undefined,
            },
          });
        }
        const delay = Math.min(
          slowDown.baseMs * 2 ** Math.max(0, outcome.userFailures - 1),
          slowDown.maxMs,
        );
        if (delay > 0) await sleep(delay);
        throw failed();
      }

      await lockout.recordSuccess(name);
      const secret = newBearerSecret('session');
      const id = randomUUID();
      const { rows: created } = await db.query<{ expires_at: Date }>(
        `INSERT INTO pgmcp.sessions (id, token_hash, user_id, expires_at, client_address)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4), $5) RETURNING expires_at`,
        [id, secret.hash, user.id, options.ttlSeconds, clientAddress],
      );
      // Tidy expired sessions and keep the hash up to date with the current parameters.
      db.query('DELETE FROM pgmcp.sessions WHERE expires_at < now()').catch((error: unknown) =>
        onError(error as Error),
      );
      const rehash = needsRehash(user.password_hash, params)
        ? await hashPassword(password, params)
        : null;
      db.query(
        'UPDATE pgmcp.users SET last_login_at = now(), password_hash = coalesce($2, password_hash) WHERE id = $1',
        [user.id, rehash],
      ).catch((error: unknown) => onError(error as Error));
      audit?.record({
        event: 'login',
        outcome: 'success',
        actor: { kind: 'user', id: user.username },
        clientAddress,
      });
      return {
        sessionToken: secret.raw,
        expiresAt: created[0]!.expires_at,
        principal: userPrincipal(user),
      };
    },

    async logout(sessionToken) {
      if (bearerKind(sessionToken) !== 'session') return false;
      const { rows } = await db.query<{ id: string; username: string }>(
        `DELETE FROM pgmcp.sessions s USING pgmcp.users u
          WHERE s.token_hash = $1 AND u.id = s.user_id RETURNING s.id, u.username`,
        [hashBearer(sessionToken)],
      );
      const row = rows[0];
      if (!row) return false;
      options.onInvalidate?.({ sessionId: row.id });
      audit?.record({
        event: 'logout',
        outcome: 'success',
        actor: { kind: 'user', id: row.username },
      });
      return true;
    },
  };
}
