// Read replicas (database.readReplicas): where a call's connection comes from. A call marked
// replicaOk (read-only work that may see data a moment old) goes to a usable replica; every
// other call, and a caller's reads shortly after their own write, go to the primary. A
// replica is usable when its last check (at most one a second, run in the background) found
// it up and its replay no further behind than replicaMaxLagMs. With none usable, the primary.
import type pg from 'pg';
import type { Principal } from '../core/principal.js';
import { noteServer } from '../core/request-scope.js';
import { AppError } from '../core/errors.js';
import { connectionReason } from './errors.js';
import { createHostPool, targetsOfUrl, type HostPool, type HostPoolOptions } from './host-pool.js';
import { credentialsOfUrl, passwordFrom, type LivePassword } from './live-password.js';

export interface ReplicaSettings {
  /** postgres:// URLs (one host or several each). */
  urls: readonly string[];
  maxLagMs: number;
  readYourWritesMs: number;
}

/** What a call is routed by (a subset of TransactionOptions). */
export interface RoutedCall {
  readOnly: boolean;
  replicaOk?: boolean;
  principal: Principal;
}

export interface Routed {
  client: pg.PoolClient;
  /** The pool the client came from (to drop its host, or cancel on its server). */
  pool: HostPool;
}

export interface CallRouter {
  connect(call: RoutedCall): Promise<Routed>;
  /** The call ended: a write starts (again) its caller's read-your-writes window. */
  done(call: RoutedCall): void;
  /** Each replica's state (checked now when its last check is over a second old): /health. */
  states(): Promise<ReplicaState[]>;
  /**
   * New connections to replica `index` log in with this password (its URL's password rotated);
   * false when its URL carried none and it does not follow the primary's.
   */
  setPassword(index: number, password: string): boolean;
  /** The replica pools (metrics), and closing them. */
  pools(): pg.Pool[];
  end(): Promise<void>;
}

/** How often at most a replica's state is asked. */
const CHECK_EVERY_MS = 1000;

// Caught up (everything received is replayed): no lag, however long ago the last write was.
const LAG = `SELECT CASE WHEN NOT pg_is_in_recovery()
  OR pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
  ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()) * 1000, 0)
  END::float8 AS lag_ms`;

export interface ReplicaState {
  /** Its hosts, `host:port` each (never a user or password). */
  replica: string;
  usable: boolean;
  /** Why: the replay lag, or why it cannot be reached (the reason, never a password). */
  reason: string;
}

/** The primary's login, which a replica URL without a password of its own follows. */
export interface PrimaryLogin {
  user: string;
  password: LivePassword;
}

interface Replica {
  pool: HostPool;
  label: string;
  /** Where its password comes from: null when its URL has none and it follows no primary. */
  password: { own: string | null } | null;
  usable: boolean;
  reason: string;
  checkedAt: number;
  checking: Promise<void> | null;
}

/** Why a replica cannot be reached, in words safe to show: no password, no URL. */
function safeReason(error: unknown): string {
  const reason = error instanceof AppError ? error.details?.['reason'] : undefined;
  return typeof reason === 'string' ? reason : connectionReason(error);
}

const callerKey = (p: Principal): string => `${p.kind}:${p.tokenId ?? p.userId ?? ''}`;

