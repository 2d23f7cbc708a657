// GET /api/schema?database=…: the schemas, tables, views and columns (with comments) of one
// database, for the web client's schema browser. A read-only view of the cached catalog, so
// the access policy already hides what the caller may not see; the database is resolved the
// way a tool call's is (the caller's selection when none is named).
import type { FastifyInstance } from 'fastify';
import type { Catalog, RelationDescriptor } from '../catalog/index.js';
import { ANONYMOUS } from '../core/principal.js';
import { onTarget } from '../tools/database-routing.js';
import type { DatabaseDirectory } from '../tools/databases.js';
import { ApiError } from './errors.js';

const nullableString = { type: ['string', 'null'] } as const;

const COLUMN = {
  type: 'object',
  required: ['name', 'type', 'nullable', 'comment', 'primaryKey', 'references'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string' },
    nullable: { type: 'boolean' },
    comment: nullableString,
    primaryKey: { type: 'boolean' },
    references: { ...nullableString, description: 'schema.table(column) this column references' },
  },
} as const;

const TABLE = {
  type: 'object',
  required: ['name', 'kind', 'comment', 'columns'],
  properties: {
    name: { type: 'string' },
    kind: {
      type: 'string',
      enum: ['table', 'view', 'materialized_view', 'partitioned_table', 'foreign_table'],
    },
    comment: nullableString,
    columns: { type: 'array', items: COLUMN },
  },
} as const;

const ANSWER = {
  type: 'object',
  required: ['database', 'schemas'],
  properties: {
    database: { type: 'string', description: 'The configured database name.' },
    schemas: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'comment', 'tables'],
        properties: {
          name: { type: 'string' },
          comment: nullableString,
          tables: { type: 'array', items: TABLE },
        },
      },
    },
  },
} as const;

const QUERY = {
  type: 'object',
  properties: {
    database: {
      type: 'string',
      minLength: 1,
      maxLength: 256,
      description: 'A configured database name; default: the caller’s current database.',
    },
  },
} as const;

function tableView(relation: RelationDescriptor) {
  return {
    name: relation.name,
    kind: relation.kind,
    comment: relation.comment,
    columns: relation.columns.map((c) => ({
      name: c.name,
      type: c.dataType,
      nullable: c.nullable,
      comment: c.comment,
      primaryKey: c.isPrimaryKey,
      references: c.references
        ? `${c.references.schema}.${c.references.table}(${c.references.column})`
        : null,
    })),
  };
}

export function registerSchemaRoutes(
  scope: FastifyInstance,
  directory: DatabaseDirectory,
  catalogOf: (database: string) => Catalog | undefined,
): void {
  scope.get<{ Querystring: { database?: string } }>(
    '/schema',
    { schema: { querystring: QUERY, response: { 200: ANSWER } } },
    async (request) => {
      const principal = request.principal ?? ANONYMOUS;
      // Unknown or forbidden database: the directory's AppError (404 or 403).
      const target = directory.resolve(principal, request.query.database, null);
      const catalog = catalogOf(target.name);
      if (!catalog) throw new ApiError(404, `no catalog for database ${target.name}`);
      const snapshot = await onTarget(target, () => catalog.snapshot());
      return {
        database: target.name,
        schemas: snapshot.schemas.map((schema) => ({
          name: schema.name,
          comment: schema.comment,
          tables: snapshot
            .relationsOf(schema.name)
            .filter((r) => !(r.isPartition && r.parent))
            .map(tableView),
        })),
      };
    },
  );
}
