// What the HTTP layer adds to every request and what /api routes declare about themselves.
// src/http decorates `principal` and enforces `auth` and `roles` in its onRequest hook; this file
// only states the shapes so both sides type-check against the same contract.
import type { Principal } from '../core/principal.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling (ANONYMOUS without credentials); set before any /api handler runs. */
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** 'optional': anonymous callers get through; 'required': no valid bearer → 401. */
    auth?: 'optional' | 'required';
    /** Roles the caller needs (any one of them); a caller without one → 403. */
    roles?: readonly string[];
  }
}

export {};
