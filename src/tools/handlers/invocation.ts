// Calling a handler: the generated function mcp.handler_<type>_<name>(mcp.request) runs in one
// transaction with the caller's identity; its envelope is converted, and every outcome logged.
import { randomUUID } from 'node:crypto';
import { AppError, isAppError } from '../../core/errors.js';
import type { Principal } from '../../core/principal.js';
import { quoteIdent } from '../../core/sql.js';
import type { CallContext } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { describeDbError } from '../../db/errors.js';
import { screenError } from '../output-screen.js';
import { AUTH_REQUIRED_CODE } from './convert.js';
import type { HandlerRow, RegistryHandlerOptions } from './types.js';

export interface Invocation {
  method: 'tools/call' | 'resources/read' | 'prompts/get';
  /** What the exchange log names: the tool or prompt name, or the URI read. */
  logName: string;
  row: HandlerRow;
  args: Record<string, unknown>;
  uri: string | null;
}

/** requiresAuth handlers need a caller with a user id: to run them, and to see them listed. */
export const isSignedIn = (principal: Principal): boolean => principal.userId !== null;

function authRequired(row: HandlerRow): AppError {
  return new AppError(
    AUTH_REQUIRED_CODE,
    `Authentication required: the ${row.type} ${row.name} needs a signed-in caller.`,
    { category: 'auth' },
  );
}

/** The call of a handler's generated function: built once per loaded row (per catalog load). */
const callTexts = new WeakMap<HandlerRow, string>();
function callText(row: HandlerRow): string {
  let sql = callTexts.get(row);
  if (sql === undefined) {
    sql = `SELECT mcp.${quoteIdent(row.function_name)}(ROW($1::jsonb, $2::text, $3::jsonb, $4::text)::mcp.request) AS response`;
    callTexts.set(row, sql);
  }
  return sql;
}

/** Runs the generated function in one transaction (one round trip) and returns its envelope. */
async function invoke(
  db: Database,
  options: RegistryHandlerOptions,
  call: Invocation,
  ctx: CallContext,
): Promise<unknown> {
  const { row } = call;
  if (row.requires_auth && !isSignedIn(ctx.principal)) throw authRequired(row);
  const context = {
    user_id: ctx.principal.userId,
    tenant_id: ctx.principal.tenantId,
    claims: ctx.principal.claims,
  };
  // BEGIN, the settings, the call and ROLLBACK or COMMIT in one round trip.
  const result = await db.runStatement({
    // A handler tagged read-only runs READ ONLY, and may run on a read replica
    // (database.readReplicas); others write when the database allows writes.
    readOnly: !options.allowWrites || row.tags.includes('read-only'),
    replicaOk: row.tags.includes('read-only'),
    timeoutMs: options.statementTimeoutMs,
    principal: ctx.principal,
    signal: ctx.signal,
    // A generated call of a registered handler: a read-write one keeps its connection.
    keepAfterWrite: true,
    sql: callText(row),
    params: [JSON.stringify(call.args), call.uri, JSON.stringify(context), randomUUID()],
    offset: 0,
    limit: 1,
    // The envelope is read whole, as before (no byte cap of query results applies to it).
    maxBytes: Number.POSITIVE_INFINITY,
  });
  const response = result.rows[0]?.[0];
  if (response === null || response === undefined) {
    throw new AppError(
      'PGMCP202',
      `The ${row.type} handler ${row.name} returned NULL; it must RETURN one of the mcp.*_result builders.`,
      { category: 'database' },
    );
  }
  return response;
}

/** invoke + convert, with database errors made readable and every outcome logged. */
export async function run<T>(
  db: Database,
  options: RegistryHandlerOptions,
  call: Invocation,
  ctx: CallContext,
  convert: (response: unknown) => T,
  failed: (result: T) => boolean = () => false,
): Promise<T> {
  const started = performance.now();
  const log = (outcome: 'ok' | 'error', errorCode: string | null): void =>
    options.exchangeLog?.record({
      principal: ctx.principal,
      method: call.method,
      name: call.logName,
      durationMs: performance.now() - started,
      outcome,
      errorCode,
      args: call.args,
    });
  try {
    const result = convert(await invoke(db, options, call, ctx));
    log(failed(result) ? 'error' : 'ok', null);
    return result;
  } catch (error) {
    const sqlstate = isAppError(error) ? error.details?.['sqlstate'] : undefined;
    log(
      'error',
      isAppError(error) ? String(sqlstate ?? error.details?.['rpcCode'] ?? error.code) : null,
    );
    if (isAppError(error) && error.category !== 'internal' && sqlstate) {
      throw screenError(
        new AppError(error.code, describeDbError(error), {
          category: error.category,
          details: error.details,
          cause: error,
        }),
      );
    }
    throw screenError(error);
  }
}
