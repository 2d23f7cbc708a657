// Free SQL handed to execute_explain names relations and columns; the access policy decides
// which of them may be used. Names are resolved the way PostgreSQL resolves them (through
// the search_path, in the caller's transaction), then judged.
import type { Lookup } from '../../db/call-session.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { quoteIdent } from '../../core/sql.js';
import { isSecretRelation } from '../credentials.js';
import type { RelationRef } from '../sql-guard.js';
import type { Judge } from './policy-judge.js';
import { nameParts, visitNodes } from '../common/parse-tree.js';

export interface ResolvedRelation {
  oid: number;
  schema: string;
  name: string;
  /** pg_class.relkind: r table, v view, m materialized view, p partitioned, f foreign … */
  kind: string;
  /** The alias the query gives it, if any. */
  alias: string | null;
  /** Its columns (attnum, name), read in the same round trip: the policy needs them. */
  columns: { attnum: number; name: string }[];
  /** As written in the query. */
  written: string;
}

const RESOLVE_SQL = `SELECT r.i::int AS i, c.oid::int8 AS oid, n.nspname AS schema, c.relname AS name,
  c.relkind::text AS kind,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_array(a.attnum, a.attname) ORDER BY a.attnum)::text
   FROM pg_catalog.pg_attribute a
   WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS r(ref, i)
JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(r.ref)
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace`;

/** Relations the statement names (CTE names excluded) as PostgreSQL resolves them. */
export async function resolveRelations(
  client: Lookup,
  refs: readonly RelationRef[],
): Promise<ResolvedRelation[]> {
  // CTE names are not filtered out by name (a CTE in one scope must not hide a table of the
  // same name in another): to_regclass finds no relation for a name that is only a CTE.
  const wanted = refs;
  if (wanted.length === 0) return [];
  const texts = wanted.map((r) =>
    r.schema === null ? quoteIdent(r.name) : `${quoteIdent(r.schema)}.${quoteIdent(r.name)}`,
  );
  const { rows } = await client.query<{
    i: number;
    oid: string;
    schema: string;
    name: string;
    kind: string;
    columns: string | null;
  }>(RESOLVE_SQL, [texts]);
  return rows.map((row) => {
    const ref = wanted[row.i - 1]!;
    return {
      oid: Number(row.oid),
      schema: row.schema,
      name: row.name,
      kind: row.kind,
      alias: ref.alias,
      columns: parseColumns(row.columns),
      written: ref.schema === null ? ref.name : `${ref.schema}.${ref.name}`,
    };
  });
}

/** The columns as the resolve query sends them: a JSON array of [attnum, name]. */
function parseColumns(text: string | null): { attnum: number; name: string }[] {
  if (!text) return [];
  return (JSON.parse(text) as [number, string][]).map(([attnum, name]) => ({ attnum, name }));
}

/** The error PostgreSQL itself gives for a missing relation: a hidden one looks the same. */
function missingRelation(written: string): AppError {
  return new AppError(ErrorCodes.DB_QUERY_FAILED, `relation "${written}" does not exist`, {
    category: 'database',
    details: { sqlstate: '42P01' },
  });
}

/** A column of a relation the statement reads. */
export interface RelationColumn {
  relation: ResolvedRelation;
  attnum: number;
  name: string;
}

/**
 * Throws unless every relation is visible and, where a relation has columns that are hidden
 * (denied by the policy, or holding credentials), the statement names only other columns
 * explicitly (no *, no whole-row values). Returns the relations' columns when the policy has
 * column rules (for masking), else [].
 */
export async function enforcePolicy(
  client: Lookup,
  judge: Judge,
  relations: readonly ResolvedRelation[],
  tree: unknown,
): Promise<RelationColumn[]> {
  const { policy } = judge;
  const secret = relations.some((r) => isSecretRelation(r.schema, r.name));
  if (!policy.active && !secret) return [];
  for (const rel of relations) {
    // A denied relation answers as if it did not exist.
    if (judge.tableDenied(rel.schema, rel.name)) throw missingRelation(rel.written);
  }
  if ((!policy.hasColumnRules && !secret) || relations.length === 0) return [];
  const seen = new Set<number>();
  const columns: RelationColumn[] = [];
  for (const relation of relations) {
    if (seen.has(relation.oid)) continue;
    seen.add(relation.oid);
    for (const c of relation.columns) columns.push({ relation, attnum: c.attnum, name: c.name });
  }
  const hidden = new Map<string, string>();
  const visible = new Set<string>();
  for (const { relation: rel, name } of columns) {
    const why = judge.columnHidden(rel.schema, rel.name, name);
    if (why) hidden.set(name, why);
    else visible.add(name);
  }
  if (hidden.size === 0) return columns;
  const problems = new Set<string>();
  const credentials = new Set<string>();
  visitNodes(tree, (type, body) => {
    if (type !== 'ColumnRef') return;
    const fields = nameParts((body as { fields?: unknown }).fields);
    const column = fields[fields.length - 1] ?? '';
    const why = hidden.get(column);
    if (why && / which holds /.test(why)) credentials.add(why);
    if (column === '*') problems.add('*');
    else if (why) problems.add(`"${column}"`);
    // Not a visible column: a whole-row value (t), or a function in attribute notation
    // (t.row_to_json), either of which would carry the hidden columns.
    else if (!visible.has(column)) problems.add(`"${column}"`);
  });
  if (credentials.size > 0) {
    throw new AppError(
      ErrorCodes.CREDENTIALS_REFUSED,
      `Refused: the query reads ${[...credentials].join('; ')}. pgmcp never returns credentials, whatever role it connects as.`,
      { category: 'forbidden' },
    );
  }
  if (problems.size > 0) {
    const secretOnes = relations.filter((r) => isSecretRelation(r.schema, r.name));
    const reason =
      secretOnes.length > 0
        ? `Refused: the query reads ${secretOnes.map((r) => `${r.schema}.${r.name}`).join(', ')}, which holds credentials, and refers to ${[...problems].join(', ')}. Name the other columns you need (no *, no whole-row values); pgmcp never returns credentials.`
        : `Refused: the query reads a table with columns you may not use, and refers to ${[...problems].join(', ')}. Name the visible columns you need (no *, no whole-row values); get_schema_info lists them.`;
    throw new AppError(
      secretOnes.length > 0 ? ErrorCodes.CREDENTIALS_REFUSED : ErrorCodes.TOOL_INPUT_INVALID,
      reason,
      { category: 'forbidden' },
    );
  }
  return columns;
}
