// At most `size` calls hold a connection; the next ones wait in a bounded queue, each for at
// most `queueTimeoutMs`, and a call that finds the queue full is refused at once. Neither the
// wait nor the memory of waiting calls grows without bound when the database is slow.
import { AppError, ErrorCodes } from '../core/errors.js';

export interface PoolGateOptions {
  size: number;
  queueLimit: number;
  queueTimeoutMs: number;
}

export interface PoolGate {
  /** Waits for a place; resolves with the function that gives it back (call it once). */
  acquire(signal?: AbortSignal): Promise<() => void>;
  readonly active: number;
  readonly waiting: number;
}

interface Waiter {
  grant: () => void;
}

export function createPoolGate(options: PoolGateOptions): PoolGate {
  let active = 0;
  const queue: Waiter[] = [];
  const retryAfterSeconds = Math.max(1, Math.ceil(options.queueTimeoutMs / 1000));

  const busy = (why: string, reason: string): AppError =>
    new AppError(
      ErrorCodes.DB_BUSY,
      `All ${options.size} connections to the database are busy and ${why}. Try again in ${retryAfterSeconds} s.`,
      {
        category: 'unavailable',
        details: {
          reason,
          poolSize: options.size,
          queueLimit: options.queueLimit,
          queueTimeoutMs: options.queueTimeoutMs,
          retryAfterSeconds,
        },
      },
    );

  const releaser = (): (() => void) => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = queue.shift();
      // The place passes straight to the next waiter: `active` stays the same.
      if (next) next.grant();
      else active -= 1;
    };
  };

  return {
    get active() {
      return active;
    },
    get waiting() {
      return queue.length;
    },
    acquire(signal) {
      if (active < options.size) {
        active += 1;
        return Promise.resolve(releaser());
      }
      if (queue.length >= options.queueLimit) {
        return Promise.reject(
          busy(
            `${options.queueLimit} calls already wait for one (database.queueLimit)`,
            'queue full',
          ),
        );
      }
      return new Promise((resolve, reject) => {
        const leave = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          const at = queue.indexOf(waiter);
          if (at >= 0) queue.splice(at, 1);
        };
        const waiter: Waiter = {
          grant: () => {
            leave();
            resolve(releaser());
          },
        };
        const timer = setTimeout(() => {
          leave();
          reject(
            busy(
              `none came free in ${options.queueTimeoutMs} ms (database.queueTimeoutMs)`,
              'queue wait timed out',
            ),
          );
        }, options.queueTimeoutMs);
        const onAbort = (): void => {
          leave();
          reject(
            new AppError(ErrorCodes.DB_CANCELLED, 'The request was cancelled.', {
              category: 'input',
            }),
          );
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(waiter);
      });
    },
  };
}
