// What the /api routes need from the composition root.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/index.js';

export interface ApiDeps {
  auth: Authenticator;
  logger: Logger;
  /** The caller's address as the HTTP layer trusts it (proxy headers or the socket). */
  clientAddress(request: FastifyRequest): string;
}
