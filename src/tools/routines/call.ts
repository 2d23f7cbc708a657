// Running a derived routine: the statement is built only from catalog identifiers (quoted) and
// numbered placeholders, arguments travel as parameters, and results are converted per column
// type so structuredContent matches the output schema.
import type pg from 'pg';
import { AppError, ErrorCodes, isAppError, type ErrorCategory } from '../../core/errors.js';
import type { ToolResult } from '../../core/content.js';
import type { CallContext } from '../../core/specs.js';
import { quoteIdent } from '../../core/sql.js';
import type { Database } from '../../db/database.js';
import { describeDbError } from '../../db/errors.js';
import { qualifiedName, type DerivedRoutine } from './derive.js';
import { baseName, resolveDomain, type TypeMap } from './type-schema.js';

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
export function toParameter(types: TypeMap, oid: number, value: unknown): unknown {
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
      return Buffer.from(value as string, 'base64');
    case 'int8':
    case 'numeric':
      return String(value);
    default:
      return value;
  }
}

/** Build the call: SELECT … FROM schema.fn(…) AS r, or CALL schema.proc(…). */
export function buildCall(
  derived: DerivedRoutine,
  types: TypeMap,
  args: Record<string, unknown>,
): BuiltCall {
  const r = derived.routine;
  const named = derived.inputs.every((p) => p.sqlName !== null);
  const values: unknown[] = [];
  const parts: string[] = [];
  const given = derived.inputs.map((p) => args[p.property] !== undefined);
  const lastGiven = given.lastIndexOf(true);
  derived.inputs.forEach((p, i) => {
    if (!given[i]) {
      if (named || i > lastGiven) return;
      throw new AppError(
        ErrorCodes.TOOL_INPUT_INVALID,
        `${derived.name}: pass ${p.property} as well (its parameters are unnamed, so they are positional).`,
        { category: 'input' },
      );
    }
    values.push(toParameter(types, p.typeOid, args[p.property]));
    const expr = placeholder(types, p.typeOid, values.length);
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
    return { text: `CALL ${callee}(${parts.join(', ')})`, values };
  }
  const shape = derived.shape;
  const from = `${callee}(${parts.join(', ')})`;
  if (shape.kind === 'void') return { text: `SELECT FROM ${from} AS r`, values };
  if (shape.kind === 'scalar') {
    return {
      text: `SELECT ${columnExpr(types, shape.typeOid, 'r.value')} FROM ${from} AS r(value)`,
      values,
    };
  }
  const columns = shape.columns.map((c) => columnExpr(types, c.typeOid, `r.${quoteIdent(c.name)}`));
  return { text: `SELECT ${columns.join(', ')} FROM ${from} AS r`, values };
}

/** How a result column is read: exact text for int8/numeric, base64 for bytea, else to_json. */
function columnExpr(types: TypeMap, oid: number, ref: string): string {
  switch (baseName(types, oid)) {
    case 'int8':
    case 'numeric':
      return `${ref}::pg_catalog.text`;
    case 'bytea':
      return `pg_catalog.translate(pg_catalog.encode(${ref}, 'base64'), E'\\n', '')`;
    default:
      return `pg_catalog.to_json(${ref})`;
  }
}

/** A value read back (text, JSON, or a driver value from CALL) → its JSON form. */
export function fromResult(types: TypeMap, oid: number, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (baseName(types, oid)) {
    case 'int8': {
      const n = Number(value);
      return Number.isSafeInteger(n) ? n : String(value);
    }
    case 'numeric':
      return String(value);
    case 'bytea':
      return Buffer.isBuffer(value) ? value.toString('base64') : value;
    default:
      return value;
  }
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

export function routineError(derived: DerivedRoutine, error: unknown): unknown {
  if (!isAppError(error) || error.category === 'internal') return error;
  const sqlstate = error.details?.['sqlstate'];
  if (typeof sqlstate !== 'string') return error;
  return new AppError(error.code, describeDbError(error), {
    category: PM_CATEGORIES[sqlstate] ?? error.category,
    details: { ...error.details, routine: qualifiedName(derived.routine) },
    cause: error,
  });
}

/** Refuse a caller without one of the @authorize roles, before any database work. */
export function checkAuthorized(derived: DerivedRoutine, ctx: CallContext): void {
  const roles = derived.routine.annotations.authorize;
  if (roles === null) return;
  const anonymous = ctx.principal.kind === 'anonymous';
  if (roles.length === 0 ? !anonymous : roles.some((role) => ctx.principal.roles.includes(role))) {
    return;
  }
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
}

function shapeResult(derived: DerivedRoutine, types: TypeMap, result: pg.QueryResult): unknown {
  const shape = derived.shape;
  const rows = result.rows as unknown[][];
  if (derived.routine.kind === 'procedure') {
    if (shape.kind !== 'row') return undefined;
    const row = rows[0] ?? [];
    return Object.fromEntries(
      shape.columns.map((c, i) => [c.name, fromResult(types, c.typeOid, row[i])]),
    );
  }
  switch (shape.kind) {
    case 'void':
      return undefined;
    case 'scalar': {
      const values = rows.map((row) => fromResult(types, shape.typeOid, row[0]));
      return shape.set ? { items: values } : { value: values[0] ?? null };
    }
    case 'row': {
      const objects = rows.map((row) =>
        Object.fromEntries(
          shape.columns.map((c, i) => [c.name, fromResult(types, c.typeOid, row[i])]),
        ),
      );
      if (shape.set) return { items: objects };
      return objects[0] ?? Object.fromEntries(shape.columns.map((c) => [c.name, null]));
    }
  }
}

export async function callRoutine(
  derived: DerivedRoutine,
  deps: CallDeps,
  args: Record<string, unknown>,
  ctx: CallContext,
): Promise<ToolResult> {
  checkAuthorized(derived, ctx);
  const call = buildCall(derived, deps.types, args);
  let result: pg.QueryResult;
  try {
    result = await deps.db.withTransaction(
      {
        readOnly: derived.readOnly,
        timeoutMs: deps.statementTimeoutMs,
        principal: ctx.principal,
        signal: ctx.signal,
      },
      (client) => client.query({ text: call.text, values: call.values, rowMode: 'array' }),
    );
  } catch (error) {
    throw routineError(derived, error);
  }
  const structured = shapeResult(derived, deps.types, result);
  if (structured === undefined) {
    return { content: [{ type: 'text', text: `${qualifiedName(derived.routine)} completed.` }] };
  }
  return {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured as Record<string, unknown>,
  };
}