export function createCallRouter(
  primary: HostPool,
  settings: ReplicaSettings,
  poolOptions: HostPoolOptions,
  onState: (replica: string, usable: boolean, why: string) => void,
  primaryLogin: PrimaryLogin | null = null,
): CallRouter {
  const primaryPassword = (): string => primaryLogin?.password.get() ?? '';
  const replicas: Replica[] = settings.urls.map((url) => {
    const targets = targetsOfUrl(url);
    // The primary's user with no password of its own, or the primary's password: it follows the
    // primary's (a rotation of the primary's reaches it). Another password is its own, rotated
    // alone; another user without one logs in as the driver would (PGPASSWORD, .pgpass).
    const { user, password: given } = credentialsOfUrl(url);
    const follows =
      primaryLogin !== null &&
      user === primaryLogin.user &&
      (given === '' || given === primaryPassword());
    const password = follows ? { own: null } : given !== '' ? { own: given } : null;
    if (password) passwordFrom(targets, () => password.own ?? primaryPassword());
    return {
      pool: createHostPool(targets, poolOptions),
      label: targets.hosts.map((h) => h.label).join(','),
      password,
      usable: false,
      reason: 'not checked yet',
      checkedAt: 0,
      checking: null,
    };
  });
  const lastWrite = new Map<string, number>();
  let next = 0;

  const check = (replica: Replica): Promise<void> => {
    replica.checkedAt = Date.now();
    replica.checking ??= replica.pool
      .query<{ lag_ms: number }>({ text: LAG })
      .then(
        ({ rows }) => {
          const lag = rows[0]?.lag_ms ?? 0;
          const usable = lag <= settings.maxLagMs;
          const why = `replay lag ${Math.round(lag)} ms (limit ${settings.maxLagMs})`;
          if (usable !== replica.usable) onState(replica.pool.current() ?? '?', usable, why);
          replica.usable = usable;
          replica.reason = why;
        },
        (error: unknown) => {
          const why = safeReason(error);
          if (replica.usable) onState(replica.pool.current() ?? replica.label, false, why);
          replica.usable = false;
          replica.reason = why;
        },
      )
      .finally(() => {
        replica.checking = null;
      });
    return replica.checking;
  };

  const pick = async (): Promise<Replica | null> => {
    const now = Date.now();
    // Never checked: the first call waits for the answer; later ones use the last one known.
    await Promise.all(replicas.filter((r) => r.checkedAt === 0).map(check));
    for (const r of replicas) if (now - r.checkedAt >= CHECK_EVERY_MS) void check(r);
    const usable = replicas.filter((r) => r.usable);
    if (usable.length === 0) return null;
    next = (next + 1) % usable.length;
    return usable[next]!;
  };

  const recentWriter = (principal: Principal): boolean => {
    const at = lastWrite.get(callerKey(principal));
    if (at === undefined) return false;
    if (Date.now() - at < settings.readYourWritesMs) return true;
    lastWrite.delete(callerKey(principal));
    return false;
  };

  const noteWrite = (call: RoutedCall): void => {
    if (!call.readOnly && settings.readYourWritesMs > 0 && replicas.length > 0)
      lastWrite.set(callerKey(call.principal), Date.now());
  };

  return {
    async connect(call) {
      noteWrite(call);
      if (call.readOnly && call.replicaOk && replicas.length > 0 && !recentWriter(call.principal)) {
        const replica = await pick();
        if (replica) {
          try {
            const client = await replica.pool.connect();
            noteServer(replica.pool.current());
            return { client, pool: replica.pool };
          } catch (error) {
            // Down since its last check: skipped until a check finds it back.
            replica.usable = false;
            replica.reason = safeReason(error);
          }
        }
      }
      const client = await primary.connect();
      noteServer(primary.current());
      return { client, pool: primary };
    },
    done: noteWrite,
    async states() {
      // What the last checks found; a check that is due starts, unawaited: a replica that does
      // not answer must not hold /health (a load balancer's probe) for a connect timeout.
      const now = Date.now();
      for (const r of replicas) if (now - r.checkedAt >= CHECK_EVERY_MS) void check(r);
      return replicas.map((r) => ({ replica: r.label, usable: r.usable, reason: r.reason }));
    },
    setPassword(index, password) {
      const replica = replicas[index];
      if (!replica?.password) return false;
      // The primary's password again: it follows the primary's from now on.
      replica.password.own = primaryLogin && password === primaryPassword() ? null : password;
      return true;
    },
    pools: () => replicas.flatMap((r) => r.pool.pools()),
    async end() {
      await Promise.all(replicas.map((r) => r.pool.end().catch(() => undefined)));
    },
  };
}

export const NO_REPLICAS: ReplicaSettings = { urls: [], maxLagMs: 5000, readYourWritesMs: 5000 };
