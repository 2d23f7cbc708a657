// Logs always go to stderr: in stdio mode stdout belongs to the protocol.
import { pino, type Logger } from 'pino';
import { currentRequestId } from '../core/request-scope.js';

export function createLogger(level: string): Logger {
  const destination = pino.destination({ fd: 2, sync: false });
  // stderr gone (its terminal closed: EIO; pino itself silences a closed pipe, EPIPE): logging
  // stops, the server goes on. Unheard, the error would end the process, and pino's flush at
  // exit would retry the write forever, deaf to SIGTERM.
  destination.on('error', () => {
    const silent = destination as unknown as Record<string, unknown>;
    for (const method of ['write', 'end', 'flushSync', 'destroy']) silent[method] = () => undefined;
    silent['flush'] = (done?: unknown) => (typeof done === 'function' ? done() : undefined);
  });
  return pino(
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
}
