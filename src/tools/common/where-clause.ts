// count_rows' `where` is text from the model pasted into SQL, the classic way an auxiliary
// parameter becomes an injection or a blind oracle on other tables (pgEdge #200). So it is
// pasted only after PostgreSQL's own parser has proved three things:
//   1. `SELECT 1 WHERE <text>` is one plain SELECT whose only clause is that WHERE: the text
//      is one expression and cannot close, comment out or extend the statement around it;
//   2. the expression reads only this table's visible columns (no subqueries, parameters,
//      whole-row references, casts to reg* types, or functions that look at other objects);
//   3. the statement we run parses to exactly the same expression, so wrapping it changed
//      nothing (a trailing `--` would swallow our closing parenthesis and fail this).
import { AppError, ErrorCodes } from '../../core/errors.js';
import { quoteIdent } from '../../core/sql.js';
import { nameMatcher, nameParts, sameTree, tryParse, visitNodes } from './parse-tree.js';
import { invalidInput } from './support.js';

export interface WhereTarget {
  schema: string;
  table: string;
  /** The columns the caller may see. Anything else is refused as unknown. */
  columns: ReadonlySet<string>;
}

/**
 * Functions refused in a count filter on top of the configured deny-list: they reveal
 * other objects (sizes, privileges, comments, sequences, existence), run SQL given as
 * text, or only wait. A filter over one table's columns needs none of them.
 */
export const COUNT_FILTER_DENIED_FUNCTIONS: readonly string[] = [
  'pg_*',
  'has_*_privilege',
  'to_reg*',
  'ts_stat',
  'ts_rewrite',
  'currval',
  'nextval',
  'setval',
  'lastval',
  '*_description',
  'row_security_active',
  'inet_server_*',
  'inet_client_*',
  'query_to_*',
  '*_to_xml*',
  'xmlschema*',
];

/** Nodes that reach beyond the expression: subqueries, other relations, parameters. */
const REFUSED_NODES: Record<string, string> = {
  SubLink: 'subqueries are not allowed',
  SelectStmt: 'subqueries are not allowed',
  RangeSubselect: 'subqueries are not allowed',
  RangeFunction: 'set-returning functions are not allowed',
  RangeVar: 'other tables are not allowed',
  ParamRef: 'parameters ($1 …) are not allowed: write the values into the expression',
  CurrentOfExpr: 'cursors are not allowed',
  GroupingFunc: 'grouping functions are not allowed',
};

const REG_TYPES = new Set([
  'regclass',
  'regproc',
  'regprocedure',
  'regoper',
  'regoperator',
  'regtype',
  'regconfig',
  'regdictionary',
  'regnamespace',
  'regrole',
  'regcollation',
]);

const MAX_WHERE_LENGTH = 8_000;

function refused(reason: string): AppError {
  return new AppError(
    ErrorCodes.TOOL_INPUT_INVALID,
    `Refused where: ${reason}. Pass ONE boolean expression over this table's columns, e.g. status = 'active' AND created_at >= now() - interval '7 days'.`,
    { category: 'input' },
  );
}

/** Everything is fine when the function returns; throws AppError (category input) otherwise. */
function checkExpression(
  where: unknown,
  target: WhereTarget,
  deniedFunctions: readonly string[],
): void {
  const isDenied = nameMatcher([...deniedFunctions, ...COUNT_FILTER_DENIED_FUNCTIONS]);
  const problems: string[] = [];
  visitNodes(where, (type, body) => {
    const reason = REFUSED_NODES[type];
    if (reason) {
      problems.push(reason);
      return;
    }
    const node = body as Record<string, unknown>;
    if (type === 'FuncCall') {
      const parts = nameParts(node['funcname']);
      const name = parts[parts.length - 1] ?? '';
      if (parts.length > 1 && parts[0] !== 'pg_catalog') {
        problems.push(`only built-in functions may be called (not ${parts.join('.')})`);
      } else if (isDenied(name)) problems.push(`the function ${name} is not allowed here`);
      if (node['over'] !== undefined) problems.push('window functions are not allowed');
    } else if (type === 'A_Expr') {
      const parts = nameParts(node['name']);
      if (parts.length > 1 && parts[0] !== 'pg_catalog') {
        problems.push(`only built-in operators may be used (not ${parts.join('.')})`);
      }
    } else if (type === 'TypeCast') {
      const names = nameParts((node['typeName'] as Record<string, unknown> | undefined)?.['names']);
      const typeName = names[names.length - 1] ?? '';
      if (REG_TYPES.has(typeName.toLowerCase()))
        problems.push(`casts to ${typeName} look up other objects`);
    } else if (type === 'ColumnRef') {
      const fields = nameParts(node['fields']);
      if (fields.includes('*')) {
        problems.push('whole-row references (t.*) are not allowed');
        return;
      }
      const column = fields[fields.length - 1] ?? '';
      const qualifier = fields.slice(0, -1);
      const qualifierOk =
        qualifier.length === 0 ||
        (qualifier.length === 1 && qualifier[0] === target.table) ||
        (qualifier.length === 2 && qualifier[0] === target.schema && qualifier[1] === target.table);
      if (!qualifierOk) problems.push(`${fields.join('.')} is not a column of this table`);
      else if (!target.columns.has(column))
        problems.push(`"${column}" is not a column of ${target.schema}.${target.table}`);
    }
  });
  if (problems.length > 0) throw refused([...new Set(problems)].join('; '));
}

