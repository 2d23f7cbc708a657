// The pool of connections to one database that may live on several hosts (libpq's multi-host
// connection strings; node-postgres knows one host per pool). One pg.Pool serves the host in
// use; when none is in use, or it fails, the hosts are tried again in order (or shuffled, with
// load_balance_hosts=random), each new connection checked against target_session_attrs. A
// host that goes away or is demoted is dropped whole: its idle connections are closed at once
// and its busy ones when they come back, so the next call reaches the host that qualifies now.
import pg from 'pg';
import {
  connectTargets,
  hostLabel,
  type LoadBalanceHosts,
  type TargetSessionAttrs,
} from '../config/multi-host.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { driverUrl } from './driver-url.js';
import { serverStateAnswer } from './server-states.js';
import {
  connectFailure,
  connectionReason,
  isConnectionError,
  isPgError,
  lostConnection,
} from './errors.js';

export interface HostTarget {
  /** `host:port`, for messages and logs (never a password). */
  label: string;
  /** Where the client connects (a socket directory starts with `/`). */
  host: string;
  port: number;
  config: pg.ClientConfig;
}

export interface HostTargets {
  hosts: HostTarget[];
  targetSessionAttrs: TargetSessionAttrs;
  loadBalanceHosts: LoadBalanceHosts;
  /** Per host; null: the pool's own connection timeout. */
  connectTimeoutMs: number | null;
}

/** The hosts of a postgres:// URL (one or several), each as the driver will connect to it. */
export function targetsOfUrl(url: string): HostTargets {
  const targets = connectTargets(url);
  if (typeof targets === 'string') throw new TypeError(`not a usable database URL: ${targets}`);
  return {
    hosts: targets.hosts.map((host) => ({
      label: hostLabel(host),
      host: host.host,
      port: host.port,
      config: { connectionString: driverUrl(targets.urlFor(host)) },
    })),
    targetSessionAttrs: targets.targetSessionAttrs,
    loadBalanceHosts: targets.loadBalanceHosts,
    connectTimeoutMs: targets.connectTimeoutMs,
  };
}

/** One host given as a client configuration (the embedded database's socket). */
export function singleTarget(label: string, config: pg.ClientConfig): HostTargets {
  return {
    hosts: [{ label, host: config.host ?? 'localhost', port: config.port ?? 5432, config }],
    targetSessionAttrs: 'any',
    loadBalanceHosts: 'disable',
    connectTimeoutMs: null,
  };
}

export interface HostPool {
  /** A pooled connection to a host that qualifies; DB_UNAVAILABLE naming every host tried. */
  connect(): Promise<pg.PoolClient>;
  /** One statement on a pooled connection (health, the state database's queries). */
  query<R extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
  /** The client configuration of the host a client is on; without one, of the host in use. */
  clientConfig(client?: pg.PoolClient): pg.ClientConfig;
  /** A client outside the pool that connects to the host that qualifies when it connects. */
  newClient(extra: pg.ClientConfig): pg.Client;
  /**
   * This client's server went away or was demoted: drop every connection to it. A call on
   * another host's connection (already replaced) changes nothing.
   */
  lost(client: pg.PoolClient, why: string): void;
  /** The host in use (`host:port`), or null until a connection qualifies. */
  current(): string | null;
  /** The driver pools open now, one per host connected to (the metrics read them). */
  pools(): pg.Pool[];
  end(): Promise<void>;
}

export interface HostPoolOptions {
  pool: Omit<pg.PoolConfig, 'connectionString' | 'host' | 'port' | 'verify' | 'Client'>;
  /** A connection in the pool failed while idle; its host is dropped too. */
  onIdleError(error: Error, host: string): void;
  /** The host in use changed (or was dropped: null). */
  onSwitch?(host: string | null, previous: string | null, why: string): void;
}

/** Why a server does not qualify for a target_session_attrs (it connected, but is not wanted). */
class NotWanted extends Error {}

type Want = 'any' | 'read-write' | 'read-only' | 'primary' | 'standby';

interface Entry {
  target: HostTarget;
  pool: pg.Pool;
}

/** pg-pool's words when no connection came free in time (the host is not at fault). */
const POOL_WAIT_TIMEOUT = 'timeout exceeded when trying to connect';

const CHECK = `SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') AS ro`;

async function check(client: pg.PoolClient | pg.Client, want: Want): Promise<void> {
  if (want === 'any') return;
  const { rows } = await client.query<{ standby: boolean; ro: string }>(CHECK);
  const { standby, ro } = rows[0] ?? { standby: false, ro: 'off' };
  const readOnly = ro === 'on';
  if (want === 'read-write' && readOnly) {
    throw new NotWanted(standby ? 'is a standby (read-only)' : 'is read-only');
  }
  if (want === 'read-only' && !readOnly) throw new NotWanted('accepts writes');
  if (want === 'primary' && standby) throw new NotWanted('is a standby');
  if (want === 'standby' && !standby) throw new NotWanted('is not a standby');
}

