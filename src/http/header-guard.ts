// The last look at every response's headers before they are written: a value Node would refuse
// (a character outside Latin-1, a control character) would turn any answer, a 401 included,
// into a 500. Such a value is rewritten with safeHeaderValue, the one rule for header text; values
// that are already plain ASCII, nearly all of them, are left as they are.
import type { FastifyInstance } from 'fastify';
import { safeHeaderValue, isHeaderSafe } from '../core/header-value.js';

export function registerHeaderGuard(app: FastifyInstance): void {
  app.addHook('onSend', async (_req, reply, payload) => {
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (typeof value === 'string') {
        if (!isHeaderSafe(value)) reply.header(name, safeHeaderValue(value));
      } else if (Array.isArray(value) && value.some((v) => !isHeaderSafe(v))) {
        reply.header(name, value.map(safeHeaderValue));
      }
    }
    return payload;
  });
}
