// Running a derived routine: the statement is built only from catalog identifiers (quoted) and
// numbered placeholders, arguments travel as parameters, and results are converted per column
// type so structuredContent matches the output schema.
import { AppError, ErrorCodes, isAppError, type ErrorCategory } from '../../core/errors.js';
import type { ToolResult } from '../../core/content.js';
import { holdsRole, type Principal } from '../../core/principal.js';
import type { CallContext } from '../../core/specs.js';
import { quoteIdent } from '../../core/sql.js';
import type { Database } from '../../db/database.js';
import { describeDbError } from '../../db/errors.js';
import { WITHHELD } from '../credentials.js';
import {
  base64LooksLikeCredential,
  screenError,
  screenValue,
  withheldNote,
  type Tally,
} from '../output-screen.js';
import { qualifiedName, type DerivedRoutine } from './derive.js';
import { columnExpr, columnRead, fromResult } from './result-values.js';
import { BASE64, baseName, resolveDomain, type TypeMap } from './type-schema.js';

const BASE64_TEXT = new RegExp(BASE64);

export interface BuiltCall {
  text: string;
  values: unknown[];
}

/** The SQL expression for placeholder $n holding a value of type `oid`. */
function placeholder(types: TypeMap, oid: number, n: number): string {
  const type = types.get(oid)!;
  const resolved = resolveDomain(types, oid)!;
  if (resolved.kind === 'composite') {
    return `pg_catalog.json_populate_record(NULL::${resolved.sql}, $${n}::pg_catalog.json)::${type.sql}`;
  }
  if (resolved.kind === 'array') {
    const element = resolveDomain(types, resolved.elementOid!);
    if (element?.kind === 'composite') {
      const elementType = types.get(resolved.elementOid!)!;
      return (
        `ARRAY(SELECT pg_catalog.json_populate_record(NULL::${element.sql}, e.v)::${elementType.sql}` +
        ` FROM pg_catalog.json_array_elements($${n}::pg_catalog.json) WITH ORDINALITY e(v, i) ORDER BY e.i)::${type.sql}`
      );
    }
  }
  return `$${n}::${type.sql}`;
}

/** A JSON argument → what node-postgres should send for type `oid`. */
function toParameter(types: TypeMap, oid: number, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const type = resolveDomain(types, oid);
  if (!type) return value;
  if (type.kind === 'composite') return JSON.stringify(value);
  if (type.kind === 'array') {
    const element = resolveDomain(types, type.elementOid!);
    if (element?.kind === 'composite') return JSON.stringify(value);
    return (value as unknown[]).map((v) => toParameter(types, type.elementOid!, v));
  }
  switch (baseName(types, oid)) {
    case 'json':
    case 'jsonb':
      return JSON.stringify(value);
    case 'bytea':
      // The input schema says so too; a caller that skipped it must not send garbage bytes.
      if (typeof value !== 'string' || !BASE64_TEXT.test(value)) {
        throw new AppError(
          ErrorCodes.TOOL_INPUT_INVALID,
          'A bytea argument must be base64 text (A-Z, a-z, 0-9, +, /, optional = padding).',
          { category: 'input' },
        );
      }
      return Buffer.from(value, 'base64');
    case 'int8':
    case 'numeric':
      return String(value);
    default:
      return value;
  }
}

/** What a routine's calls reuse, worked out once per catalog load (a reload derives anew). */
interface Prepared {
  types: TypeMap;
  /** By which inputs are given ('1' given, '0' not): the statement's text. */
  texts: Map<string, string>;
  /** The result columns' base type names (scalar: one), for reading values back. */
  columns: (string | null)[];
}
const preparedCalls = new WeakMap<DerivedRoutine, Prepared>();
function prepared(derived: DerivedRoutine, types: TypeMap): Prepared {
  let known = preparedCalls.get(derived);
  if (known?.types !== types) {
    const shape = derived.shape;
    const oids =
      shape.kind === 'scalar'
        ? [shape.typeOid]
        : shape.kind === 'row'
          ? shape.columns.map((c) => c.typeOid)
          : [];
    known = { types, texts: new Map(), columns: oids.map((oid) => columnRead(types, oid)) };
    preparedCalls.set(derived, known);
  }
  return known;
}

