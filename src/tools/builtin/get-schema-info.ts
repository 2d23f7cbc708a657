// get_schema_info: the tables, views and columns an agent may use, from the cached catalog,
// as tab-separated text. A large database answers with a per-schema summary and says how to
// narrow down, so one call never floods the context.
import type { Catalog, RelationDescriptor } from '../../catalog/index.js';
import type { ToolSpec } from '../../core/specs.js';
import { toTsv } from '../tsv.js';
import {
  COMPACT_COLUMNS,
  compactRows,
  FULL_COLUMNS,
  fullRows,
  SUMMARY_COLUMNS,
  summarizeSchemas,
  summaryRows,
  TABLE_LIST_COLUMNS,
  tableListRows,
} from '../common/schema-text.js';
import { notFound, pickName, plural, readOnlyAnnotations } from '../common/support.js';

export interface SchemaInfoOptions {
  /** Without schema_name or table_name, more column rows than this get the per-schema summary. */
  summaryThreshold?: number;
  /** Within one schema (no table_name), more column rows than this get a list of tables. */
  tableListThreshold?: number;
}

const SUMMARY_THRESHOLD = 300;
const TABLE_LIST_THRESHOLD = 2_000;
/** Rows of a summary or table list; beyond this the answer says how many were left out. */
const LIST_LIMIT = 500;

function leftOut(total: number, what: string): string[] {
  if (total <= LIST_LIMIT) return [];
  return [
    `Showing the first ${LIST_LIMIT} of ${total.toLocaleString('en-US')} ${what} (in name order).`,
    '',
  ];
}

const DESCRIPTION = [
  'List the tables, views and columns of the PostgreSQL database as tab-separated text: schema, table, type, table_desc, column, data_type, nullable, col_desc, is_pk, is_unique, fk_ref (schema.table(column) the column references), is_indexed, identity, default, is_vector, vector_dims.',
  'Call it before writing SQL when you do not know the exact table and column names, types or join keys; you do not need it again for tables you have already seen.',
  'Narrow it with schema_name and table_name. On a large database a call without filters returns a per-schema summary and tells you how to continue.',
  'compact=true returns only schema, table, type, column, data_type, nullable and keys (PK, UNIQUE, FK, INDEXED): use it for an overview of many tables.',
  'vector_tables_only=true lists only tables with pgvector columns (for similarity search). Partitions are folded into their partitioned table unless include_partitions=true.',
  'Example: {"schema_name": "public", "table_name": "orders"}.',
].join(' ');