/** The bare statement `SELECT 1 WHERE <text>` must be exactly that. */
function bareWhereClause(where: string): unknown {
  const parsed = tryParse(`SELECT 1 WHERE ${where}`);
  if (!parsed.ok) throw refused(`it is not a valid expression (${parsed.message})`);
  const statements = parsed.tree.stmts ?? [];
  if (statements.length !== 1) throw refused('it must not end one statement and start another');
  const stmt = statements[0]!.stmt ?? {};
  const select = stmt['SelectStmt'] as Record<string, unknown> | undefined;
  if (!select) throw refused('it must be an expression');
  if (select['op'] !== 'SETOP_NONE') throw refused('UNION, INTERSECT and EXCEPT are not allowed');
  const extra = Object.keys(select).filter(
    (key) => !['targetList', 'whereClause', 'op', 'limitOption'].includes(key),
  );
  if (extra.length > 0 || select['limitOption'] !== 'LIMIT_OPTION_DEFAULT') {
    throw refused(
      'it must be only an expression, without FROM, GROUP BY, ORDER BY, LIMIT, FOR UPDATE or similar clauses',
    );
  }
  const targets = select['targetList'] as unknown[] | undefined;
  const target = (targets?.[0] as { ResTarget?: { name?: string; val?: Record<string, unknown> } })
    ?.ResTarget;
  const constant = target?.val?.['A_Const'] as { ival?: { ival?: number } } | undefined;
  if (targets?.length !== 1 || target?.name !== undefined || constant?.ival?.ival !== 1) {
    throw refused('it must be only an expression');
  }
  if (select['whereClause'] === undefined) throw refused('it is empty');
  return select['whereClause'];
}

/**
 * Validate `where` for `target` and return the statement to run:
 * SELECT count(*) FROM "schema"."table" WHERE (<where>).
 */
export function buildCountSql(
  target: WhereTarget,
  where: string | undefined,
  deniedFunctions: readonly string[],
): string {
  const from = `${quoteIdent(target.schema)}.${quoteIdent(target.table)}`;
  const base = `SELECT count(*) FROM ${from}`;
  if (where === undefined || where.trim() === '') return base;
  if (where.length > MAX_WHERE_LENGTH)
    throw refused(`it is longer than ${MAX_WHERE_LENGTH} characters`);
  if (where.includes('\0')) throw refused('it contains a NUL character');
  const expression = bareWhereClause(where);
  checkExpression(expression, target, deniedFunctions);

  const sql = `${base} WHERE (${where})`;
  const wrapped = tryParse(sql);
  const stmts = wrapped.ok ? (wrapped.tree.stmts ?? []) : [];
  const select = stmts[0]?.stmt?.['SelectStmt'] as Record<string, unknown> | undefined;
  const fromClause = (select?.['fromClause'] ?? []) as { RangeVar?: Record<string, unknown> }[];
  const from0 = fromClause[0]?.RangeVar;
  const intact =
    stmts.length === 1 &&
    select !== undefined &&
    select['op'] === 'SETOP_NONE' &&
    fromClause.length === 1 &&
    from0?.['schemaname'] === target.schema &&
    from0?.['relname'] === target.table &&
    from0?.['alias'] === undefined &&
    sameTree(select['whereClause'], expression);
  if (!intact) {
    throw refused(
      wrapped.ok
        ? 'it changes meaning when embedded in the count'
        : 'a comment or unterminated quote in it would swallow the rest of the statement',
    );
  }
  return sql;
}

/**
 * Validate `where` for `target` exactly as count_rows does and return it, for a caller that
 * pastes it as `WHERE (<where>)` into a statement of its own over the same single table.
 */
export function checkFilter(
  target: WhereTarget,
  where: string,
  deniedFunctions: readonly string[],
): string {
  buildCountSql(target, where, deniedFunctions);
  return where.trim();
}

// Unqualified functions, operators and types resolve in pg_catalog only, so a filter cannot
// call a user-defined function that reads other tables.
export const RESTRICT_SEARCH_PATH =
  "SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true)";

/**
 * `(expr).name` is PostgreSQL's attribute notation for name(expr): ((id::bigint)).pg_advisory_lock
 * takes a session lock. Hold such names to the same deny-list as function calls.
 */
export function refuseAttributeCalls(sql: string, deniedFunctions: readonly string[]): void {
  const isDenied = nameMatcher([...deniedFunctions, ...COUNT_FILTER_DENIED_FUNCTIONS]);
  const parsed = tryParse(sql);
  const names: string[] = [];
  if (parsed.ok) {
    visitNodes(parsed.tree, (type, body) => {
      if (type === 'A_Indirection') {
        names.push(...nameParts((body as { indirection?: unknown }).indirection).filter(isDenied));
      }
    });
  }
  if (names.length > 0) {
    throw invalidInput(
      `Refused where: the function ${[...new Set(names)].join(', ')} is not allowed here (written as (value).${names[0]}). Pass ONE boolean expression over this table's columns.`,
    );
  }
}
