// similarity_search's plan over one table (which vector, text and tsvector columns, which are
// shown) and the SQL of its two recalls: the pgvector index and full-text search.
import type { ColumnDescriptor, RelationDescriptor } from '../../catalog/index.js';
import { quoteIdent } from '../../core/sql.js';
import { MASK } from '../access-policy.js';
import { METRICS, type Metric } from './search-input.js';
import { textColumnFor, tsvectorColumn, vectorColumns } from './search-columns.js';
import { invalidInput } from '../common/support.js';

export interface Plan {
  rel: RelationDescriptor;
  vector: ColumnDescriptor;
  text: ColumnDescriptor | null;
  tsvector: ColumnDescriptor | null;
  shown: ColumnDescriptor[];
  ids: string[];
}

export function plan(
  rel: RelationDescriptor,
  args: Record<string, unknown>,
  dims: number | null,
): Plan {
  const wantedVector = args['vector_column'] as string | undefined;
  const vectors = vectorColumns(rel, dims);
  const vector = wantedVector ? vectors.find((c) => c.name === wantedVector) : vectors[0];
  if (!vector) {
    throw invalidInput(
      wantedVector
        ? `${rel.schema}.${rel.name} has no vector column '${wantedVector}'. Vector columns: ${vectors.map((c) => c.name).join(', ') || 'none'}.`
        : `${rel.schema}.${rel.name} has no vector column to search. Add one and fill it with: pgmcp embed --table ${rel.schema}.${rel.name} --text-column <column>; get_schema_info with vector_tables_only=true lists the tables that have one.`,
    );
  }
  const wantedText = args['text_column'] as string | undefined;
  const text = wantedText
    ? (rel.columns.find((c) => c.name === wantedText && !c.masked) ??
      (() => {
        throw invalidInput(`${rel.schema}.${rel.name} has no usable text column '${wantedText}'.`);
      })())
    : textColumnFor(rel, vector);
  const shown = rel.columns.filter((c) => c.vector === null && c.dataType !== 'tsvector');
  const ids = rel.primaryKey?.columns ?? [];
  return { rel, vector, text, tsvector: tsvectorColumn(rel, text), shown, ids };
}

export const ROWID = '_pgmcp_rowid';
export const DIST = '_pgmcp_distance';
export const VEC = '_pgmcp_vector';

export function recallSql(
  p: Plan,
  ext: string,
  metric: Metric,
  filter: string | null,
  kind: 'vector' | 'text',
  k: number,
) {
  const from = `${quoteIdent(p.rel.schema)}.${quoteIdent(p.rel.name)}`;
  const v = quoteIdent(p.vector.name);
  const vtype = `${quoteIdent(ext)}.${quoteIdent(p.vector.vector!.type)}`;
  const op = `OPERATOR(${quoteIdent(ext)}.${METRICS[metric]})`;
  const dist = `${v} ${op} $1::${vtype}`;
  const cols = p.shown.filter((c) => !c.masked).map((c) => quoteIdent(c.name));
  const select = [
    `ctid::text AS ${ROWID}`,
    ...cols,
    `${v}::text AS ${VEC}`,
    `${dist} AS ${DIST}`,
  ].join(', ');
  const where = filter !== null ? ` AND (${filter})` : '';
  if (kind === 'vector') {
    return `SELECT ${select} FROM ${from} WHERE ${v} IS NOT NULL${where} ORDER BY ${dist} LIMIT ${k}`;
  }
  const tsv = p.tsvector
    ? quoteIdent(p.tsvector.name)
    : `to_tsvector('english'::regconfig, ${quoteIdent(p.text!.name)})`;
  const q = `to_tsquery('english'::regconfig, $2)`;
  return `SELECT ${select} FROM ${from} WHERE ${tsv} @@ ${q}${where} ORDER BY ts_rank_cd(${tsv}, ${q}) DESC LIMIT ${k}`;
}

export const parseVector = (text: unknown): number[] | null =>
  typeof text === 'string' ? (JSON.parse(text) as number[]) : null;

export function display(p: Plan, row: Record<string, unknown>, column: ColumnDescriptor): unknown {
  if (column.masked) return MASK;
  const value = row[column.name];
  return typeof value === 'bigint' ? String(value) : value;
}
