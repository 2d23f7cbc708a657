// One statement made ready for index analysis on the call's connection: judged like free SQL
// (SELECT only, denied functions, the access policy through views and functions), its tables
// resolved, the columns it filters, joins and sorts on turned into candidates, and the
// placeholders of a normalised statement ($1 …) filled with a value the planner's statistics
// hold for the column they are compared with, so it can be explained.
import type pg from 'pg';
import type { AccessPolicy } from '../access-policy.js';
import { checkStatement } from '../sql-guard.js';
import { sameTree, tryParse, visitNodes, type ParseTree } from '../common/parse-tree.js';
import { invalidInput } from '../common/support.js';
import { checkPolicy } from '../query/query-policy.js';
import { resolveRelations } from '../query/relation-access.js';
import { candidatesOf, columnUses, resolveColumn, type TableInScope } from './candidates.js';
import type { IndexSpec } from './hypothetical.js';

export interface PreparedStatement {
  /** As given (or as pg_stat_statements normalised it). */
  text: string;
  /** What EXPLAIN is given: the text with its placeholders filled. */
  explainable: string;
  tables: TableInScope[];
  /** OIDs of the tables (for their existing indexes). */
  tableOids: number[];
  candidates: IndexSpec[];
}

export interface JudgeOptions {
  policy: AccessPolicy;
  deniedFunctions: readonly string[];
}

const INDEXABLE = new Set(['r', 'p', 'm']);

/** Throws an input or policy error when the statement may not be analysed. */
export async function prepareStatement(
  client: pg.ClientBase,
  sql: string,
  options: JudgeOptions,
): Promise<PreparedStatement> {
  const guard = checkStatement(sql, {
    allowWrites: false,
    deniedFunctions: options.deniedFunctions,
  });
  if (guard.statement !== 'SelectStmt') {
    throw invalidInput(
      `Index analysis reads SELECT statements only (this is ${guard.statement.replace(/Stmt$/, '')}).`,
    );
  }
  const parsed = tryParse(sql);
  if (!parsed.ok) throw invalidInput(`The statement does not parse: ${parsed.message}`);
  const masks = await checkPolicy(client, options.policy, sql, guard);
  if (masks.statement) {
    throw invalidInput('Index analysis leaves out statements that read the system catalog.');
  }
  const resolved = await resolveRelations(client, guard.relations);
  const tables: TableInScope[] = resolved
    .filter((r) => INDEXABLE.has(r.kind))
    .map((r) => ({
      schema: r.schema,
      name: r.name,
      refs: [...new Set([r.alias ?? r.name, r.name])],
      columns: new Set(r.columns.map((c) => c.name)),
    }));
  const explainable = await fillPlaceholders(client, sql, parsed.tree, tables);
  // What EXPLAIN is sent must stay the one statement that was judged (placeholders aside).
  const wrapped = tryParse(`EXPLAIN (FORMAT JSON) ${explainable}`);
  const inner = wrapped.ok ? wrapped.tree.stmts?.[0]?.stmt?.['ExplainStmt'] : undefined;
  if (!wrapped.ok || wrapped.tree.stmts?.length !== 1 || !inner) {
    throw invalidInput('Refused: the statement does not stay one statement inside EXPLAIN.');
  }
  if (
    explainable === sql &&
    !sameTree((inner as { query?: unknown }).query, parsed.tree.stmts?.[0]?.stmt)
  ) {
    throw invalidInput('Refused: the statement does not stay one statement inside EXPLAIN.');
  }
  return {
    text: sql,
    explainable,
    tables,
    tableOids: resolved.filter((r) => INDEXABLE.has(r.kind)).map((r) => r.oid),
    candidates: candidatesOf(columnUses(parsed.tree, tables)),
  };
}

interface Placeholder {
  /** Byte offset of `$n` in the text. */
  location: number;
  number: number;
  column: { table: TableInScope; column: string } | null;
}

function placeholders(tree: ParseTree, tables: readonly TableInScope[]): Placeholder[] {
  const found = new Map<number, Placeholder>();
  const record = (node: unknown, column: Placeholder['column']): void => {
    visitNodes([node], (type, body) => {
      if (type !== 'ParamRef') return;
      const { number, location } = body as { number?: number; location?: number };
      if (typeof number !== 'number' || typeof location !== 'number') return;
      const seen = found.get(location);
      if (!seen || (seen.column === null && column !== null))
        found.set(location, { location, number, column });
    });
  };
  visitNodes(tree, (type, body) => {
    if (type === 'A_Expr') {
      const { lexpr, rexpr } = body as { lexpr?: unknown; rexpr?: unknown };
      const side = (n: unknown): Placeholder['column'] => {
        const ref = (n as { ColumnRef?: { fields?: unknown } } | undefined)?.ColumnRef;
        if (!ref) return null;
        const fields = (ref.fields as { String?: { sval?: string } }[] | undefined) ?? [];
        return resolveColumn(
          fields.map((f) => f.String?.sval ?? '*'),
          tables,
        );
      };
      record(rexpr, side(lexpr));
      record(lexpr, side(rexpr));
    }
  });
  visitNodes(tree, (type, body) => {
    if (type === 'ParamRef') record({ ParamRef: body }, null);
  });
  return [...found.values()];
}

const literal = (value: string): string => `'${value.replace(/'/g, "''")}'`;

const SAMPLE_SQL = `SELECT s.schemaname AS schema, s.tablename AS "table", s.attname AS "column",
  COALESCE((s.most_common_vals::text::text[])[1],
           (s.histogram_bounds::text::text[])[(pg_catalog.array_length(s.histogram_bounds::text::text[], 1) + 1) / 2]) AS value
FROM pg_catalog.pg_stats s
JOIN ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::text[]))
  AS w(schema, "table", "column")
  ON s.schemaname = w.schema AND s.tablename = w."table" AND s.attname = w."column"`;

/** The text with each `$n` replaced by a sample value of its column (NULL when there is none). */
async function fillPlaceholders(
  client: pg.ClientBase,
  sql: string,
  tree: ParseTree,
  tables: readonly TableInScope[],
): Promise<string> {
  const list = placeholders(tree, tables);
  if (list.length === 0) return sql;
  const wanted = list.filter((p) => p.column !== null).map((p) => p.column!);
  const values = new Map<string, string>();
  if (wanted.length > 0) {
    const { rows } = await client.query<{
      schema: string;
      table: string;
      column: string;
      value: string | null;
    }>(SAMPLE_SQL, [
      wanted.map((w) => w.table.schema),
      wanted.map((w) => w.table.name),
      wanted.map((w) => w.column),
    ]);
    for (const r of rows)
      if (r.value !== null) values.set(`${r.schema}.${r.table}.${r.column}`, r.value);
  }
  let bytes = Buffer.from(sql, 'utf8');
  for (const p of [...list].sort((a, b) => b.location - a.location)) {
    const token = `$${p.number}`;
    if (bytes.subarray(p.location, p.location + token.length).toString('utf8') !== token) continue;
    const value = p.column
      ? values.get(`${p.column.table.schema}.${p.column.table.name}.${p.column.column}`)
      : undefined;
    const replacement = Buffer.from(value === undefined ? 'NULL' : literal(value), 'utf8');
    bytes = Buffer.concat([
      bytes.subarray(0, p.location),
      replacement,
      bytes.subarray(p.location + token.length),
    ]);
  }
  return bytes.toString('utf8');
}
