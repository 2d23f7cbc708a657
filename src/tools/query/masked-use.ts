// Where a masked column may appear in a statement. Masking hides the value in the answer; a
// masked column that decides which rows come back, how many, or in what order would tell the
// value all the same (WHERE ssn = '…' answers yes or no). So, unless the config allows it
// (database.access.allowMaskedPredicates), a masked column — or a whole-row value of a table
// that has one — may appear only in the select list of the outermost query, where its output
// comes back masked (bare, or computed: upper(email) is masked too). Everywhere else it is
// refused: WHERE, HAVING, JOIN … ON, GROUP BY, ORDER BY (by name, alias or position),
// DISTINCT and DISTINCT ON, window PARTITION BY / ORDER BY, LIMIT, subqueries in FROM, CTEs,
// set operations other than UNION ALL, arguments of set-returning functions (they change the
// row count), and every part of a write.
import { nameParts, visitNodes } from '../common/parse-tree.js';

export interface MaskedScope {
  /** Names of masked columns of the relations the statement reads. */
  columns: ReadonlySet<string>;
  /** Names and aliases of those relations that have a masked column (for whole-row values). */
  relations: ReadonlySet<string>;
  /** Every column name of the statement's relations (a name that is none is a whole-row value). */
  allColumns: ReadonlySet<string>;
  /** Functions that return sets, by name (from the function lookup). */
  setReturning: ReadonlySet<string>;
}

type Node = Record<string, unknown>;

/** The masked names a subtree refers to (columns, or whole rows written as `t`, `t.*`). */
function maskedRefs(node: unknown, scope: MaskedScope): string[] {
  const found: string[] = [];
  visitNodes(node, (type, body) => {
    if (type !== 'ColumnRef') return;
    const fields = nameParts((body as { fields?: unknown }).fields);
    const last = fields[fields.length - 1] ?? '';
    if (scope.columns.has(last)) found.push(`"${last}"`);
    else if (fields.length === 1 && scope.relations.has(last) && !scope.allColumns.has(last))
      found.push(`the whole row of "${last}"`);
    else if (
      fields.length >= 2 &&
      scope.relations.has(fields[fields.length - 2]!) &&
      (last === '*' || !scope.allColumns.has(last))
    )
      found.push(`the whole row of "${fields[fields.length - 2]}"`);
  });
  return found;
}

interface Problem {
  where: string;
  refs: string[];
}

function check(node: unknown, where: string, scope: MaskedScope, out: Problem[]): void {
  if (node === undefined || node === null) return;
  const refs = maskedRefs(node, scope);
  if (refs.length > 0) out.push({ where, refs });
}

/** Inside the outermost select list: window definitions and set-returning calls decide rows. */
function checkTargetExpression(node: unknown, scope: MaskedScope, out: Problem[]): void {
  visitNodes(node, (type, body) => {
    if (type !== 'FuncCall') return;
    const call = body as { funcname?: unknown; over?: unknown; args?: unknown };
    if (call.over) check(call.over, 'a window PARTITION BY / ORDER BY', scope, out);
    const parts = nameParts(call.funcname);
    const name = parts[parts.length - 1] ?? '';
    if (scope.setReturning.has(name))
      check(call.args, `the set-returning function ${name}()`, scope, out);
  });
}

function outputPosition(item: unknown, targets: Node[]): number | null {
  const ival = (item as { A_Const?: { ival?: { ival?: number } } }).A_Const?.ival;
  if (ival === undefined) return null;
  const position = (ival.ival ?? 0) - 1;
  return position >= 0 && position < targets.length ? position : null;
}

/** ORDER BY / GROUP BY / DISTINCT ON items that name an output column by alias or position. */
function checkOutputRefs(
  items: unknown,
  where: string,
  targets: Node[],
  touching: boolean[],
  scope: MaskedScope,
  out: Problem[],
): void {
  if (!Array.isArray(items)) return;
  for (const raw of items) {
    const item = (raw as { SortBy?: { node?: unknown } }).SortBy?.node ?? raw;
    const position = outputPosition(item, targets);
    if (position !== null) {
      if (touching[position]) out.push({ where, refs: [`output column ${position + 1}`] });
      continue;
    }
    const fields = nameParts((item as { ColumnRef?: { fields?: unknown } }).ColumnRef?.fields);
    if (fields.length === 1) {
      const index = targets.findIndex((t) => (t as { name?: string }).name === fields[0]);
      if (index >= 0 && touching[index]) out.push({ where, refs: [`"${fields[0]}"`] });
    }
    check(item, where, scope, out);
  }
}

