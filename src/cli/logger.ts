// Logs always go to stderr: in stdio mode stdout belongs to the protocol.
import { pino, type Logger } from 'pino';
import { currentRequestId } from '../core/request-scope.js';

/** Each logger's stderr destination, to silence it (below). */
const destinations = new WeakMap<Logger, ReturnType<typeof pino.destination>>();

/** Drops what is still buffered and every later line: stderr can take no more. */
function silence(destination: ReturnType<typeof pino.destination>): void {
  const silent = destination as unknown as Record<string, unknown>;
  for (const method of ['write', 'end', 'flushSync', 'destroy']) silent[method] = () => undefined;
  silent['flush'] = (done?: unknown) => (typeof done === 'function' ? done() : undefined);
}

export function createLogger(level: string): Logger {
  const destination = pino.destination({ fd: 2, sync: false });
  // stderr gone (its terminal closed: EIO; pino itself silences a closed pipe, EPIPE): logging
  // stops, the server goes on. Unheard, the error would end the process, and pino's flush at
  // exit would retry the write forever, deaf to SIGTERM.
  destination.on('error', () => silence(destination));
  const logger = pino(
    {
      level,
      base: { name: 'pgmcp' },
      redact: {
        paths: ['*.password', '*.connectionString', 'password', 'connectionString'],
        censor: '****',
      },
      // Every line written while an HTTP request is served names it (X-Request-Id).
      mixin() {
        const requestId = currentRequestId();
        return requestId === null ? {} : { requestId };
      },
    },
    destination,
  );
  destinations.set(logger, destination);
  return logger;
}

/**
 * Before the process exits: lines still being written get at most `withinMs`, then are dropped.
 * A stderr that takes nothing (a full pipe nobody reads, a terminal paused with Ctrl-S) would
 * otherwise hold the exit forever in pino's final flush, which retries the blocked write.
 */
export function finishLogging(logger: Logger, withinMs = 2_000): Promise<void> {
  const destination = destinations.get(logger);
  // sonic-boom's own flag (flush(cb) answers at once with its default minLength of 0).
  if (!destination || (destination as unknown as { _writing?: boolean })._writing !== true)
    return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      destination.off('drain', drained);
      silence(destination);
      resolve();
    }, withinMs);
    const drained = (): void => {
      clearTimeout(timer);
      resolve();
    };
    destination.once('drain', drained);
  });
}
