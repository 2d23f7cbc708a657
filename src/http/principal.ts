// The caller's identity on each request: `request.principal`, ANONYMOUS until the
// authentication hook sets it. Its type is declared once, with the route config /api uses, in
// api/fastify-types.ts; this adds the decoration, so rate limits and routes can read it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import '../api/fastify-types.js';
import { ANONYMOUS, type Principal } from '../core/principal.js';

const assigned = new WeakMap<FastifyRequest, Principal>();

/** Adds the `principal` request decoration once; a second call (another module) is a no-op. */
export function declarePrincipal(app: FastifyInstance): void {
  if (app.hasRequestDecorator('principal')) return;
  // A getter, because Fastify refuses an object as a decoration's shared default value.
  app.decorateRequest('principal', {
    getter(this: FastifyRequest): Principal {
      return assigned.get(this) ?? ANONYMOUS;
    },
    setter(this: FastifyRequest, value: Principal): void {
      assigned.set(this, value);
    },
  });
}
