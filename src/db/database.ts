// The one way code reaches PostgreSQL. The pool stays inside: a call reaches it through
// runStatement(), withCall() or withTransaction(), each giving it one guarded connection whose
// settings, role and identity are transaction-local (so PgBouncer in transaction mode works).
import type pg from 'pg';
import type { Logger } from 'pino';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import { createCallSession, type CallSession } from './call-session.js';
import { createSessionSettings } from './session-settings.js';
import type { EmbeddedDatabase } from './embedded/index.js';
import type { DatabaseOptions } from './database-options.js';
import { fromPgError, lostConnection } from './errors.js';
import { createPoolGate } from './pool-gate.js';
import {
  CANCEL_GRACE_MS,
  createCanceller,
  dropSocket,
  runRetrying,
  watchArrival,
} from './interrupt.js';
import {
  connectionLostError,
  singleTarget,
  targetsOfUrl,
  type HostPool,
  type HostTargets,
} from './host-pool.js';
import { PG_TYPES } from './pg-types.js';
import { openPools } from './pools.js';
import { callSettings, closing, opening } from './call-blocks.js';
import { credentialsOfUrl, livePassword, type LivePassword } from './live-password.js';
import type { ReplicaState } from './replicas.js';
import { databaseNameOf } from './names.js';
import { poolStatsOf, type PoolStats } from './pool-stats.js';
import { tracedClient } from './traced.js';
import {
  runPipelined,
  transactionStatus,
  type PipelineResult,
  type PipelineStep,
} from './pipeline.js';
export type { DatabaseOptions } from './database-options.js';
export interface TransactionOptions {
  readOnly: boolean;
  timeoutMs: number;
  principal: Principal;
  signal?: AbortSignal;
  /**
   * After a read-write block (withCall, runStatement): keep the connection and re-apply its
   * settings before the next call (a generated call of a known routine or handler), instead
   * of retiring it (a caller's own statement: default).
   */
  keepAfterWrite?: boolean;
  /** Read-only work that may run on a read replica (database.readReplicas; see replicas.ts). */
  replicaOk?: boolean;
}

export interface StatementRun extends TransactionOptions {
  sql: string;
  params: unknown[];
  offset: number;
  limit: number;
  maxBytes: number;
}