/** The statement's text when the inputs marked in `given` are passed, numbered in order. */
function callText(derived: DerivedRoutine, types: TypeMap, given: boolean[]): string {
  const r = derived.routine;
  const named = derived.inputs.every((p) => p.sqlName !== null);
  const parts: string[] = [];
  let n = 0;
  derived.inputs.forEach((p, i) => {
    if (!given[i]) return;
    const expr = placeholder(types, p.typeOid, ++n);
    const variadic = p.variadic ? 'VARIADIC ' : '';
    parts.push(named ? `${variadic}${quoteIdent(p.sqlName!)} => ${expr}` : `${variadic}${expr}`);
  });
  const callee = `${quoteIdent(r.schema)}.${quoteIdent(r.name)}`;
  if (r.kind === 'procedure') {
    // Since PostgreSQL 14, OUT parameters of a procedure take a placeholder argument.
    if (named) {
      for (const a of r.arguments) {
        if (a.mode === 'out' && a.name !== null) parts.push(`${quoteIdent(a.name)} => NULL`);
      }
    }
    return `CALL ${callee}(${parts.join(', ')})`;
  }
  const shape = derived.shape;
  const from = `${callee}(${parts.join(', ')})`;
  if (shape.kind === 'void') return `SELECT FROM ${from} AS r`;
  if (shape.kind === 'scalar')
    return `SELECT ${columnExpr(types, shape.typeOid, 'r.value')} FROM ${from} AS r(value)`;
  const columns = shape.columns.map((c) => columnExpr(types, c.typeOid, `r.${quoteIdent(c.name)}`));
  return `SELECT ${columns.join(', ')} FROM ${from} AS r`;
}

/** Build the call: SELECT … FROM schema.fn(…) AS r, or CALL schema.proc(…). */
export function buildCall(
  derived: DerivedRoutine,
  types: TypeMap,
  args: Record<string, unknown>,
): BuiltCall {
  const named = derived.inputs.every((p) => p.sqlName !== null);
  const values: unknown[] = [];
  const given = derived.inputs.map((p) => args[p.property] !== undefined);
  const lastGiven = given.lastIndexOf(true);
  let key = '';
  derived.inputs.forEach((p, i) => {
    key += given[i] ? '1' : '0';
    if (!given[i]) {
      if (named || i > lastGiven) return;
      throw new AppError(
        ErrorCodes.TOOL_INPUT_INVALID,
        `${derived.name}: pass ${p.property} as well (its parameters are unnamed, so they are positional).`,
        { category: 'input' },
      );
    }
    values.push(toParameter(types, p.typeOid, args[p.property]));
  });
  const { texts } = prepared(derived, types);
  let text = texts.get(key);
  if (text === undefined) texts.set(key, (text = callText(derived, types, given)));
  return { text, values };
}

// ---------------------------------------------------------------------------------------------
// Errors.

/**
 * A routine chooses how its error is classified through the SQLSTATE it raises: class PM with
 * an HTTP status (PM400, PM401, PM403, PM404, PM409, PM422) names the category; any other code
 * keeps the usual classification. The code itself always reaches the caller.
 */
const PM_CATEGORIES: Record<string, ErrorCategory> = {
  PM400: 'input',
  PM401: 'auth',
  PM403: 'forbidden',
  PM404: 'not_found',
  PM409: 'conflict',
  PM422: 'input',
};

function routineError(derived: DerivedRoutine, error: unknown): unknown {
  if (!isAppError(error) || error.category === 'internal') return error;
  const sqlstate = error.details?.['sqlstate'];
  if (typeof sqlstate !== 'string') return error;
  return new AppError(error.code, describeDbError(error), {
    category: PM_CATEGORIES[sqlstate] ?? error.category,
    details: { ...error.details, routine: qualifiedName(derived.routine) },
    cause: error,
  });
}

/**
 * Whether the caller passes @authorize: any authenticated caller for a bare @authorize, a caller
 * with one of the roles otherwise. Also decides whether the tool is listed to this caller.
 */
export function isAuthorized(derived: DerivedRoutine, principal: Principal): boolean {
  const roles = derived.routine.annotations.authorize;
  if (roles === null) return true;
  if (roles.length === 0) return principal.kind !== 'anonymous';
  return holdsRole(principal, roles);
}

/** Refuse a caller without one of the @authorize roles, before any database work. */
function checkAuthorized(derived: DerivedRoutine, ctx: CallContext): void {
  const roles = derived.routine.annotations.authorize;
  if (roles === null || isAuthorized(derived, ctx.principal)) return;
  const anonymous = ctx.principal.kind === 'anonymous';
  const needs =
    roles.length === 0 ? 'an authenticated caller' : `one of the roles ${roles.join(', ')}`;
  throw new AppError(
    ErrorCodes.TOOL_INPUT_INVALID,
    anonymous
      ? `${derived.name} requires ${needs}; this call is anonymous. Connect with a token or OAuth credentials.`
      : `${derived.name} requires ${needs}; the caller has none of them.`,
    { category: anonymous ? 'auth' : 'forbidden', details: { requiredRoles: roles } },
  );
}

// ---------------------------------------------------------------------------------------------
// The call.

export interface CallDeps {
  db: Database;
  types: TypeMap;
  statementTimeoutMs: number;
  /** Rows kept of a set-returning routine (database.maxRows). */
  maxRows: number;
  /** Bytes kept of a result, approximately (database.maxResultBytes). */
  maxResultBytes: number;
}

/** Rows read back, and whether (and by which cap) more were left unread. */
interface Fetched {
  rows: unknown[][];
  truncatedBy: 'rows' | 'bytes' | null;
}

/**
 * One value as the answer carries it: converted, and withheld when it reads like a credential
 * (a routine's body is not analysed, so this screen is all that stands between a function that
 * reads pg_authid and the model). bytea travels as base64: its bytes are what is judged.
 */
