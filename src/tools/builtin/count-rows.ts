// count_rows: an exact count(*) of one table or view, optionally filtered by one boolean
// expression (validated in shared/where-clause.ts before it is pasted into the statement).
import type pg from 'pg';
import type { Catalog } from '../../catalog/index.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { ToolSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { createAccessPolicy, NO_RULES, type AccessPolicy } from '../access-policy.js';
import { loadSqlParser } from '../sql-guard.js';
import { checkRelationReach } from '../query/indirection.js';
import { createJudge } from '../query/policy-judge.js';
import { catalogIsStale, locateRelation } from '../common/locate.js';
import {
  notFound,
  plural,
  readOnlyAnnotations,
  replicaReadCall,
  sameLexerAsParser,
} from '../common/support.js';
import { nameParts, tryParse, visitNodes } from '../common/parse-tree.js';
import {
  buildCountSql,
  refuseAttributeCalls,
  RESTRICT_SEARCH_PATH,
} from '../common/where-clause.js';

export interface CountRowsDeps {
  db: Database;
  catalog: Catalog;
  statementTimeoutMs: number;
  deniedFunctions: readonly string[];
  /** The access policy (for views and masked columns); none: only credentials are judged. */
  policy?: AccessPolicy;
}

const DESCRIPTION = [
  'Count the rows of one table or view exactly (SELECT count(*)), optionally only those matching a filter.',
  'Use it for "how many …" questions about a single table; use query_database for counts that need joins or GROUP BY, and get_schema_info if you are unsure of the table or column names (its row estimates are approximate but free).',
  "`where` is ONE boolean SQL expression over the table's own columns, without the WHERE keyword: no subqueries, other tables, parameters or system functions.",
  'Counting a very large table reads all of it and may time out.',
  'Example: {"schema": "public", "table": "orders", "where": "status = \'shipped\' AND created_at >= now() - interval \'30 days\'"}.',
].join(' ');

/** A filter on a masked column would answer questions about its values (issue: masked ≠ secret). */
function refuseMaskedFilter(
  rel: { schema: string; name: string; columns: readonly { name: string; masked?: boolean }[] },
  where: string | undefined,
): void {
  if (where === undefined || where.trim() === '') return;
  const masked = new Set(rel.columns.filter((c) => c.masked).map((c) => c.name));
  if (masked.size === 0) return;
  const parsed = tryParse(`SELECT 1 WHERE (${where})`);
  const used = new Set<string>();
  if (parsed.ok) {
    visitNodes(parsed.tree, (type, body) => {
      if (type !== 'ColumnRef') return;
      const fields = nameParts((body as { fields?: unknown }).fields);
      const column = fields[fields.length - 1] ?? '';
      if (masked.has(column)) used.add(`"${column}"`);
    });
  }
  if (used.size > 0) {
    throw new AppError(
      ErrorCodes.MASKED_COLUMN_DECIDES,
      `Refused where: ${[...used].join(', ')} ${used.size > 1 ? 'are' : 'is'} masked in ${rel.schema}.${rel.name}; a filter on a masked column would reveal its values. Filter on other columns (database.access.allowMaskedPredicates allows this).`,
      { category: 'forbidden' },
    );
  }
}

/**
 * Under an access policy the system catalog's rows include the objects it hides (pg_class has
 * a row for a denied table): count_rows does not count them; query_database filters them.
 */
function refuseCatalog(rel: { schema: string; name: string }): void {
  if (rel.schema !== 'pg_catalog' && rel.schema !== 'information_schema') return;
  const name = `${rel.schema}.${rel.name}`;
  throw new AppError(
    ErrorCodes.CATALOG_NOT_FILTERED,
    `Refused: count_rows does not count the rows of a system catalog relation (${name}) under an access policy: they include what the policy hides. Count them with query_database (SELECT count(*) FROM ${name} WHERE …), which filters information_schema.tables and columns, pg_class, pg_attribute and the other common catalog relations, or use get_schema_info.`,
    { category: 'forbidden' },
  );
}

export function createCountRowsTool(deps: CountRowsDeps): ToolSpec {
  const { db, catalog } = deps;
  const judge = createJudge(deps.policy ?? createAccessPolicy(NO_RULES));
  const maskedMayFilter = deps.policy?.allowMaskedPredicates === true;

  return {
    name: 'count_rows',
    title: 'Count rows',
    description: DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        table: { type: 'string', minLength: 1, description: 'Table or view name.' },
        schema: {
          type: 'string',
          minLength: 1,
          description:
            'Schema of the table; default: found through the search_path (usually public).',
        },
        where: {
          type: 'string',
          description:
            "One boolean expression over the table's columns, without WHERE, e.g. status = 'active'.",
        },
      },
      required: ['table'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        schema: { type: 'string' },
        table: { type: 'string' },
        count: { type: 'integer' },
      },
      required: ['schema', 'table', 'count'],
    },
    annotations: readOnlyAnnotations('Count rows'),
    async call(args, ctx) {
      const table = args['table'] as string;
      const schemaArg = args['schema'] as string | undefined;
      const where = args['where'] as string | undefined;
      await loadSqlParser();
      // The catalog is read outside the transaction: a reload needs a connection of its own
      // (the embedded database has only one). A table created since the last load costs one
      // reload and a second try.
      for (let attempt = 0; ; attempt++) {
        const snapshot = await catalog.snapshot();
        let sql: string | undefined;
        const outcome = await replicaReadCall(
          db,
          deps.statementTimeoutMs,
          ctx,
          async (client) => {
            const found = await locateRelation(client, schemaArg, table);
            if (found && deps.policy?.active) refuseCatalog(found);
            const rel = found ? snapshot.relation(found.schema, found.name) : undefined;
            if (!rel) return found && catalogIsStale(catalog.policy, found) ? 'stale' : 'missing';
            if (!maskedMayFilter) refuseMaskedFilter(rel, where);
            sql = buildCountSql(
              {
                schema: rel.schema,
                table: rel.name,
                // A filter on a masked column would answer questions about its values.
                columns: new Set(
                  rel.columns.filter((c) => maskedMayFilter || !c.masked).map((c) => c.name),
                ),
              },
              where,
              deps.deniedFunctions,
            );
            refuseAttributeCalls(sql, deps.deniedFunctions);
            // A view is counted through what it reads: a denied table, credentials.
            if (rel.kind === 'view' || rel.kind === 'materialized_view')
              await checkRelationReach(client, judge, rel.schema, rel.name);
            await sameLexerAsParser(client);
            await client.query(RESTRICT_SEARCH_PATH);
            // Extended protocol: the server itself refuses more than one statement.
            const counted = await client.query({
              text: sql,
              queryMode: 'extended',
            } as pg.QueryConfig);
            return { rel, count: Number((counted.rows[0] as { count: string }).count) };
          },
          () => sql,
        );
        if (outcome === 'stale' && attempt === 0) {
          catalog.invalidate();
          continue;
        }
        if (typeof outcome === 'string') {
          const place = schemaArg !== undefined ? `in schema '${schemaArg}'` : 'on the search_path';
          throw notFound(
            `No table or view '${table}' ${place}. Call get_schema_info to see the tables.`,
          );
        }
        const { rel, count } = outcome;
        const filter =
          where !== undefined && where.trim() !== '' ? ` matching ${where.trim()}` : '';
        return {
          content: [
            {
              type: 'text',
              text: `Database: ${catalog.databaseName}\n\n${rel.schema}.${rel.name}: ${plural(count, 'row')}${filter}.`,
            },
          ],
          structuredContent: { schema: rel.schema, table: rel.name, count },
        };
      }
    },
  };
}
