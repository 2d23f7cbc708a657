// Failed logins slow down and then lock: per user name (whether or not such a user exists, so
// the lock says nothing about who has an account) and per client address. Counted in the state
// database, so every instance behind a load balancer sees the same counts.
import type { Queryable, StateDb } from './state-db.js';

export interface LockoutPolicy {
  /** Failures of one user name within the window that lock it. */
  maxFailures: number;
  /** Failures from one client address within the window that lock the address. */
  maxFailuresPerAddress: number;
  windowSeconds: number;
  lockSeconds: number;
}

export const DEFAULT_LOCKOUT: LockoutPolicy = Object.freeze({
  maxFailures: 5,
  maxFailuresPerAddress: 20,
  windowSeconds: 900,
  lockSeconds: 900,
});

export interface LockState {
  /** Seconds until the longest lock on this user name or address ends; 0: not locked. */
  retryAfterSeconds: number;
}

export interface FailureOutcome {
  /** Failures of this user name in the window, this one included. */
  userFailures: number;
  /** What this failure locked (nothing, the name, the address, or both). */
  locked: ('user' | 'address')[];
}

export interface Lockout {
  check(username: string, clientAddress: string | null): Promise<LockState>;
  recordFailure(username: string, clientAddress: string | null): Promise<FailureOutcome>;
  /** A successful login clears the name's count (not the address's: one good account must not reset a spray). */
  recordSuccess(username: string): Promise<void>;
}

export function createLockout(db: StateDb, policy: LockoutPolicy): Lockout {
  const lock = (client: Queryable, kind: 'user' | 'address', subject: string): Promise<unknown> =>
    client.query(
      `INSERT INTO pgmcp.lockouts (subject_kind, subject, locked_until)
       VALUES ($1, $2, now() + make_interval(secs => $3))
       ON CONFLICT (subject_kind, subject) DO UPDATE SET locked_until = EXCLUDED.locked_until`,
      [kind, subject, policy.lockSeconds],
    );

  return {
    async check(username, clientAddress) {
      const { rows } = await db.query<{ retry: number | null }>(
        `SELECT ceil(extract(epoch FROM max(locked_until) - now()))::int AS retry
           FROM pgmcp.lockouts
          WHERE locked_until > now()
            AND ((subject_kind = 'user' AND subject = $1) OR (subject_kind = 'address' AND subject = $2))`,
        [username, clientAddress],
      );
      return { retryAfterSeconds: Math.max(0, rows[0]?.retry ?? 0) };
    },

    recordFailure(username, clientAddress) {
      return db.transaction(async (client) => {
        await client.query(
          'INSERT INTO pgmcp.login_attempts (username, client_address) VALUES ($1, $2)',
          [username, clientAddress],
        );
        const { rows } = await client.query<{ by_user: number; by_address: number }>(
          `SELECT
             (SELECT count(*)::int FROM pgmcp.login_attempts
               WHERE username = $1 AND counts_for_user AND at > now() - make_interval(secs => $3)) AS by_user,
             (SELECT count(*)::int FROM pgmcp.login_attempts
               WHERE $2::text IS NOT NULL AND client_address = $2 AND counts_for_address
                 AND at > now() - make_interval(secs => $3)) AS by_address`,
          [username, clientAddress, policy.windowSeconds],
        );
        const byUser = rows[0]?.by_user ?? 0;
        const byAddress = rows[0]?.by_address ?? 0;
        const locked: FailureOutcome['locked'] = [];
        if (byUser >= policy.maxFailures) {
          await lock(client, 'user', username);
          // The count starts again once the lock ends.
          await client.query(
            'UPDATE pgmcp.login_attempts SET counts_for_user = false WHERE username = $1 AND counts_for_user',
            [username],
          );
          locked.push('user');
        }
        if (clientAddress !== null && byAddress >= policy.maxFailuresPerAddress) {
          await lock(client, 'address', clientAddress);
          await client.query(
            'UPDATE pgmcp.login_attempts SET counts_for_address = false WHERE client_address = $1 AND counts_for_address',
            [clientAddress],
          );
          locked.push('address');
        }
        // Old rows are no use to any count; failures are the rare path, so tidy here.
        await client.query(
          'DELETE FROM pgmcp.login_attempts WHERE at < now() - make_interval(secs => $1)',
          [policy.windowSeconds],
        );
        await client.query('DELETE FROM pgmcp.lockouts WHERE locked_until < now()');
        return { userFailures: byUser, locked };
      });
    },

    async recordSuccess(username) {
      await db.query(
        'UPDATE pgmcp.login_attempts SET counts_for_user = false WHERE username = $1 AND counts_for_user',
        [username],
      );
    },
  };
}
