// Server→client requests (sampling, elicitation, roots) on one connection or session:
// ids we allocate, and the client's replies routed back to the waiting call.
import { AppError, ErrorCodes } from '../core/errors.js';
import { isObject, type JsonRpcId } from './jsonrpc.js';

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface Outbound {
  /** Send a request through `send` and wait for the client's answer. */
  request(
    send: (message: Record<string, unknown>) => void,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs?: number,
  ): Promise<unknown>;
  /** Route a response from the client; false when no request of ours has that id. */
  settle(message: Record<string, unknown>): boolean;
  /** Fail everything still waiting (connection or session gone). */
  closeAll(reason: string): void;
}

export function createOutbound(prefix = 's'): Outbound {
  const pending = new Map<JsonRpcId, Pending>();
  let counter = 0;
  return {
    request(send, method, params, signal, timeoutMs = 300_000) {
      const id = `${prefix}-${++counter}`;
      return new Promise((resolve, reject) => {
        const cleanup = (): void => {
          pending.delete(id);
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        };
        const onAbort = (): void => {
          cleanup();
          reject(
            new AppError(ErrorCodes.DB_CANCELLED, 'The request was cancelled.', {
              category: 'input',
            }),
          );
        };
        const timer = setTimeout(() => {
          cleanup();
          send({
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId: id, reason: 'timeout' },
          });
          reject(
            new AppError(ErrorCodes.DB_TIMEOUT, `The client did not answer ${method} in time.`, {
              category: 'timeout',
            }),
          );
        }, timeoutMs);
        timer.unref?.();
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        pending.set(id, {
          resolve: (v) => (cleanup(), resolve(v)),
          reject: (e) => (cleanup(), reject(e)),
        });
        send({ jsonrpc: '2.0', id, method, params });
      });
    },
    settle(message) {
      const id = message['id'];
      if (typeof id !== 'string' && typeof id !== 'number') return false;
      const waiter = pending.get(id);
      if (!waiter) return false;
      const error = message['error'];
      if (isObject(error)) {
        waiter.reject(
          new AppError(
            ErrorCodes.CAPABILITY_MISSING,
            `The client refused the request: ${String(error['message'])}`,
            {
              category: 'input',
              details: { clientError: error },
            },
          ),
        );
      } else {
        waiter.resolve(message['result']);
      }
      return true;
    },
    closeAll(reason) {
      for (const waiter of pending.values()) {
        waiter.reject(new AppError(ErrorCodes.DB_CANCELLED, reason, { category: 'unavailable' }));
      }
      pending.clear();
    },
  };
}
