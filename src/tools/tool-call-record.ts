// One tool call as the exchange log and the audit log record it, whoever made it: an MCP
// `tools/call` or the chat agent. The invocation step both run (tools/invoke.ts) builds the
// record here and hands it to the front end's sink (the app's `recordExchange`), so a call is
// recorded the same way on either path: the caller, the tool, its arguments (unless they
// carry a secret), the outcome with its error code, the duration and the database it used.
import type { AppError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { ExchangeRecord } from './handlers/exchange-log.js';
import type { Registry } from './registry.js';

/** Where a recorded call goes: the exchange log and the listeners of the app (the audit). */
export type ToolCallSink = (record: ExchangeRecord) => void;

export interface ToolCall {
  principal: Principal;
  /** The name the caller used (a registry name; it may name no tool). */
  tool: string;
  args: unknown;
  durationMs: number;
  /** The call ended in an error (a refusal before it ran, or an `isError` result). */
  failed: boolean;
  /** The code behind the failure, when it had one (`toolErrorCode`). */
  errorCode?: string | number | null;
  /** The configured database the call used, when several are configured and it used one. */
  database?: string | null;
  /** The chat conversation the call was made in. */
  conversationId?: string | null;
  /** The database server (`host:port`) that answered its last database call. */
  server?: string | null;
}

/** The code recorded for a failed tool: the SQLSTATE, else the PGMCP code. */
export function toolErrorCode(error: AppError): string {
  const sqlstate = error.details?.['sqlstate'];
  return typeof sqlstate === 'string' ? sqlstate : error.code;
}

/**
 * The arguments a record may keep: none for a tool whose arguments hold a secret
 * (authenticate_user's password), nor for a name that is no tool (a mistyped authenticate_user).
 */
export function recordableArguments(
  registry: Pick<Registry, 'tool'>,
  tool: string,
  args: unknown,
): unknown {
  const spec = registry.tool(tool)?.spec;
  if (spec === undefined || spec.sensitiveArguments === true) return undefined;
  return args;
}

export function toolCallRecord(registry: Pick<Registry, 'tool'>, call: ToolCall): ExchangeRecord {
  const record: ExchangeRecord = {
    principal: call.principal,
    method: 'tools/call',
    name: call.tool,
    durationMs: call.durationMs,
    outcome: call.failed ? 'error' : 'ok',
    errorCode: call.failed ? (call.errorCode ?? null) : null,
  };
  if (call.database != null) record.database = call.database;
  if (call.conversationId != null) record.conversationId = call.conversationId;
  if (call.server != null) record.server = call.server;
  const args = recordableArguments(registry, call.tool, call.args);
  if (args !== undefined) record.args = args;
  return record;
}
