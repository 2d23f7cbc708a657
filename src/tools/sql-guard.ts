// The second wall around free SQL: PostgreSQL's own parser (libpg-query) decides what a
// statement is before it runs. The first wall is the transaction mode and the role; this
// one refuses what no read-only transaction should even attempt, with a clear reason.
import { loadModule } from 'libpg-query';
import { AppError, ErrorCodes } from '../core/errors.js';
import { nameMatcher } from '../core/glob.js';
import { parseSql, type ParseTree } from './common/parse-tree.js';

export type StatementKind = 'read' | 'write';

export interface GuardOptions {
  allowWrites: boolean;
  /** Function names refused anywhere in a statement; `*` at the end matches a prefix. */
  deniedFunctions: readonly string[];
}

export interface RelationRef {
  schema: string | null;
  name: string;
  alias: string | null;
}

export interface GuardResult {
  kind: StatementKind;
  /** Top-level statement node type, e.g. SelectStmt, ExplainStmt, InsertStmt. */
  statement: string;
  /** What actually runs: the explained statement for EXPLAIN, else the statement itself. */
  effective: string;
  /** EXPLAIN with ANALYZE: the explained statement is executed. */
  analyze: boolean;
  relations: RelationRef[];
  functions: string[];
  /** Names of CTEs, so they are not mistaken for tables. */
  ctes: string[];
  /** Column references as written: ['t', 'email'], ['email'], ['t', '*'], ['*']. */
  columns: string[][];
  /**
   * How many params PostgreSQL will want: the highest `$n` of a statement it analyses for them
   * (SELECT, INSERT, UPDATE, DELETE, MERGE, CALL, CREATE TABLE AS, DECLARE, or one of these under
   * EXPLAIN). Null for any other (DDL: a function body's `$1` is its own argument).
   */
  params: number | null;
}

export { DEFAULT_DENIED_FUNCTIONS } from './denied-functions.js';

/** Statements refused whatever the database allows: they escape the one-call transaction or touch the server. */
const FORBIDDEN: Record<string, string> = {
  TransactionStmt:
    'transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, SET TRANSACTION) is managed by pgmcp',
  VariableSetStmt: 'SET and RESET change session settings that pgmcp controls',
  ListenStmt: 'LISTEN is not available',
  UnlistenStmt: 'UNLISTEN is not available',
  NotifyStmt: 'NOTIFY is not available',
  CopyStmt: 'COPY reads or writes files and programs on the server',
  DoStmt: 'DO runs anonymous code blocks',
  LockStmt: 'LOCK takes table locks',
  VacuumStmt: 'VACUUM and ANALYZE are maintenance commands',
  PrepareStmt: 'prepared-statement commands are managed by pgmcp',
  ExecuteStmt: 'prepared-statement commands are managed by pgmcp',
  DeallocateStmt: 'prepared-statement commands are managed by pgmcp',
  DiscardStmt: 'DISCARD changes session state',
  CheckPointStmt: 'CHECKPOINT is a server command',
  LoadStmt: 'LOAD loads shared libraries',
  AlterSystemStmt: 'ALTER SYSTEM changes server configuration',
  DeclareCursorStmt: 'cursors are managed by pgmcp',
  FetchStmt: 'cursors are managed by pgmcp',
  ClosePortalStmt: 'cursors are managed by pgmcp',
  CreateRoleStmt: 'role management is not available',
  AlterRoleStmt: 'role management is not available',
  AlterRoleSetStmt: 'role management is not available',
  DropRoleStmt: 'role management is not available',
  GrantRoleStmt: 'role management is not available',
  ReassignOwnedStmt: 'role management is not available',
  CreatedbStmt: 'database management is not available',
  DropdbStmt: 'database management is not available',
  AlterDatabaseStmt: 'database management is not available',
  AlterDatabaseSetStmt: 'database management is not available',
  CreateTableSpaceStmt: 'tablespaces are not available',
  DropTableSpaceStmt: 'tablespaces are not available',
  CreateSubscriptionStmt: 'replication commands are not available',
  AlterSubscriptionStmt: 'replication commands are not available',
  DropSubscriptionStmt: 'replication commands are not available',
};

