// What the /api routes need from the composition root.
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/index.js';
import type { Catalog } from '../catalog/index.js';
import type { Metrics } from '../core/metrics.js';
import type { DatabaseDirectory } from '../tools/databases.js';
import type { Registry } from '../tools/registry.js';
import type { ApiLlmDeps } from './llm-routes.js';

export interface ApiDeps {
  auth: Authenticator;
  logger: Logger;
  /** The server's version, for the OpenAPI document. */
  version?: string;
  /** The configured databases (GET /api/databases); absent: no database routes. */
  databases?: DatabaseDirectory;
  /** Each configured database's catalog (GET /api/schema); absent: no schema route. */
  catalogOf?: (database: string) => Catalog | undefined;
  /** The LLM providers and the chat loop (/api/llm/*, /api/chat); absent: no such routes. */
  llm?: ApiLlmDeps;
  /** The tools, resources and prompts (GET /api/tools …); absent: no such routes. */
  registry?: Registry;
  /**
   * Whether anonymous callers are refused on the guarded /api routes (the HTTP layer's
   * auth.required); GET /api/user/info tells anonymous callers. Absent: false.
   */
  signInRequired?: boolean;
  /** The caller's address as the HTTP layer trusts it (proxy headers or the socket). */
  clientAddress(request: FastifyRequest): string;
  /** Counts failed sign-ins (the HTTP layer counts refused bearers itself). */
  metrics?: Metrics;
}