function checkSelect(sel: Node, scope: MaskedScope, out: Problem[]): void {
  const op = sel['op'];
  if (op !== undefined && op !== 'SETOP_NONE') {
    if (op === 'SETOP_UNION' && sel['all'] === true) {
      checkSelect((sel['larg'] ?? {}) as Node, scope, out);
      checkSelect((sel['rarg'] ?? {}) as Node, scope, out);
    } else {
      check(sel['larg'], 'UNION / INTERSECT / EXCEPT (they compare values)', scope, out);
      check(sel['rarg'], 'UNION / INTERSECT / EXCEPT (they compare values)', scope, out);
    }
    check(sel['sortClause'], 'ORDER BY', scope, out);
    check([sel['limitCount'], sel['limitOffset']], 'LIMIT / OFFSET', scope, out);
    check(sel['withClause'], 'a WITH query', scope, out);
    return;
  }
  const targets = ((sel['targetList'] as { ResTarget?: Node }[] | undefined) ?? []).map(
    (t) => t.ResTarget ?? {},
  );
  const touching = targets.map((t) => maskedRefs(t['val'], scope).length > 0);
  for (const t of targets) checkTargetExpression(t['val'], scope, out);
  const distinct = sel['distinctClause'] as unknown[] | undefined;
  if (Array.isArray(distinct) && distinct.length > 0) {
    const plain = distinct.every((d) => d === null || Object.keys(d as object).length === 0);
    if (plain) {
      if (touching.some(Boolean))
        out.push({ where: 'SELECT DISTINCT (it counts distinct values)', refs: ['the output'] });
    } else checkOutputRefs(distinct, 'DISTINCT ON', targets, touching, scope, out);
  }
  check(sel['fromClause'], 'FROM (a join condition, a subquery or a function)', scope, out);
  check(sel['whereClause'], 'WHERE', scope, out);
  checkOutputRefs(sel['groupClause'], 'GROUP BY', targets, touching, scope, out);
  check(sel['havingClause'], 'HAVING', scope, out);
  check(sel['windowClause'], 'a WINDOW definition', scope, out);
  checkOutputRefs(sel['sortClause'], 'ORDER BY', targets, touching, scope, out);
  check([sel['limitCount'], sel['limitOffset']], 'LIMIT / OFFSET', scope, out);
  check(sel['withClause'], 'a WITH query', scope, out);
  check(sel['valuesLists'], 'VALUES', scope, out);
}

/**
 * The places where a masked column would decide rows, as "WHERE uses "ssn"" phrases; empty
 * when the statement uses masked columns only as output.
 */
export function maskedDecisions(statement: unknown, scope: MaskedScope): string[] {
  if (scope.columns.size === 0 && scope.relations.size === 0) return [];
  const out: Problem[] = [];
  const stmt = (statement ?? {}) as Node;
  const type = Object.keys(stmt)[0];
  let body = type ? (stmt[type] as Node) : {};
  let kind = type;
  if (type === 'ExplainStmt') {
    const query = ((body['query'] ?? {}) as Node) ?? {};
    kind = Object.keys(query)[0];
    body = kind ? (query[kind] as Node) : {};
  }
  if (kind === 'SelectStmt') checkSelect(body, scope, out);
  // A write copies or compares whatever it touches: a masked value may not take part.
  else check(body, 'a write', scope, out);
  const merged = new Map<string, Set<string>>();
  for (const { where, refs } of out) {
    const set = merged.get(where) ?? new Set<string>();
    for (const r of refs) set.add(r);
    merged.set(where, set);
  }
  return [...merged].map(([where, refs]) => `${where} uses ${[...refs].join(', ')}`);
}

/**
 * Which output columns of the statement are computed from a masked column (or a whole row that
 * holds one), by position; null when positions cannot be told (a `*` in the select list).
 * Then only those computed columns need masking, not every computed column.
 */
export function maskedOutputs(statement: unknown, scope: MaskedScope): boolean[] | null {
  const stmt = (statement ?? {}) as Node;
  const select = stmt['SelectStmt'] as Node | undefined;
  if (!select) return null;
  const branch = (sel: Node): boolean[] | null => {
    const op = sel['op'];
    if (op !== undefined && op !== 'SETOP_NONE') {
      const left = branch((sel['larg'] ?? {}) as Node);
      const right = branch((sel['rarg'] ?? {}) as Node);
      if (left === null || right === null || left.length !== right.length) return null;
      return left.map((touching, i) => touching || right[i]!);
    }
    if (sel['valuesLists'] !== undefined) {
      return null;
    }
    const targets = ((sel['targetList'] as { ResTarget?: Node }[] | undefined) ?? []).map(
      (t) => t.ResTarget ?? {},
    );
    let star = false;
    visitNodes(
      targets.map((t) => t['val']),
      (type, body) => {
        if (type !== 'ColumnRef') return;
        const fields = nameParts((body as { fields?: unknown }).fields);
        if (fields[fields.length - 1] === '*') star = true;
      },
    );
    // (t).* and (expr).* expand to several columns too.
    visitNodes(
      targets.map((t) => t['val']),
      (type, body) => {
        if (type !== 'A_Indirection') return;
        const parts = (body as { indirection?: unknown[] }).indirection ?? [];
        if (parts.some((p) => (p as { A_Star?: unknown }).A_Star !== undefined)) star = true;
      },
    );
    if (star) return null;
    return targets.map((t) => maskedRefs(t['val'], scope).length > 0);
  };
  return branch(select);
}