const COMMAND_TAGS: Record<string, string> = {
  InsertStmt: 'INSERT',
  UpdateStmt: 'UPDATE',
  DeleteStmt: 'DELETE',
  MergeStmt: 'MERGE',
  CreateStmt: 'CREATE TABLE',
  CreateTableAsStmt: 'CREATE TABLE AS',
  DropStmt: 'DROP',
  AlterTableStmt: 'ALTER TABLE',
  IndexStmt: 'CREATE INDEX',
  ViewStmt: 'CREATE VIEW',
  CreateFunctionStmt: 'CREATE FUNCTION',
  CreateSchemaStmt: 'CREATE SCHEMA',
  CreateExtensionStmt: 'CREATE EXTENSION',
  CreateSeqStmt: 'CREATE SEQUENCE',
  TruncateStmt: 'TRUNCATE TABLE',
  CallStmt: 'CALL',
  GrantStmt: 'GRANT',
  CommentStmt: 'COMMENT',
  RenameStmt: 'ALTER',
  RefreshMatViewStmt: 'REFRESH MATERIALIZED VIEW',
};

const READ_STATEMENTS = new Set(['SelectStmt', 'VariableShowStmt']);
const WRITE_NODES = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

let loaded: Promise<void> | null = null;

/** Load the parser (WASM) once; call before checkStatement. */
export function loadSqlParser(): Promise<void> {
  return (loaded ??= loadModule());
}

/** Whether an EXPLAIN's options include ANALYZE (not ANALYZE false). */
function explainAnalyzes(node: unknown): boolean {
  const options =
    (node as { options?: { DefElem?: { defname?: string; arg?: unknown } }[] }).options ?? [];
  return options.some((o) => {
    if (o.DefElem?.defname !== 'analyze') return false;
    const arg = JSON.stringify(o.DefElem.arg ?? null);
    return !/"(false|off|0)"|"boolval":\{\}|"ival":0/i.test(arg);
  });
}

/** Compiled once per deny-list (the options object lives as long as the tool). */
const matchers = new WeakMap<readonly string[], (name: string) => boolean>();
function deniedMatcher(names: readonly string[]): (name: string) => boolean {
  let matcher = matchers.get(names);
  if (!matcher) matchers.set(names, (matcher = nameMatcher(names)));
  return matcher;
}

function invalid(message: string, code: string = ErrorCodes.TOOL_INPUT_INVALID): AppError {
  return new AppError(code, message, { category: 'input' });
}

interface Walk {
  columns: string[][];
  relations: RelationRef[];
  functions: string[];
  ctes: string[];
  writes: boolean;
  locking: boolean;
  into: boolean;
  /** Names after a dot (`x.name`, `(expr).name`): PostgreSQL may read them as name(x). */
  attributes: string[];
  params: number;
}

