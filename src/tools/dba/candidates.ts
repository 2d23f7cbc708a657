// Candidate indexes from what statements filter, join, sort and group on, read from the parse
// tree (libpg-query, the parser the SQL guard uses). Each column reference is tied to the
// table it belongs to (by alias or name, or — unqualified — to the one table of the statement
// that has such a column). Candidates an existing index already covers are dropped.
import { nameParts, visitNodes, type ParseTree } from '../common/parse-tree.js';
import type { IndexSpec } from './hypothetical.js';

export interface TableInScope {
  schema: string;
  name: string;
  /** The alias or name the statement refers to it by. */
  refs: string[];
  columns: ReadonlySet<string>;
}

type Use = 'eq' | 'range' | 'order';

interface ColumnUse {
  table: TableInScope;
  column: string;
  use: Use;
}

const RANGE_OPS = new Set(['<', '>', '<=', '>=', '~~', '~~*']);
const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema', 'pg_toast']);

/** The table a ColumnRef's fields name, and the column; null when it cannot be told. */
export function resolveColumn(
  fields: string[],
  tables: readonly TableInScope[],
): { table: TableInScope; column: string } | null {
  if (fields.length === 0 || fields.includes('*')) return null;
  const column = fields[fields.length - 1]!;
  if (fields.length === 1) {
    const owners = tables.filter((t) => t.columns.has(column));
    return owners.length === 1 ? { table: owners[0]!, column } : null;
  }
  const qualifier = fields[fields.length - 2]!;
  const owners = tables.filter((t) => t.refs.includes(qualifier) && t.columns.has(column));
  return owners.length === 1 ? { table: owners[0]!, column } : null;
}

const columnRef = (node: unknown): string[] | null => {
  const ref = (node as { ColumnRef?: { fields?: unknown } } | undefined)?.ColumnRef;
  return ref ? nameParts(ref.fields) : null;
};

/** Where each column is used: equality (=, IN, IS NULL, joins), ranges (<, BETWEEN, LIKE), ORDER/GROUP BY. */
export function columnUses(tree: ParseTree, tables: readonly TableInScope[]): ColumnUse[] {
  const uses: ColumnUse[] = [];
  const add = (fields: string[] | null, use: Use): void => {
    if (!fields) return;
    const found = resolveColumn(fields, tables);
    if (found && !SYSTEM_SCHEMAS.has(found.table.schema)) uses.push({ ...found, use });
  };
  visitNodes(tree, (type, body) => {
    const node = body as Record<string, unknown>;
    if (type === 'A_Expr') {
      const kind = node['kind'] as string | undefined;
      const op = nameParts(node['name'])[0] ?? '';
      let use: Use | null = null;
      if (kind === 'AEXPR_OP' && op === '=') use = 'eq';
      else if (kind === 'AEXPR_IN') use = 'eq';
      else if (kind === 'AEXPR_OP' && RANGE_OPS.has(op)) use = 'range';
      else if (kind === 'AEXPR_LIKE' || kind === 'AEXPR_ILIKE') use = 'range';
      else if (kind?.startsWith('AEXPR_BETWEEN')) use = 'range';
      if (use) {
        add(columnRef(node['lexpr']), use);
        add(columnRef(node['rexpr']), use);
      }
    } else if (type === 'NullTest') {
      add(columnRef(node['arg']), 'eq');
    } else if (type === 'SortBy') {
      add(columnRef(node['node']), 'order');
    }
  });
  // GROUP BY lists bare expressions.
  visitNodes(tree, (type, body) => {
    if (type !== 'SelectStmt') return;
    const group = (body as { groupClause?: unknown[] }).groupClause ?? [];
    for (const item of group) add(columnRef(item), 'order');
  });
  return uses;
}

const key = (spec: Pick<IndexSpec, 'schema' | 'table' | 'columns'>): string =>
  JSON.stringify([spec.schema, spec.table, spec.columns]);

/** At most this many columns in a candidate. */
const MAX_WIDTH = 3;

/** Candidate btree indexes for one statement: single columns, then equality columns followed by a range or sort column. */
export function candidatesOf(uses: readonly ColumnUse[]): IndexSpec[] {
  const out = new Map<string, IndexSpec>();
  const push = (table: TableInScope, columns: string[]): void => {
    const cols = [...new Set(columns)].slice(0, MAX_WIDTH);
    const spec = { schema: table.schema, table: table.name, columns: cols, using: 'btree' };
    if (cols.length > 0 && !out.has(key(spec))) out.set(key(spec), spec);
  };
  const byTable = new Map<TableInScope, ColumnUse[]>();
  for (const u of uses) byTable.set(u.table, [...(byTable.get(u.table) ?? []), u]);
  for (const [table, list] of byTable) {
    const eq = [...new Set(list.filter((u) => u.use === 'eq').map((u) => u.column))];
    const rest = [...new Set(list.filter((u) => u.use !== 'eq').map((u) => u.column))];
    for (const column of [...eq, ...rest]) push(table, [column]);
    if (eq.length > 1) push(table, eq);
    for (const tail of rest) if (eq.length > 0) push(table, [...eq.slice(0, MAX_WIDTH - 1), tail]);
  }
  return [...out.values()];
}

/** An existing index's leading key columns (up to its first expression). */
export interface ExistingIndex {
  schema: string;
  table: string;
  columns: string[];
}

/** Covered: the candidate's columns are the leading columns of an existing index. */
export function coveredBy(spec: IndexSpec, existing: readonly ExistingIndex[]): boolean {
  return existing.some(
    (e) =>
      e.schema === spec.schema &&
      e.table === spec.table &&
      spec.columns.length <= e.columns.length &&
      spec.columns.every((c, i) => e.columns[i] === c),
  );
}

/** The candidates of several statements, deduplicated, without the covered ones. */
export function mergeCandidates(
  lists: readonly IndexSpec[][],
  existing: readonly ExistingIndex[],
): IndexSpec[] {
  const out = new Map<string, IndexSpec>();
  for (const list of lists)
    for (const spec of list) if (!coveredBy(spec, existing)) out.set(key(spec), spec);
  return [...out.values()];
}

export const EXISTING_INDEXES_SQL = `SELECT n.nspname AS schema, c.relname AS "table",
  ARRAY(SELECT a.attname::text FROM pg_catalog.unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, ord)
        LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
        WHERE k.ord <= i.indnkeyatts ORDER BY k.ord) AS columns
FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
JOIN pg_catalog.pg_am am ON am.oid = ic.relam
WHERE i.indisvalid AND am.amname = 'btree' AND i.indpred IS NULL AND c.oid = ANY($1::oid[])`;

/** Leading key columns up to the first expression (an expression's attnum is 0: no name). */
export function leadingColumns(columns: (string | null)[]): string[] {
  const out: string[] = [];
  for (const c of columns) {
    if (c === null) break;
    out.push(c);
  }
  return out;
}
