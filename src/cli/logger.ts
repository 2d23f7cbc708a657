// Logs always go to stderr: in stdio mode stdout belongs to the protocol.
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      base: { name: 'pgmcp' },
      redact: {
        paths: ['*.password', '*.connectionString', 'password', 'connectionString'],
        censor: '****',
      },
    },
    pino.destination({ fd: 2, sync: false }),
  );
}