function walk(node: unknown, out: Walk): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, out);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (WRITE_NODES.has(key)) out.writes = true;
    // The target of INSERT/UPDATE/DELETE/MERGE is a bare RangeVar under `relation`.
    const rangeVar =
      key === 'RangeVar' ||
      (key === 'relation' && typeof value === 'object' && value !== null && 'relname' in value);
    if (rangeVar && typeof value === 'object' && value !== null) {
      const v = value as { schemaname?: string; relname?: string; alias?: { aliasname?: string } };
      if (v.relname) {
        out.relations.push({
          schema: v.schemaname ?? null,
          name: v.relname,
          alias: v.alias?.aliasname ?? null,
        });
      }
    } else if (key === 'ColumnRef' && typeof value === 'object' && value !== null) {
      const fields = ((value as { fields?: Record<string, { sval?: string }>[] }).fields ?? []).map(
        (f) => ('A_Star' in f ? '*' : (f['String']?.sval ?? '')),
      );
      out.columns.push(fields);
      for (const field of fields.slice(1)) {
        if (field !== '*') out.attributes.push(field.toLowerCase());
      }
    } else if (key === 'A_Indirection' && typeof value === 'object' && value !== null) {
      const { indirection } = value as { indirection?: { String?: { sval?: string } }[] };
      for (const item of indirection ?? []) {
        if (item.String?.sval) out.attributes.push(item.String.sval.toLowerCase());
      }
    } else if (key === 'FuncCall' && typeof value === 'object' && value !== null) {
      const parts = ((value as { funcname?: { String?: { sval?: string } }[] }).funcname ?? [])
        .map((p) => p.String?.sval)
        .filter((p): p is string => typeof p === 'string');
      const last = parts[parts.length - 1];
      if (last) out.functions.push(last.toLowerCase());
    } else if (key === 'CommonTableExpr' && typeof value === 'object' && value !== null) {
      const name = (value as { ctename?: string }).ctename;
      if (name) out.ctes.push(name);
    } else if (key === 'ParamRef' && typeof value === 'object' && value !== null) {
      out.params = Math.max(out.params, (value as { number?: number }).number ?? 0);
    } else if (key === 'lockingClause') out.locking = true;
    else if (key === 'intoClause') out.into = true;
    walk(value, out);
  }
}

/**
 * Verdicts of recent statements, by their exact text and the options: parameterised statements
 * repeat (the values travel as parameters, so the text is the same), and parsing costs tens of
 * microseconds where a lookup costs a twentieth of one. Refusals are cached as the error to
 * throw again. The least recently used verdict is dropped first. Not by a normalised text
 * (libpg-query's normalize or fingerprint, which erase literals): a verdict may depend on a
 * literal (EXPLAIN's ANALYZE option, a name in a string the policy judges, ORDER BY 1), and
 * computing either costs most of a parse anyway (docs/tools.md, "What is cached").
 */
const verdicts = new Map<string, GuardResult | AppError>();
const PARAMETERISED = new Set(
  'Select Insert Update Delete Merge Call CreateTableAs DeclareCursor'
    .split(' ')
    .map((k) => `${k}Stmt`),
);
const VERDICT_CACHE_SIZE = 512;
/** The parse tree a verdict was reached on, for the stages after it (query-policy). */
const trees = new WeakMap<GuardResult, { sql: string; tree: ParseTree }>();
/** The tree of `sql` that `guard` was reached on; undefined when that is another text. */
export function treeOf(guard: GuardResult, sql: string): ParseTree | undefined {
  const known = trees.get(guard);
  return known?.sql === sql ? known.tree : undefined;
}
const optionKeys = new WeakMap<GuardOptions, string>();

function cacheKey(sql: string, options: GuardOptions): string {
  let key = optionKeys.get(options);
  if (key === undefined) {
    key = `${options.allowWrites ? 'w' : 'r'}${options.deniedFunctions.join(',')}`;
    optionKeys.set(options, key);
  }
  return `${key}\u0000${sql}`;
}

/** Parse and judge one statement. Throws AppError with a reason and what to do instead. */
export function checkStatement(sql: string, options: GuardOptions): GuardResult {
  if (sql.length > 16_384) return judge(sql, options);
  const key = cacheKey(sql, options);
  let verdict = verdicts.get(key);
  if (verdict !== undefined) {
    // Least recently used first out: a hit moves to the end.
    verdicts.delete(key);
    verdicts.set(key, verdict);
  } else {
    try {
      verdict = judge(sql, options);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      verdict = error;
    }
    if (verdicts.size >= VERDICT_CACHE_SIZE)
      verdicts.delete(verdicts.keys().next().value as string);
    verdicts.set(key, verdict);
  }
  if (verdict instanceof AppError) throw verdict;
  return verdict;
}

