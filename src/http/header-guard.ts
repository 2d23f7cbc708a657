// The last look at every response's headers before they are written: a value Node would refuse
// (a character outside Latin-1, a control character) would turn any answer, a 401 included,
// into a 500. Such a value is rewritten with safeHeaderValue, the one rule for header text; values
// that are already plain ASCII, nearly all of them, are left as they are.
import type { FastifyInstance } from 'fastify';
import { safeHeaderValue, isHeaderSafe } from '../core/header-value.js';

export function registerHeaderGuard(app: FastifyInstance): void {
  // A callback hook: it runs for every response, and an async one costs a promise each time.
  app.addHook('onSend', (_req, reply, payload, done) => {
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (typeof value === 'string') {
        if (!isHeaderSafe(value)) reply.header(name, safeHeaderValue(value));
      } else if (Array.isArray(value) && value.some((v) => !isHeaderSafe(v))) {
        reply.header(name, value.map(safeHeaderValue));
      }
    }
    done(null, payload);
  });
}
