// The REST API under /api: thin views of auth (and later tools and catalog). Every answer is
// JSON; every failure is `{"error": "..."}`. Which caller may use a route is declared in its
// `config` (`auth`, `roles`) and enforced by the HTTP layer's hook, and checked again here.
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { registerAdminRoutes } from './admin-routes.js';
import { registerCatalogRoutes } from './catalog-routes.js';
import { registerCompactRoute } from './compact-route.js';
import { registerConversationRoutes } from './conversation-routes.js';
import { registerDatabaseRoutes } from './database-routes.js';
import { registerLlmRoutes } from './llm-routes.js';
import type { ApiDeps } from './deps.js';
import { createErrorHandler, ERROR_RESPONSES } from './errors.js';
import { registerSchemaRoutes } from './schema-routes.js';
import { registerSessionRoutes } from './session-routes.js';
import { useStrictJson } from './validation.js';
import './fastify-types.js';

export type { ApiDeps } from './deps.js';
export type { ApiLlmDeps } from './llm-routes.js';
export { ADMIN_ROLE } from './guard.js';
export { DEFAULT_TOKEN_LIFETIME } from './admin-routes.js';
export type { TokenView, UserView } from './views.js';

export const API_PREFIX = '/api';

/**
 * Adds the /api routes to `app` in a scope of their own (their body parser, schema compiler,
 * error and not-found handlers stay inside it). Hooks `app` has when it starts, such as the
 * HTTP layer's hook that sets `request.principal`, apply to them.
 */
export function registerApiRoutes(app: FastifyInstance, deps: ApiDeps): void {
  void app.register(
    async (scope) => {
      // Registered first in this scope, so it sees every /api route and describes each from
      // the same schemas that validate its requests.
      await scope.register(swagger, {
        openapi: {
          openapi: '3.1.0',
          info: { title: 'pgmcp REST API', version: deps.version ?? '0' },
          components: {
            securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
          },
          security: [{ bearer: [] }],
        },
      });
      // Every route's schema lists the error answers too (its own declarations win), so the
      // document describes them and they serialize as sent.
      scope.addHook('onRoute', (route) => {
        const schema = route.schema ?? {};
        const response = (schema.response ?? {}) as Record<string, unknown>;
        route.schema = { ...schema, response: { ...ERROR_RESPONSES, ...response } };
      });
      useStrictJson(scope);
      scope.setErrorHandler(createErrorHandler(deps.logger));
      scope.setNotFoundHandler((request, reply) =>
        reply
          .code(404)
          .send({ error: `no such endpoint: ${request.method} ${request.url.split('?')[0]}` }),
      );
      registerSessionRoutes(scope, deps);
      registerAdminRoutes(scope, deps);
      if (deps.databases) registerDatabaseRoutes(scope, deps.databases);
      if (deps.registry) registerCatalogRoutes(scope, deps.registry);
      if (deps.databases && deps.catalogOf) {
        registerSchemaRoutes(scope, deps.databases, deps.catalogOf);
      }
      if (deps.llm) registerLlmRoutes(scope, deps.llm, deps.logger);
      registerConversationRoutes(scope, deps.auth.conversations);
      registerCompactRoute(scope);
      scope.get('/openapi.json', { config: { auth: 'optional' } }, async () => scope.swagger());
    },
    { prefix: API_PREFIX },
  );
}
