// What stops or repeats a call on the database side: the socket of a server that answers
// nothing is dropped; a read-only call that met a concurrent transaction runs once more.
import type pg from 'pg';
import type { Logger } from 'pino';
import { AppError } from '../core/errors.js';
import { fromPgError } from './errors.js';
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
 * A read-only call stopped by a serialization failure or a deadlock runs once more: it wrote
 * nothing, and the conflicting transaction has usually finished. Never a read-write one.
 */
export async function retryingConflict<T>(
  tx: { readOnly: boolean; signal?: AbortSignal },
  logger: Logger,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const sqlstate = error instanceof AppError ? error.details?.['sqlstate'] : undefined;
    if (!tx.readOnly || tx.signal?.aborted || !isRetryableConflict(sqlstate)) throw error;
    logger.info({ sqlstate }, 'a read-only call met a concurrent transaction; running it again');
    return await run().catch((again: unknown) => {
      if (!(again instanceof AppError) || !isRetryableConflict(again.details?.['sqlstate']))
        throw again;
      throw fromPgError(again.cause, { readOnly: true, retried: true });
    });
  }
}