function cell(base: string | null, value: unknown, tally: Tally): unknown {
  const converted = fromResult(base, value);
  if (typeof converted === 'string' && base === 'bytea') {
    if (!base64LooksLikeCredential(converted)) return converted;
    tally.count += 1;
    return WITHHELD;
  }
  return screenValue(converted, tally);
}

function shapeResult(
  derived: DerivedRoutine,
  types: TypeMap,
  fetched: Fetched,
  tally: Tally,
): unknown {
  const shape = derived.shape;
  const rows = fetched.rows;
  const bases = prepared(derived, types).columns;
  if (derived.routine.kind === 'procedure') {
    if (shape.kind !== 'row') return undefined;
    const row = rows[0] ?? [];
    return Object.fromEntries(
      shape.columns.map((c, i) => [c.name, cell(bases[i] ?? null, row[i], tally)]),
    );
  }
  const truncated = fetched.truncatedBy !== null ? { truncated: true } : {};
  switch (shape.kind) {
    case 'void':
      return undefined;
    case 'scalar': {
      const values = rows.map((row) => cell(bases[0] ?? null, row[0], tally));
      return shape.set ? { items: values, ...truncated } : { value: values[0] ?? null };
    }
    case 'row': {
      const objects = rows.map((row) =>
        Object.fromEntries(
          shape.columns.map((c, i) => [c.name, cell(bases[i] ?? null, row[i], tally)]),
        ),
      );
      if (shape.set) return { items: objects, ...truncated };
      return objects[0] ?? Object.fromEntries(shape.columns.map((c) => [c.name, null]));
    }
  }
}

// The pipeline keeps a first row that alone is over the byte cap with its long values cut and
// marked (valuesCut); such a row would not match the output schema, so it is refused instead.
function tooLarge(derived: DerivedRoutine, maxBytes: number): AppError {
  return new AppError(
    ErrorCodes.RESULT_TOO_LARGE,
    `${derived.name}: one row of the result is larger than the ${maxBytes}-byte result limit (database.maxResultBytes). Return fewer or shorter columns.`,
    { category: 'input', details: { limitBytes: maxBytes } },
  );
}

/**
 * One round trip whatever the routine: BEGIN (READ ONLY for STABLE and IMMUTABLE functions, the
 * declared mode otherwise), the settings, the call and the closing ROLLBACK or COMMIT before
 * one Sync; rows and bytes capped as they arrive.
 */
async function fetchRows(
  derived: DerivedRoutine,
  deps: CallDeps,
  call: BuiltCall,
  ctx: CallContext,
): Promise<Fetched> {
  const isSet = derived.shape.kind !== 'void' && derived.shape.set;
  const result = await deps.db.runStatement({
    readOnly: derived.readOnly,
    // STABLE and IMMUTABLE routines may run on a read replica; VOLATILE ones never do.
    replicaOk: derived.routine.volatility !== 'volatile',
    timeoutMs: deps.statementTimeoutMs,
    principal: ctx.principal,
    signal: ctx.signal,
    // The call is pgmcp's own text naming a catalogued routine: a read-write one keeps its
    // connection (its settings re-applied before the next call), as it always did.
    keepAfterWrite: true,
    sql: call.text,
    params: call.values,
    offset: 0,
    limit: isSet ? deps.maxRows : 1,
    maxBytes: deps.maxResultBytes,
  });
  if (result.valuesCut) throw tooLarge(derived, deps.maxResultBytes);
  return { rows: result.rows, truncatedBy: isSet ? result.truncatedBy : null };
}

export async function callRoutine(
  derived: DerivedRoutine,
  deps: CallDeps,
  args: Record<string, unknown>,
  ctx: CallContext,
): Promise<ToolResult> {
  checkAuthorized(derived, ctx);
  const call = buildCall(derived, deps.types, args);
  let fetched: Fetched;
  try {
    fetched = await fetchRows(derived, deps, call, ctx);
  } catch (error) {
    throw screenError(routineError(derived, error));
  }
  const withheld: Tally = { count: 0 };
  const structured = shapeResult(derived, deps.types, fetched, withheld);
  if (structured === undefined) {
    return { content: [{ type: 'text', text: `${qualifiedName(derived.routine)} completed.` }] };
  }
  const content: ToolResult['content'] = [{ type: 'text', text: JSON.stringify(structured) }];
  if (fetched.truncatedBy !== null) {
    const count = fetched.rows.length;
    const cap =
      fetched.truncatedBy === 'rows'
        ? `the row limit (database.maxRows = ${deps.maxRows})`
        : `the result size limit (database.maxResultBytes = ${deps.maxResultBytes})`;
    content.push({
      type: 'text',
      text: `Truncated: only the first ${count} row${count === 1 ? '' : 's'} are shown, cut at ${cap}; more rows exist. Narrow the call (arguments that filter) to see the rest.`,
    });
  }
  if (withheld.count > 0) content.push({ type: 'text', text: withheldNote(withheld.count) });
  return { content, structuredContent: structured as Record<string, unknown> };
}
