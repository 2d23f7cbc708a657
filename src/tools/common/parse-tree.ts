// Small helpers over libpg-query's JSON parse trees: parse without throwing, compare two
// trees regardless of where in the text their nodes were, visit every node of a kind.
import { parseSync } from 'libpg-query';

export type ParseTree = { stmts?: { stmt?: Record<string, unknown> }[] };

export type Parsed = { ok: true; tree: ParseTree } | { ok: false; message: string };

/** Statements parsed so far: tests count them to see a verdict reused instead of worked out. */
let parses = 0;
export const sqlParses = (): number => parses;

/** Parse with PostgreSQL's parser (throws its error); the parser must be loaded (loadSqlParser). */
export function parseSql(sql: string): ParseTree {
  parses += 1;
  return parseSync(sql) as ParseTree;
}

/** Parse with PostgreSQL's parser; the parser must be loaded (loadSqlParser). */
export function tryParse(sql: string): Parsed {
  try {
    return { ok: true, tree: parseSql(sql) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

// Offsets into the text: equal trees parsed from different texts differ only in these.
const POSITION_KEY = /^(location|stmt_location|stmt_len)$|_location$|_start$|_end$/;

/** The tree without text positions, for comparing what two texts mean. */
function withoutPositions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutPositions);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(node).sort()) {
    if (POSITION_KEY.test(key)) continue;
    out[key] = withoutPositions((node as Record<string, unknown>)[key]);
  }
  return out;
}

export function sameTree(a: unknown, b: unknown): boolean {
  return JSON.stringify(withoutPositions(a)) === JSON.stringify(withoutPositions(b));
}

/** Calls visit(type, body) for every node (an object key naming a node type, e.g. FuncCall). */
export function visitNodes(node: unknown, visit: (type: string, body: unknown) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) visitNodes(item, visit);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (/^[A-Z]/.test(key)) visit(key, value);
    visitNodes(value, visit);
  }
}

/** The strings of a name list such as funcname or a ColumnRef's fields; '*' for A_Star. */
export function nameParts(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item: { String?: { sval?: string }; A_Star?: unknown }) =>
    item.A_Star !== undefined ? '*' : (item.String?.sval ?? ''),
  );
}

export { nameMatcher } from '../../core/glob.js';