export function createHostPool(targets: HostTargets, options: HostPoolOptions): HostPool {
  const entries = new Map<string, Entry>();
  const hostOf = new WeakMap<object, Entry>();
  let current: Entry | null = null;
  let scanning: Promise<pg.PoolClient> | null = null;
  let ended = false;
  const wanted = targets.targetSessionAttrs;
  const passes: Want[] =
    wanted === 'prefer-standby' ? ['standby', 'any'] : [wanted === 'any' ? 'any' : wanted];

  const open = (target: HostTarget, want: Want): Entry => {
    const timeout = targets.connectTimeoutMs ?? options.pool.connectionTimeoutMillis;
    const pool = new pg.Pool({
      ...options.pool,
      ...target.config,
      ...(timeout !== undefined ? { connectionTimeoutMillis: timeout } : {}),
      verify: (client, done) => {
        check(client, want).then(
          () => done(),
          (error: unknown) => done(error as Error),
        );
      },
    });
    const entry: Entry = { target, pool };
    // A connection that dies while no one listens (during the check above, a one-statement
    // query, between a caller's statements) emits 'error': unheard, that would end the
    // process. The query in flight fails by itself, and a dead client is never reused.
    pool.on('connect', (client) => client.on('error', () => undefined));
    // An idle connection dying (the server shut down or restarted) must not crash the process,
    // and tells that the host is gone: its other connections are dropped with it.
    pool.on('error', (error) => {
      options.onIdleError(error, target.label);
      drop(entry, 'an idle connection failed');
    });
    return entry;
  };

  const drop = (entry: Entry, why: string): void => {
    if (entries.get(entry.target.label) !== entry) return;
    entries.delete(entry.target.label);
    if (current === entry) {
      current = null;
      options.onSwitch?.(null, entry.target.label, why);
    }
    // Idle connections close now; busy ones are closed when they are released.
    void entry.pool.end().catch(() => undefined);
  };

  const order = (): HostTarget[] => {
    const hosts = [...targets.hosts];
    if (targets.loadBalanceHosts === 'random') {
      for (let i = hosts.length - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        [hosts[i], hosts[j]] = [hosts[j]!, hosts[i]!];
      }
    }
    return hosts;
  };

  const scan = async (): Promise<pg.PoolClient> => {
    const refused: { label: string; reason: string; error: unknown }[] = [];
    for (const want of passes) {
      for (const target of order()) {
        const entry = open(target, want);
        try {
          const client = await entry.pool.connect();
          if (ended) {
            client.release();
            void entry.pool.end();
            throw new Error('the pool is closed');
          }
          const old = entries.get(target.label);
          if (old) void old.pool.end().catch(() => undefined);
          entries.set(target.label, entry);
          const previous = current?.target.label ?? null;
          current = entry;
          if (previous !== target.label) options.onSwitch?.(target.label, previous, 'connected');
          return client;
        } catch (error) {
          void entry.pool.end().catch(() => undefined);
          if (ended) throw connectFailure(error);
          refused.push({ label: target.label, reason: reasonOf(error), error });
        }
      }
    }
    throw noHost(refused);
  };

  const noHost = (refused: { label: string; reason: string; error: unknown }[]): AppError => {
    const only = refused.length === 1 ? refused[0]! : null;
    if (only && !(only.error instanceof NotWanted)) return connectFailure(only.error);
    const listed = refused.map((r) => `${r.label} (${r.reason})`).join('; ');
    const what = wanted === 'any' ? '' : ` that matches target_session_attrs=${wanted}`;
    return new AppError(
      ErrorCodes.DB_UNAVAILABLE,
      `The database is unavailable; pgmcp found no host${what}. Tried: ${listed}. Try again shortly.`,
      {
        category: 'unavailable',
        details: {
          reason: `no host${what}`,
          hosts: refused.map((r) => ({ host: r.label, reason: r.reason })),
        },
      },
    );
  };

  const tagged = (client: pg.PoolClient, entry: Entry): pg.PoolClient => {
    hostOf.set(client, entry);
    return client;
  };

  const connect = async (): Promise<pg.PoolClient> => {
    if (ended) throw connectFailure(new Error('the database pool is closed'));
    const inUse = current;
    if (inUse) {
      try {
        return tagged(await inUse.pool.connect(), inUse);
      } catch (error) {
        // Every connection busy past the wait: the pool's limit, not the host's fault.
        if (error instanceof Error && error.message === POOL_WAIT_TIMEOUT)
          throw connectFailure(error);
        // The host in use refused a new connection (down, or no longer what is wanted).
        drop(inUse, reasonOf(error));
      }
    }
    if (scanning) {
      // Another call is trying the hosts: its answer is this call's too (a failure included,
      // so callers waiting during an outage fail together instead of each trying again).
      const failure = await scanning.then(
        () => null,
        (error: unknown) => error,
      );
      if (failure !== null) throw failure;
      if (current) return tagged(await current.pool.connect().catch(rethrow), current);
    }
    scanning = scan();
    try {
      const client = await scanning;
      return tagged(client, current!);
    } finally {
      scanning = null;
    }
  };

  const hostFor = (): HostTarget => current?.target ?? targets.hosts[0]!;

  return {
    connect,
    async query<R extends pg.QueryResultRow>(config: pg.QueryConfig) {
      const client = await connect();
      let broken: Error | undefined;
      try {
        return await client.query<R>(config);
      } catch (error) {
        if (lostConnection(error)) broken = error as Error;
        throw error;
      } finally {
        client.release(broken);
        if (broken) lost(client, 'connection lost');
      }
    },
    clientConfig(client) {
      const entry = client ? hostOf.get(client) : undefined;
      return (entry?.target ?? hostFor()).config;
    },
    newClient(extra) {
      return new ChosenHostClient({ ...hostFor().config, ...extra }, async () => {
        if (!current) (await connect()).release();
        return hostFor();
      });
    },
    lost,
    current: () => current?.target.label ?? null,
    pools: () => [...entries.values()].map((e) => e.pool),
    async end() {
      ended = true;
      const all = [...entries.values()];
      entries.clear();
      current = null;
      await Promise.all(all.map((e) => e.pool.end().catch(() => undefined)));
    },
  };

  function lost(client: pg.PoolClient, why: string): void {
    const entry = hostOf.get(client);
    if (entry) drop(entry, why);
  }
}

