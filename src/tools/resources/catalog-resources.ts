// The two pg:// templates that describe a schema or a table from the catalog, with completion
// of their arguments. A name the snapshot lacks but the database has reloads the catalog once.
import type pg from 'pg';
import type { Catalog, CatalogSnapshot } from '../../catalog/index.js';
import { byText, loadDetails } from '../../catalog/index.js';
import type { CallContext, ResourceTemplateSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { compileUriTemplate } from '../uri-template.js';
import { describeSchema, describeTable } from './describe-relations.js';
import {
  catalogIsStale,
  locateRelation,
  schemaCatalogIsStale,
  schemaExists,
} from '../common/locate.js';
import { jsonContents, replicaReadCall, resourceNotFound } from '../common/support.js';

export interface CatalogTemplateDeps {
  db: Database;
  catalog: Catalog;
  statementTimeoutMs: number;
}

const SCHEMA_TEMPLATE = 'pg://schema/{schema}';
export const TABLE_TEMPLATE = 'pg://table/{schema}/{table}';

function prefixed(values: Iterable<string>, prefix: string): string[] {
  const lower = prefix.toLowerCase();
  return [...new Set(values)].filter((v) => v.toLowerCase().startsWith(lower)).sort(byText);
}

/** Schema names for completion: visible schemas that hold at least one relation. */
async function completeSchema(catalog: Catalog, value: string): Promise<string[]> {
  const snapshot = await catalog.snapshot();
  return prefixed(
    snapshot.schemas.filter((s) => snapshot.relationsOf(s.name).length > 0).map((s) => s.name),
    value,
  );
}

/** Table names for completion, within `schema` when one was entered. */
async function completeTable(
  catalog: Catalog,
  value: string,
  schema: string | undefined,
): Promise<string[]> {
  const snapshot = await catalog.snapshot();
  const relations = schema ? snapshot.relationsOf(schema) : snapshot.relations;
  return prefixed(
    relations.map((r) => r.name),
    value,
  );
}

export function createCatalogTemplates(deps: CatalogTemplateDeps): ResourceTemplateSpec[] {
  const { catalog } = deps;
  const query = <T>(ctx: CallContext, work: Parameters<typeof replicaReadCall<T>>[3]): Promise<T> =>
    replicaReadCall(deps.db, deps.statementTimeoutMs, ctx, work);

  const matchSchema = compileUriTemplate(SCHEMA_TEMPLATE);
  const matchTable = compileUriTemplate(TABLE_TEMPLATE);

  /** The snapshot; reloaded once when it lacks something the database has (created since). */
  const snapshotWith = async (
    ctx: CallContext,
    has: (s: CatalogSnapshot) => boolean,
    stale: (client: pg.PoolClient) => Promise<boolean>,
  ): Promise<CatalogSnapshot> => {
    const snapshot = await catalog.snapshot();
    if (has(snapshot) || !(await query(ctx, stale))) return snapshot;
    catalog.invalidate();
    return catalog.snapshot();
  };

  return [
    {
      uriTemplate: SCHEMA_TEMPLATE,
      name: 'schema',
      title: 'Schema overview',
      description:
        'The tables and views of one schema with their descriptions, row estimates and estimated sizes (partitions listed under their parent).',
      mimeType: 'application/json',
      match: matchSchema,
      async read(uri, vars, ctx) {
        const name = vars['schema'] ?? '';
        const snapshot = await snapshotWith(
          ctx,
          (s) => s.schema(name) !== undefined,
          async (client) =>
            schemaCatalogIsStale(catalog.policy, name) && (await schemaExists(client, name)),
        );
        if (!snapshot.schema(name)) {
          throw resourceNotFound(
            uri,
            `Schema not found: ${name}. Read pg://system_info or call get_schema_info to see the schemas.`,
          );
        }
        return jsonContents(uri, describeSchema(snapshot, name));
      },
      async complete(argument, value) {
        return { values: argument === 'schema' ? await completeSchema(catalog, value) : [] };
      },
    },
    {
      uriTemplate: TABLE_TEMPLATE,
      name: 'table',
      title: 'Table details',
      description:
        'One table or view: columns (type, nullability, default, identity, comment), primary, unique and foreign keys, incoming foreign keys, indexes with definitions, partitions, exact size.',
      mimeType: 'application/json',
      match: matchTable,
      async read(uri, vars, ctx) {
        const schema = vars['schema'] ?? '';
        const table = vars['table'] ?? '';
        const snapshot = await snapshotWith(
          ctx,
          (s) => s.relation(schema, table) !== undefined,
          async (client) => {
            const found = await locateRelation(client, schema, table);
            return (
              found !== null &&
              found.schema === schema &&
              found.name === table &&
              catalogIsStale(catalog.policy, found)
            );
          },
        );
        const rel = snapshot.relation(schema, table);
        if (!rel) {
          throw resourceNotFound(
            uri,
            `Table not found: ${schema}.${table}. Read pg://schema/${schema} or call get_schema_info to see the tables.`,
          );
        }
        const details = await query(ctx, (client) => loadDetails(client, [rel], catalog.policy));
        return jsonContents(uri, describeTable(snapshot, rel, details.get(rel.oid)));
      },
      async complete(argument, value, context) {
        if (argument === 'schema') return { values: await completeSchema(catalog, value) };
        if (argument === 'table')
          return { values: await completeTable(catalog, value, context['schema']) };
        return { values: [] };
      },
    },
  ];
}
