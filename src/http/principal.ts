// The caller's identity on each request: `request.principal`, ANONYMOUS until the
// authentication hook sets it. Declared here so rate limits (and later routes) can read it
// whichever hook fills it in.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ANONYMOUS, type Principal } from '../core/principal.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
}

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