function judge(sql: string, options: GuardOptions): GuardResult {
  let tree: ParseTree;
  try {
    tree = parseSql(sql);
  } catch (error) {
    const details = (error as { sqlDetails?: { cursorPosition?: number } }).sqlDetails;
    const position = details?.cursorPosition !== undefined ? details.cursorPosition + 1 : undefined;
    throw new AppError(ErrorCodes.DB_QUERY_FAILED, (error as Error).message, {
      category: 'database',
      details: {
        sqlstate: '42601',
        ...(position !== undefined ? { position: String(position) } : {}),
      },
    });
  }
  const statements = tree.stmts ?? [];
  if (statements.length !== 1) {
    throw invalid(
      statements.length === 0
        ? 'The query is empty: send exactly one SQL statement.'
        : `The query holds ${statements.length} statements; send exactly one per call.`,
    );
  }
  const stmt = statements[0]!.stmt ?? {};
  const type = Object.keys(stmt)[0] ?? 'unknown';
  let body: unknown = stmt[type];
  let effective = type;
  if (type === 'ExplainStmt') {
    // EXPLAIN ANALYZE executes its statement: judge what it explains.
    const query = (body as { query?: Record<string, unknown> }).query ?? {};
    effective = Object.keys(query)[0] ?? 'unknown';
    body = query;
  }
  const reason = FORBIDDEN[effective];
  if (reason) throw invalid(`Refused: ${reason}.`);
  const out: Walk = {
    columns: [],
    relations: [],
    functions: [],
    ctes: [],
    writes: false,
    locking: false,
    into: false,
    attributes: [],
    params: 0,
  };
  walk(body, out);
  const isDenied = deniedMatcher(options.deniedFunctions);
  // Attribute notation calls a function too: ('/etc/passwd'::text).pg_read_file is
  // pg_read_file('/etc/passwd'). A column named like a denied function must be unqualified.
  const denied = [...new Set([...out.functions, ...out.attributes].filter(isDenied))];
  if (denied.length > 0) {
    throw invalid(
      `Refused: the function${denied.length > 1 ? 's' : ''} ${denied.join(', ')} ${denied.length > 1 ? 'are' : 'is'} not allowed (side effects or access outside the database).`,
    );
  }
  const writes = !READ_STATEMENTS.has(effective) || out.writes || out.locking || out.into;
  // pg_settings is a view whose UPDATE changes session settings.
  if (
    writes &&
    out.relations.some(
      (r) => r.name === 'pg_settings' && (r.schema ?? 'pg_catalog') === 'pg_catalog',
    )
  ) {
    throw invalid('Refused: writing to pg_settings changes session settings that pgmcp controls.');
  }
  if (writes && !options.allowWrites) {
    const command = out.into
      ? 'SELECT INTO'
      : out.locking
        ? 'SELECT FOR UPDATE/SHARE'
        : READ_STATEMENTS.has(effective)
          ? 'a data-modifying WITH clause'
          : (COMMAND_TAGS[effective] ?? effective.replace(/Stmt$/, '').toUpperCase());
    // Worded as PostgreSQL words it (SQLSTATE 25006): that is what the statement would meet.
    throw new AppError(
      ErrorCodes.WRITE_NOT_ALLOWED,
      `cannot execute ${command} in a read-only transaction. This database is read-only: ask for a SELECT, or configure the database with allowWrites.`,
      { category: 'input', details: { sqlstate: '25006' } },
    );
  }
  const verdict: GuardResult = {
    kind: writes ? 'write' : 'read',
    statement: type,
    effective,
    analyze: type === 'ExplainStmt' && explainAnalyzes(stmt[type]),
    relations: out.relations,
    functions: [...new Set(out.functions)],
    ctes: out.ctes,
    columns: out.columns,
    params: PARAMETERISED.has(effective) ? out.params : null,
  };
  trees.set(verdict, { sql, tree });
  return verdict;
}
