// Defence in depth: the HTTP layer's hook already enforces each route's `auth` and `roles`;
// these checks run again in the handlers so a route can never be served open by a wiring slip.
import type { FastifyRequest } from 'fastify';
import type { ChangeContext } from '../auth/index.js';
import { bearerFromHeader } from '../auth/index.js';
import { actorOf } from '../state/index.js';
import { holdsRole, type Principal } from '../core/principal.js';
import { ApiError, BEARER_CHALLENGE } from './errors.js';

export const ADMIN_ROLE = 'admin';

/** The caller, or 401 when anonymous. */
export function signedIn(request: FastifyRequest): Principal {
  const principal = request.principal;
  if (!principal || principal.kind === 'anonymous') {
    throw new ApiError(401, 'authentication required', { 'www-authenticate': BEARER_CHALLENGE });
  }
  return principal;
}

/** The caller when it holds one of `roles`; 401 when anonymous, 403 otherwise. */
export function withRole(request: FastifyRequest, roles: readonly string[]): Principal {
  const principal = signedIn(request);
  if (!holdsRole(principal, roles)) {
    throw new ApiError(403, `this needs the ${roles.join(' or ')} role`);
  }
  return principal;
}

/** The raw bearer token of the request, or null. */
export function bearerOf(request: FastifyRequest): string | null {
  return bearerFromHeader(request.headers.authorization);
}

/** Who made a change and from where, for the audit log. */
export function changeContext(principal: Principal, clientAddress: string): ChangeContext {
  return { actor: actorOf(principal), clientAddress };
}
