// What the /api routes need from the composition root.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/index.js';
import type { DatabaseDirectory } from '../tools/databases.js';
import type { ApiLlmDeps } from './llm-routes.js';

export interface ApiDeps {
  auth: Authenticator;
  logger: Logger;
  /** The server's version, for the OpenAPI document. */
  version?: string;
  /** The configured databases (GET /api/databases); absent: no database routes. */
  databases?: DatabaseDirectory;
  /** The LLM providers and the chat loop (/api/llm/*, /api/chat); absent: no such routes. */
  llm?: ApiLlmDeps;
  /** The caller's address as the HTTP layer trusts it (proxy headers or the socket). */
  clientAddress(request: FastifyRequest): string;
}
