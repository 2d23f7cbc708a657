// GET /api/databases and POST /api/databases/select (pgEdge-compatible): the databases a caller may use,
// and the one its requests use by default. The selection belongs to the caller's token or
// user (everyone's, when nobody signs in); an MCP session keeps its own (select_database_connection).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import type { DatabaseDirectory } from '../tools/databases.js';

const DATABASE_VIEW = {
  type: 'object',
  required: ['name', 'host', 'port', 'database', 'user', 'sslmode'],
  properties: {
    name: { type: 'string' },
    host: { type: 'string' },
    port: { type: ['integer', 'null'] },
    database: { type: 'string' },
    user: { type: 'string' },
    sslmode: { type: 'string' },
  },
} as const;

const SELECT_BODY = {
  type: 'object',
  properties: { name: { type: 'string', description: 'The database to select.' } },
} as const;

const SELECT_ANSWER = {
  type: 'object',
  required: ['success'],
  properties: {
    success: { type: 'boolean' },
    current: { type: 'string' },
    message: { type: 'string' },
    error: { type: 'string' },
  },
} as const;

// The other statuses are also answered by the shared error handler (`{"error": …}` for a body
// that is not JSON, a guard's refusal), which has no `success`: requiring it there made the
// serializer fail and the answer a 500.
const SELECT_REFUSAL = {
  type: 'object',
  properties: SELECT_ANSWER.properties,
} as const;

const principalOf = (request: FastifyRequest): Principal => request.principal ?? ANONYMOUS;

const refuse = (reply: FastifyReply, status: number, error: string): FastifyReply =>
  reply.code(status).send({ success: false, error });

export function registerDatabaseRoutes(scope: FastifyInstance, directory: DatabaseDirectory): void {
  scope.get(
    '/databases',
    {
      schema: {
        response: {
          200: {
            type: 'object',
            required: ['databases', 'current'],
            properties: {
              databases: { type: 'array', items: DATABASE_VIEW },
              current: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return {
        databases: directory.visibleTo(principal).map((t) => ({ name: t.name, ...t.location })),
        current: directory.currentFor(principal, null),
      };
    },
  );

  scope.post<{ Body: { name?: unknown } | undefined }>(
    '/databases/select',
    {
      // Any malformed body is the pgEdge agent's 400, not a schema message.
      attachValidation: true,
      schema: {
        body: SELECT_BODY,
        response: {
          200: SELECT_ANSWER,
          400: SELECT_REFUSAL,
          403: SELECT_REFUSAL,
          404: SELECT_REFUSAL,
        },
      },
    },
    async (request, reply) => {
      const name = request.validationError ? undefined : request.body?.name;
      if (typeof name !== 'string' || name === '') {
        return refuse(reply, 400, 'Database name is required');
      }
      const principal = principalOf(request);
      switch (directory.access(principal, name)) {
        case 'not-found':
          return refuse(reply, 404, 'Database not found');
        case 'bound':
          return refuse(reply, 403, 'API token is bound to a different database');
        case 'denied':
          return refuse(reply, 403, 'Access denied to this database');
        case 'ok':
          break;
      }
      directory.selectFor(principal, name);
      return { success: true, current: name, message: 'Database selected successfully' };
    },
  );
}