export function createGetSchemaInfoTool(
  catalog: Catalog,
  options: SchemaInfoOptions = {},
): ToolSpec {
  const summaryThreshold = options.summaryThreshold ?? SUMMARY_THRESHOLD;
  const tableListThreshold = options.tableListThreshold ?? TABLE_LIST_THRESHOLD;

  return {
    name: 'get_schema_info',
    title: 'Describe the database schema',
    description: DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        schema_name: {
          type: 'string',
          minLength: 1,
          description: 'Only this schema (e.g. "public").',
        },
        table_name: {
          type: 'string',
          minLength: 1,
          description: 'Only this table or view (in every schema unless schema_name is given).',
        },
        vector_tables_only: {
          type: 'boolean',
          default: false,
          description: 'Only tables with vector/halfvec/sparsevec columns.',
        },
        compact: {
          type: 'boolean',
          default: false,
          description:
            'Fewer columns per row: schema, table, type, column, data_type, nullable, keys.',
        },
        include_partitions: {
          type: 'boolean',
          default: false,
          description: 'List partitions as tables of their own instead of only their parent.',
        },
      },
      additionalProperties: false,
    },
    annotations: readOnlyAnnotations('Describe the database schema'),
    async call(args) {
      const schemaName = args['schema_name'] as string | undefined;
      const tableName = args['table_name'] as string | undefined;
      const vectorsOnly = args['vector_tables_only'] === true;
      const compact = args['compact'] === true;
      const withPartitions = args['include_partitions'] === true;
      const snapshot = await catalog.snapshot();
      const header = `Database: ${catalog.databaseName}`;

      let relations: readonly RelationDescriptor[] = snapshot.relations;
      let schemaLabel: string | null = null;
      if (schemaName !== undefined) {
        const schemas = pickName(snapshot.schemas, (s) => s.name, schemaName);
        const inSchema = schemas.flatMap((s) => snapshot.relationsOf(s.name));
        if (inSchema.length === 0) {
          throw notFound(
            `No tables found in schema '${schemaName}'. Call get_schema_info without arguments to see the schemas.`,
          );
        }
        relations = inSchema;
        schemaLabel = schemas.map((s) => s.name).join(', ');
      }
      if (tableName !== undefined) {
        const named = pickName(relations, (r) => r.name, tableName);
        if (named.length === 0) {
          throw notFound(
            schemaLabel
              ? `No table or view '${tableName}' in schema '${schemaLabel}'. Call get_schema_info with schema_name="${schemaLabel}" to see its tables.`
              : `No table or view '${tableName}' in any schema. Call get_schema_info to see the tables.`,
          );
        }
        relations = named;
      } else if (!withPartitions) {
        relations = relations.filter((r) => !(r.isPartition && r.parent));
      }
      if (vectorsOnly) {
        relations = relations.filter((r) => r.hasVectors);
        if (relations.length === 0) {
          return {
            content: [
              {
                type: 'text',
                text: `${header}\n\nNo tables with vector columns${schemaLabel ? ` in schema '${schemaLabel}'` : ''}.`,
              },
            ],
          };
        }
      }

      const columnRows = relations.reduce((n, r) => n + Math.max(1, r.columns.length), 0);
      const lines = [header, ''];
      if (schemaName === undefined && tableName === undefined && columnRows > summaryThreshold) {
        const summaries = summarizeSchemas(snapshot.schemas, relations);
        lines.push(
          `${plural(relations.length, 'table or view', 'tables and views')} with ${plural(columnRows, 'column')} in ${plural(summaries.length, 'schema')}: too many to list at once. Summary by schema:`,
          '',
          toTsv(SUMMARY_COLUMNS, summaryRows(summaries.slice(0, LIST_LIMIT))),
          '',
          ...leftOut(summaries.length, 'schemas'),
          'Next steps:',
          `- Call get_schema_info with schema_name="${summaries[0]?.schema ?? 'public'}" (or another schema above) to see its tables and columns${compact ? '' : '; add compact=true for a shorter listing'}.`,
          '- Call get_schema_info with schema_name and table_name for one table.',
        );
        if (!vectorsOnly && summaries.some((s) => s.vectorTables > 0))
          lines.push(
            '- Call get_schema_info with vector_tables_only=true for the tables with vector columns.',
          );
      } else if (tableName === undefined && columnRows > tableListThreshold) {
        lines.push(
          `${plural(relations.length, 'table or view', 'tables and views')} with ${plural(columnRows, 'column')}: too many columns to list at once. Tables:`,
          '',
          toTsv(TABLE_LIST_COLUMNS, tableListRows(relations.slice(0, LIST_LIMIT))),
          '',
          ...leftOut(relations.length, 'tables and views'),
          'Next steps:',
          '- Call get_schema_info with schema_name and table_name to see one table’s columns.',
        );
      } else {
        lines.push(
          compact
            ? toTsv(COMPACT_COLUMNS, compactRows(relations))
            : toTsv(FULL_COLUMNS, fullRows(relations)),
          '',
          `${plural(relations.length, 'table or view', 'tables and views')}, ${plural(columnRows, 'column')}.`,
        );
        const folded = relations.filter(
          (r) => r.kind === 'partitioned_table' && r.partitions.length > 0,
        );
        if (!withPartitions && tableName === undefined && folded.length > 0) {
          lines.push(
            `Partitions are folded into their partitioned table (${folded.map((r) => `${r.schema}.${r.name}`).join(', ')}); query the parent, or pass include_partitions=true to list them.`,
          );
        }
      }
      return { content: [{ type: 'text', text: lines.join('\n') }] };
    },
  };
}