export interface Database {
  readonly kind: 'postgres' | 'embedded';
  /** The database's name, for serverInfo and health (never the URL: it may hold a password). */
  readonly name: string;
  readonly embedded: EmbeddedDatabase | null;
  /**
   * One statement with the safety settings, in one round trip and one implicit transaction;
   * rows read with offset, limit (+1 to detect more) and a byte cap.
   */
  runStatement(run: StatementRun): Promise<PipelineResult>;
  /**
   * One call on one guarded connection: its lookups and its statement under the same
   * settings, role and identity (see CallSession for the round trips).
   */
  withCall<T>(options: TransactionOptions, work: (session: CallSession) => Promise<T>): Promise<T>;
  /** Several statements of one call in one transaction (BEGIN and the settings in one trip). */
  withTransaction<T>(
    options: TransactionOptions,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T>;
  /**
   * pgmcp's own work, never a call's (the exchange log, install, doctor): a pooled connection
   * as the login role, without the call settings. It must come back idle.
   */
  withOwnConnection<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** A new connection outside the pool (LISTEN needs its own); the caller ends it. */
  openClient(extra?: pg.ClientConfig): pg.Client;
  health(): Promise<{ ok: boolean; database: string }>;
  /** New connections log in with this password (a rotated one); false: the URL had none. */
  setPassword(password: string): boolean;
  /** Each read replica's state (database.readReplicas); empty without replicas. */
  replicaStates(): Promise<ReplicaState[]>;
  /** New connections to read replica `index` log in with this password; false: cannot. */
  setReplicaPassword(index: number, password: string): boolean;
  /** The pool's connections now: its size, open, idle and callers waiting (for metrics). */
  poolStats(): PoolStats;
  close(): Promise<void>;
}

export { RESERVED_ROLE_WORDS } from './call-role.js';

export async function createDatabase(options: DatabaseOptions, logger: Logger): Promise<Database> {
  let embedded: EmbeddedDatabase | null = null;
  let targets: HostTargets;
  let credentials: LivePassword | null = null;
  let name: string;
  if (options.url === null) {
    // Loaded only here: a server on PostgreSQL never needs the embedded database's code.
    const { startEmbedded } = await import('./embedded/index.js');
    embedded = await startEmbedded({
      dataDir: options.embedded.dataDir,
      seedDemo: options.embedded.demo,
      logger,
    });
    targets = singleTarget('embedded', embedded.connection);
    name = options.name ?? databaseNameOf(null);
  } else {
    // One host or several (libpq's multi-host URL): the host pool picks the one to use.
    targets = targetsOfUrl(options.url);
    credentials = livePassword(targets);
    name = options.name ?? databaseNameOf(options.url);
  }
  // PGlite has one backend session: more than one connection would share its state.
  const poolMax = embedded ? 1 : options.poolSize;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const primaryLogin =
    credentials && options.url
      ? { user: credentialsOfUrl(options.url).user, password: credentials }
      : null;
  const opened = { poolMax, connectTimeoutMs, name, logger, primaryLogin };
  const { pool, router } = openPools(targets, options, opened);
  // Calls beyond the pool's size wait in a bounded queue, for a bounded time (PGMCP212).
  const gate = createPoolGate({
    size: poolMax,
    queueLimit: options.queueLimit ?? 100,
    queueTimeoutMs: options.queueTimeoutMs ?? 10_000,
  });
  const sessions = createSessionSettings({
    direct: embedded !== null,
    onPooler: (detail) =>
      logger.warn(
        detail,
        'a connection pooler sits between pgmcp and PostgreSQL (the backend pid differs from the startup one): every call carries all its settings',
      ),
  });

  /**
   * Ask the server the connection is on to cancel a running statement (real PostgreSQL; PGlite
   * ignores cancels); false when the request could not be delivered.
   */
  const cancelBackend = (from: HostPool, on: pg.PoolClient, pid: number): Promise<boolean> =>
    createCanceller(
      { ...from.clientConfig(on), connectionTimeoutMillis: connectTimeoutMs },
      logger,
    )(pid);

  /**
   * Check out a client and run `body` under the guards every call gets: cancellation (the
   * caller's signal), a timer (the embedded database's only timeout; a backstop elsewhere),
   * and error classification. An interrupted or dirty connection is never reused.
   */
  const guardedOnce = async <T>(
    tx: TransactionOptions,
    body: (
      client: pg.PoolClient,
      markBroken: (error: Error) => void,
      settings: PipelineStep | null,
    ) => Promise<T>,
  ): Promise<T> => {
    if (tx.signal?.aborted) {
      throw new AppError(ErrorCodes.DB_CANCELLED, 'The request was cancelled.', {
        category: 'input',
      });
    }
    // A call arriving while the embedded child restarts (after a timeout) waits for it.
    if (embedded) await embedded.whenReady();
    const leave = await gate.acquire(tx.signal);
    // The primary, or a replica for a call marked replicaOk (replicas.ts).
    const { client, pool: from } = await router.connect(tx).catch((error: unknown) => {
      leave();
      throw error;
    });
    let abandon: NodeJS.Timeout | undefined;
    let cancelled = false;
    let timedOut = false;
    let broken: Error | undefined;
    // The pool listens for 'error' only on idle clients: a checked-out client whose connection
    // dies (embedded child restarted, server shutdown) would otherwise crash the process. The
    // query in flight fails by itself; the connection is discarded on release.
    const onConnectionError = (error: Error): void => void (broken = error);
    client.on('error', onConnectionError);
    const arrival = embedded ? null : watchArrival(client);
    const pid = (client as unknown as { processID?: number }).processID;
    const stop = (why: 'cancel' | 'timeout'): void => {
      if (why === 'cancel') cancelled = true;
      else timedOut = true;
      if (embedded) {
        // PGlite ignores statement_timeout and cancel requests: only a restart stops it.
        void embedded.restart(why === 'cancel' ? 'query cancelled' : 'statement timeout');
      } else if (pid !== undefined) {
        // A server that cannot be asked (a stalled network) or does not stop the statement
        // loses the connection: the call must not wait on a socket forever.
        void cancelBackend(from, client, pid).then(
          (sent) => sent || abandon === undefined || dropSocket(client),
        );
        abandon ??= setTimeout(() => dropSocket(client), CANCEL_GRACE_MS);
      }
    };
    const onAbort = (): void => stop('cancel');
    tx.signal?.addEventListener('abort', onAbort, { once: true });
    const guard = setTimeout(() => stop('timeout'), embedded ? tx.timeoutMs : tx.timeoutMs + 5_000);
    try {
      const settings = await sessions.prepare(client, callSettings(tx, options.role));
      return await body(
        client,
        (error) => {
          broken = error;
        },
        settings,
      );
    } catch (error) {
      // A plain server ERROR, or a tool's own refusal between statements, leaves the session
      // usable; anything else (FATAL, a lost socket) retires the connection, even if the
      // socket's 'error' event has not arrived yet.
      const refusal = error instanceof AppError && error.code !== ErrorCodes.RESULT_TOO_LARGE;
      if (!refusal && (error as { severity?: unknown }).severity !== 'ERROR') {
        broken ??= error instanceof Error ? error : new Error(String(error));
      }
      if (timedOut) {
        throw new AppError(
          ErrorCodes.DB_TIMEOUT,
          `The query timed out (limit ${tx.timeoutMs} ms). Narrow it (filters, LIMIT, indexed columns) or ask for a higher statement timeout.`,
          {
            category: 'timeout',
            details: { sqlstate: '57014', timeoutMs: tx.timeoutMs },
            cause: error,
          },
        );
      }
      // The server went away or was demoted (a read-write block refused as read-only): its
      // other connections go too, and the caller hears "unavailable, try again".
      const demoted = !tx.readOnly && (error as { code?: unknown }).code === '25006';
      if (!timedOut && !cancelled && (lostConnection(error) || demoted)) {
        from.lost(client, demoted ? 'the server is read-only (demoted)' : 'connection lost');
        const lost = connectionLostError(error, demoted);
        arrival?.mark(lost, tx.readOnly);
        throw lost;
      }
      if (cancelled && embedded) {
        // The restart that stopped PGlite shows up as a lost connection: say what happened.
        throw new AppError(ErrorCodes.DB_CANCELLED, 'The query was cancelled.', {
          category: 'input',
          details: { sqlstate: '57014' },
          cause: error,
        });
      }
      const failure = fromPgError(error, {
        timeoutMs: tx.timeoutMs,
        cancelled,
        readOnly: tx.readOnly,
      });
      arrival?.mark(failure, tx.readOnly);
      throw failure;
    } finally {
      clearTimeout(guard);
      clearTimeout(abandon);
      abandon = undefined;
      arrival?.stop();
      tx.signal?.removeEventListener('abort', onAbort);
      client.off('error', onConnectionError);
      // Whatever a statement did to the session, the next call must start clean.
      if (!broken && transactionStatus(client) !== 'I')
        broken = new Error('left inside a transaction');
      client.release(broken ?? (timedOut || cancelled ? new Error('interrupted') : undefined));
      router.done(tx);
      leave();
    }
  };

  /** A call runs once more when that is safe (runRetrying, interrupt.ts), never more. */
  const guarded: typeof guardedOnce = (tx, body) =>
    runRetrying(tx, logger, () => guardedOnce(tx, body));

  const withTransaction = <T>(
    tx: TransactionOptions,
    work: (client: pg.PoolClient) => Promise<T>,
  ): Promise<T> =>
    guarded(tx, async (client, markBroken, settings) => {
      try {
        // BEGIN and the settings in one round trip; the block stays open for `work`.
        const [begin, ...rest] = opening(tx, settings);
        await runPipelined(client, rest.length ? [begin!] : [], rest[0] ?? begin!, {
          offset: 0,
          limit: 0,
          maxBytes: 0,
        });
        const result = await work(tracedClient(client, name));
        await client.query(closing(tx).text);
        // A committed block may have run a caller's code that changed the session.
        if (!tx.readOnly) sessions.forget(client);
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(markBroken);
        throw error;
      }
    });

  const withCall = <T>(
    tx: TransactionOptions,
    work: (session: CallSession) => Promise<T>,
  ): Promise<T> =>
    guarded(tx, async (client, markBroken, settings) => {
      const { session, finish } = createCallSession({
        client,
        readOnly: tx.readOnly,
        opening: opening(tx, settings),
        closing: closing(tx),
        types: PG_TYPES,
        role: callSettings(tx, options.role).role,
        database: name,
        markBroken,
        afterWrite: tx.keepAfterWrite
          ? () => sessions.forget(client)
          : () => markBroken(new Error('retired after a read-write statement')),
      });
      try {
        return await work(session);
      } finally {
        await finish();
      }
    });

  const runStatement = (run: StatementRun): Promise<PipelineResult> =>
    withCall(run, (session) =>
      session.run(
        { text: run.sql, values: run.params },
        { offset: run.offset, limit: run.limit, maxBytes: run.maxBytes, types: PG_TYPES },
      ),
    );

  const withOwnConnection = async <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    if (embedded) await embedded.whenReady();
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      // The login role and the server's defaults, not the calls' base.
      await sessions.resetForOwnUse(client);
      return await work(client);
    } catch (error) {
      if ((error as { severity?: unknown }).severity !== 'ERROR')
        broken = error instanceof Error ? error : new Error(String(error));
      if (lostConnection(error)) pool.lost(client, 'connection lost');
      throw error;
    } finally {
      if (!broken && transactionStatus(client) !== 'I')
        broken = new Error('left inside a transaction');
      client.release(broken);
    }
  };

  return {
    kind: embedded ? 'embedded' : 'postgres',
    name,
    embedded,
    withCall,
    withTransaction,
    withOwnConnection,
    runStatement,
    openClient: (extra = {}) =>
      pool.newClient({ types: PG_TYPES, connectionTimeoutMillis: connectTimeoutMs, ...extra }),
    health: () =>
      pool.query({ text: 'SELECT 1' }).then(
        () => ({ ok: true, database: 'up' }),
        () => ({ ok: false, database: 'unreachable' }),
      ),
    setPassword: (password) => (credentials ? (credentials.set(password), true) : false),
    replicaStates: () => router.states(),
    setReplicaPassword: (index, password) => router.setPassword(index, password),
    poolStats: () => poolStatsOf(pool.pools(), poolMax),
    async close() {
      await Promise.all([pool.end().catch(() => undefined), router.end()]);
      await embedded?.stop();
    },
  };
}
