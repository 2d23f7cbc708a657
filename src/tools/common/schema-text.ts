// Catalog descriptors as compact text for a model: the get_schema_info TSV layouts and the
// summaries the prompts reuse. Deterministic: the catalog is sorted and so is everything here.
import type {
  ColumnDescriptor,
  RelationDescriptor,
  RelationKind,
  SchemaDescriptor,
} from '../../catalog/index.js';

export const KIND_LABELS: Record<RelationKind, string> = {
  table: 'table',
  view: 'view',
  materialized_view: 'materialized view',
  partitioned_table: 'partitioned table',
  foreign_table: 'foreign table',
};

export const FULL_COLUMNS = [
  'schema',
  'table',
  'type',
  'table_desc',
  'column',
  'data_type',
  'nullable',
  'col_desc',
  'is_pk',
  'is_unique',
  'fk_ref',
  'is_indexed',
  'identity',
  'default',
  'is_vector',
  'vector_dims',
] as const;

export const COMPACT_COLUMNS = [
  'schema',
  'table',
  'type',
  'column',
  'data_type',
  'nullable',
  'keys',
] as const;

export const SUMMARY_COLUMNS = [
  'schema',
  'tables',
  'views',
  'columns',
  'vector_tables',
  'description',
] as const;

export const TABLE_LIST_COLUMNS = [
  'schema',
  'table',
  'type',
  'columns',
  'row_estimate',
  'table_desc',
] as const;

const yes = (flag: boolean): string => (flag ? 'YES' : 'NO');

/** `schema.table(column)` targets of the foreign keys this column takes part in. */
function foreignKeyRefs(rel: RelationDescriptor, column: string): string[] {
  const refs: string[] = [];
  for (const fk of rel.foreignKeys) {
    const at = fk.columns.indexOf(column);
    if (at === -1) continue;
    refs.push(`${fk.references.schema}.${fk.references.table}(${fk.references.columns[at]})`);
  }
  return refs;
}

function tableDescription(rel: RelationDescriptor): string {
  const parts: string[] = [];
  if (rel.comment) parts.push(rel.comment);
  if (rel.kind === 'partitioned_table') {
    parts.push(
      `[partitioned by ${rel.partitionKey ?? '?'}; ${rel.partitions.length} partition${rel.partitions.length === 1 ? '' : 's'}]`,
    );
  }
  if (rel.isPartition && rel.parent) {
    parts.push(
      `[partition of ${rel.parent.schema}.${rel.parent.name}${rel.partitionBound ? ` ${rel.partitionBound}` : ''}]`,
    );
  }
  if (!rel.selectable) parts.push('[no SELECT privilege for this role]');
  return parts.join(' ');
}

function columnDescription(column: ColumnDescriptor): string {
  const parts: string[] = [];
  if (column.comment) parts.push(column.comment);
  if (column.masked) parts.push('[values masked]');
  return parts.join(' ');
}

function defaultText(column: ColumnDescriptor): string {
  if (column.generated) {
    return `GENERATED ALWAYS AS (${column.generated.expression})${column.generated.kind === 'stored' ? ' STORED' : ''}`;
  }
  return column.default ?? '';
}

function identityText(column: ColumnDescriptor): string {
  return column.identity === 'always'
    ? 'ALWAYS'
    : column.identity === 'by_default'
      ? 'BY DEFAULT'
      : '';
}

/** One row per column (one empty row for a relation without columns). */
export function fullRows(relations: readonly RelationDescriptor[]): string[][] {
  const rows: string[][] = [];
  for (const rel of relations) {
    const kind = KIND_LABELS[rel.kind];
    // The table's description only on its first row: repeating it costs tokens, not meaning.
    let desc = tableDescription(rel);
    if (rel.columns.length === 0) {
      rows.push([rel.schema, rel.name, kind, desc, '', '', '', '', '', '', '', '', '', '', '', '']);
      continue;
    }
    for (const column of rel.columns) {
      rows.push([
        rel.schema,
        rel.name,
        kind,
        desc,
        column.name,
        column.dataType,
        yes(column.nullable),
        columnDescription(column),
        yes(column.isPrimaryKey),
        yes(column.isUnique),
        foreignKeyRefs(rel, column.name).join(', '),
        yes(column.isIndexed),
        identityText(column),
        defaultText(column),
        yes(column.vector !== null),
        column.vector?.dimensions != null ? String(column.vector.dimensions) : '',
      ]);
      desc = '';
    }
  }
  return rows;
}

/** `keys` of the compact layout: PK, UNIQUE, FK schema.table(column), INDEXED. */
function keysText(rel: RelationDescriptor, column: ColumnDescriptor): string {
  const keys: string[] = [];
  if (column.isPrimaryKey) keys.push('PK');
  else if (column.isUnique) keys.push('UNIQUE');
  for (const ref of foreignKeyRefs(rel, column.name)) keys.push(`FK ${ref}`);
  if (column.isIndexed && !column.isPrimaryKey && !column.isUnique) keys.push('INDEXED');
  return keys.join(', ');
}

export function compactRows(relations: readonly RelationDescriptor[]): string[][] {
  const rows: string[][] = [];
  for (const rel of relations) {
    const kind = KIND_LABELS[rel.kind];
    if (rel.columns.length === 0) rows.push([rel.schema, rel.name, kind, '', '', '', '']);
    for (const column of rel.columns) {
      rows.push([
        rel.schema,
        rel.name,
        kind,
        column.name,
        column.dataType,
        column.nullable ? 'YES' : 'NO',
        keysText(rel, column),
      ]);
    }
  }
  return rows;
}

const isView = (rel: RelationDescriptor): boolean =>
  rel.kind === 'view' || rel.kind === 'materialized_view';

export interface SchemaSummary {
  schema: string;
  tables: number;
  views: number;
  columns: number;
  vectorTables: number;
  description: string | null;
}

export function summarizeSchemas(
  schemas: readonly SchemaDescriptor[],
  relations: readonly RelationDescriptor[],
): SchemaSummary[] {
  const bySchema = new Map<string, SchemaSummary>();
  for (const s of schemas) {
    bySchema.set(s.name, {
      schema: s.name,
      tables: 0,
      views: 0,
      columns: 0,
      vectorTables: 0,
      description: s.comment,
    });
  }
  for (const rel of relations) {
    const summary = bySchema.get(rel.schema);
    if (!summary) continue;
    if (isView(rel)) summary.views += 1;
    else summary.tables += 1;
    summary.columns += rel.columns.length;
    if (rel.hasVectors) summary.vectorTables += 1;
  }
  return [...bySchema.values()].filter((s) => s.tables + s.views > 0);
}

export function summaryRows(summaries: readonly SchemaSummary[]): string[][] {
  return summaries.map((s) => [
    s.schema,
    String(s.tables),
    String(s.views),
    String(s.columns),
    String(s.vectorTables),
    s.description ?? '',
  ]);
}

export function tableListRows(relations: readonly RelationDescriptor[]): string[][] {
  return relations.map((rel) => [
    rel.schema,
    rel.name,
    KIND_LABELS[rel.kind],
    String(rel.columns.length),
    rel.rowEstimate === null ? '' : String(rel.rowEstimate),
    tableDescription(rel),
  ]);
}

/** A one-line sketch of a table for prompts: name(col type PK, col type FK→…, …). */
export function tableSketch(rel: RelationDescriptor): string {
  const columns = rel.columns.map((c) => {
    const keys = keysText(rel, c);
    return `${c.name} ${c.dataType}${keys ? ` [${keys}]` : ''}`;
  });
  return `${rel.schema}.${rel.name} (${columns.join(', ')})`;
}
