// What stops or repeats a call on the database side: a cancel sent on a connection of its own,
// the socket of a server that answers nothing dropped; a call whose pooled connection was
// already dead runs again on another, and a read-only call that met a concurrent transaction
// runs once more.
import pg from 'pg';
import type { Logger } from 'pino';
import { AppError, ErrorCodes } from '../core/errors.js';
import { fromPgError } from './errors.js';
import { isConnectionLost } from './host-pool.js';
import { isRetryableConflict } from './server-states.js';

/** How long a statement may go on after its cancel was sent before its socket is dropped. */
export const CANCEL_GRACE_MS = 5_000;

/** Ends a connection's socket at once: its pending query fails, the connection is discarded. */
export function dropSocket(client: pg.PoolClient): void {
  const stream = (client as unknown as { connection?: { stream?: { destroy(e: Error): void } } })
    .connection?.stream;
  stream?.destroy(new Error('the database did not answer in time; connection dropped'));
}

/**
 * Asks the server to cancel a backend's statement, on a connection of its own (bounded by its
 * connect timeout); resolves with whether the request was delivered.
 */
export function createCanceller(
  config: pg.ClientConfig,
  logger: Logger,
): (pid: number) => Promise<boolean> {
  return async (pid) => {
    const client = new pg.Client(config);
    client.on('error', () => undefined); // failures surface through connect/query below
    try {
      await client.connect();
      await client.query('SELECT pg_cancel_backend($1)', [pid]);
      return true;
    } catch (error) {
      logger.warn(
        { err: { message: (error as Error).message } },
        'could not cancel a running query',
      );
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
}

/** Failures of a call whose pooled connection had died before the call used it. */
const deadOnArrival = new WeakSet<object>();

/**
 * Watches what the server says on a checked-out connection. A connection the server ended
 * while it sat idle in the pool (a restart, pg_terminate_backend) answers the call's first
 * message with its FATAL: nothing of the call ran, so it may run again on another connection.
 * A connection that answered nothing at all is not that sure: the server may have run the
 * whole block (BEGIN … COMMIT go in one write) and died before its replies came back, so only
 * a read-only call runs again then. `stop()` ends the watch; `mark(failure, readOnly)` records
 * a lost connection's failure as such.
 */
export function watchArrival(client: pg.PoolClient): {
  stop(): void;
  mark(failure: AppError, readOnly: boolean): void;
} {
  const connection = (client as unknown as { connection?: NodeJS.EventEmitter }).connection;
  let first: string | undefined;
  const onMessage = (message: { name?: string }): void => {
    first ??= message.name ?? 'message';
  };
  connection?.on('message', onMessage);
  return {
    stop: () => connection?.off('message', onMessage),
    mark(failure, readOnly) {
      const lost = failure.code === ErrorCodes.DB_UNAVAILABLE;
      if (connection && lost && (first === 'error' || (first === undefined && readOnly))) {
        deadOnArrival.add(failure);
      }
    },
  };
}

/**
 * Runs a call, and once more (never more) when that is safe: its pooled connection was dead
 * before it was used (nothing of it ran), or, for a read-only call, its connection was lost
 * before any result (after a failover, the next connection reaches the new server), or a
 * serialization failure or a deadlock stopped it (it wrote nothing, and the other transaction
 * has usually finished).
 */
export async function runRetrying<T>(
  tx: { readOnly: boolean; signal?: AbortSignal },
  logger: Logger,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (tx.signal?.aborted) throw error;
    if (deadOnArrival.has(error as object)) {
      logger.info('a pooled connection had been closed by the server; running the call on another');
      return await run();
    }
    if (tx.readOnly && isConnectionLost(error)) return await run();
    const sqlstate = error instanceof AppError ? error.details?.['sqlstate'] : undefined;
    if (!tx.readOnly || !isRetryableConflict(sqlstate)) throw error;
    logger.info({ sqlstate }, 'a read-only call met a concurrent transaction; running it again');
    return await run().catch((again: unknown) => {
      if (!(again instanceof AppError) || !isRetryableConflict(again.details?.['sqlstate']))
        throw again;
      throw fromPgError(again.cause, { readOnly: true, retried: true });
    });
  }
}
