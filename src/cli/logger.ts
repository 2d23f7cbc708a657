// Logs always go to stderr: in stdio mode stdout belongs to the protocol.
import { pino, type Logger } from 'pino';
import { currentRequestId } from '../core/request-scope.js';

export function createLogger(level: string): Logger {
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
    pino.destination({ fd: 2, sync: false }),
  );
}