function rethrow(error: unknown): never {
  throw connectFailure(error);
}

function reasonOf(error: unknown): string {
  return error instanceof NotWanted ? error.message : connectionReason(error);
}

/**
 * A pg.Client that asks, when it connects, which host to connect to (a LISTEN connection
 * opened after a failover goes to the new primary). Every host shares the user, password,
 * database and TLS settings; only host and port differ.
 */
class ChosenHostClient extends pg.Client {
  readonly #choose: () => Promise<HostTarget>;

  constructor(config: pg.ClientConfig, choose: () => Promise<HostTarget>) {
    super(config);
    this.#choose = choose;
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
  override connect(
    callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void),
  ): Promise<pg.Client> | void {
    const done = this.#choose().then((target) => {
      // pg.Client reads host and port from these fields when it opens the socket.
      const self = this as unknown as { host: string; port: number };
      self.host = target.host;
      self.port = target.port;
      return super.connect();
    });
    if (!callback) return done;
    done.then(
      (client) => (callback as (err: null, c: pg.Client) => void)(null, client),
      (error: Error) => (callback as (err: Error) => void)(error),
    );
  }
}

const LOST = new WeakSet<AppError>();

/**
 * What a call hears when its connection was lost under it, or its server turned out to be
 * demoted: "unavailable, try again", with the reason in plain words (not the server's text).
 */
export function connectionLostError(error: unknown, demoted = false): AppError {
  const code = (error as { code?: unknown }).code;
  // A socket error's code (EPIPE) looks like a SQLSTATE: the server's own errors are the rest.
  const fromServer = isPgError(error) && !isConnectionError(error);
  // The server said why (shutting down, crashed, starting): its state in pgmcp's words.
  const state = fromServer && !demoted ? serverStateAnswer(String(code)) : null;
  const reason = demoted
    ? 'the server no longer accepts writes (it was demoted)'
    : (state?.reason ?? (fromServer ? 'the connection failed' : connectionReason(error)));
  const lostError = new AppError(
    ErrorCodes.DB_UNAVAILABLE,
    state
      ? `The database is unavailable. ${state.message}`
      : `The database is unavailable: the connection to it was lost (${reason}). Try again shortly.`,
    {
      category: 'unavailable',
      // No sqlstate: the answer would lead with it, and the state is said in words.
      details: { reason },
      cause: error,
    },
  );
  // Only a connection that broke (socket closed or reset, server crashed) may be tried again: a
  // session the server ended on purpose (pg_terminate_backend, a shutdown: 57P01) is not, since
  // an administrator who ends a runaway query does not want it run again.
  if (!demoted && (!fromServer || code === '57P02')) LOST.add(lostError);
  return lostError;
}

/** Whether an error is a call's broken connection that may be tried again (connectionLostError). */
export function isConnectionLost(error: unknown): boolean {
  return error instanceof AppError && LOST.has(error);
}
