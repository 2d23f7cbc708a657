// The one place where a failure becomes MCP's answer, by the error table (core/error-table.ts):
// a JSON-RPC error for the protocol's problems, an isError tool result for the tool's.
// HTTP statuses are not decided here; http/status.ts derives them from the code and category.
import {
  answerOf,
  isExpectedFailure,
  logWithReference,
  type ReferenceLog,
} from '../core/error-table.js';
import type { AppError } from '../core/errors.js';
import { ErrorCodes, isAppError, type ErrorCategory } from '../core/errors.js';
import type { ToolResult } from '../core/content.js';
import type { Era } from './dispatcher.js';
import { RpcCodes, RpcError, type JsonRpcErrorObject } from './jsonrpc.js';

/** Where a tool result carries its error's code, SQLSTATE and fields for clients. */
const ERROR_META_KEY = 'pgmcp/error';

/**
 * -32001 for a caller without the identity a tool, resource or prompt needs. (HTTP
 * authentication answers 401 with WWW-Authenticate before the dispatcher runs.)
 */
export function authRequired(message: string): RpcError {
  return new RpcError(RpcCodes.AUTH_REQUIRED, message, undefined, 'auth');
}

/** -32001 for a signed-in caller whose roles do not allow what it asked for. */
export function forbidden(message: string, requiredRoles?: readonly string[]): RpcError {
  const data = requiredRoles?.length ? { requiredRoles: [...requiredRoles] } : undefined;
  return new RpcError(RpcCodes.AUTH_REQUIRED, message, data, 'forbidden');
}

/** An unknown resource: the table's resource code (-32002 legacy, -32602 2026-07-28), data.uri. */
export function resourceNotFound(era: Era, uri: string, message: string): RpcError {
  const row = answerOf({ code: ErrorCodes.RESOURCE_NOT_FOUND, category: 'not_found' });
  return new RpcError(row.resource![era], message, { uri }, 'not_found');
}

/**
 * What a handler threw, if the protocol must answer it rather than the handler's result: the
 * error table's protocol forms (authentication, a role, a capability the client lacks in the
 * modern era) and, for resources, the row's resource code (a URI that leads nowhere or is
 * malformed). Null: the handler's own failure.
 */
export function protocolErrorOf(error: unknown, era: Era, resourceUri?: string): RpcError | null {
  if (error instanceof RpcError) return error;
  if (!isAppError(error)) return null;
  const row = answerOf(error);
  if (row.mcp === 'protocol' || (row.mcp === 'protocol-modern' && era === 'modern')) {
    if (row.rpc === RpcCodes.MISSING_CAPABILITY) {
      return new RpcError(row.rpc, error.message, {
        requiredCapabilities: error.details?.['requiredCapabilities'] ?? {},
      });
    }
    if (error.category === 'forbidden') {
      const roles = error.details?.['requiredRoles'];
      return forbidden(error.message, Array.isArray(roles) ? (roles as string[]) : undefined);
    }
    return new RpcError(row.rpc, error.message, undefined, error.category);
  }
  if (resourceUri !== undefined && row.resource !== undefined) {
    return new RpcError(row.resource[era], error.message, { uri: resourceUri }, error.category);
  }
  return null;
}

export function toolError(message: string, code?: string): ToolResult {
  const result: ToolResult = { content: [{ type: 'text', text: message }], isError: true };
  if (code !== undefined) result._meta = { [ERROR_META_KEY]: { code } };
  return result;
}

/**
 * A tool's own failure as a result the model reads. The code, SQLSTATE and other fields go
 * to `_meta` for clients, and to structuredContent only when the tool declares no
 * outputSchema: clients validate structuredContent against it even on errors.
 */
export function toolErrorResult(error: AppError, hasOutputSchema: boolean): ToolResult {
  const result = toolError(error.message);
  const error_ = { code: error.code, ...(error.details ?? {}) };
  result._meta = { [ERROR_META_KEY]: error_ };
  const hasDetails = error.details !== undefined && Object.keys(error.details).length > 0;
  if (hasDetails && !hasOutputSchema) result.structuredContent = { error: error_ };
  return result;
}

/**
 * Anything that escaped a request, as the JSON-RPC error to send. An AppError keeps its
 * message unless the table answers it by reference (a bug): that gets a generic message and a
 * reference, logged once to `log` with `fields`.
 */
export function rpcErrorOf(
  error: unknown,
  log: ReferenceLog | undefined,
  fields: Record<string, unknown>,
): { body: JsonRpcErrorObject; category: ErrorCategory | undefined } {
  if (error instanceof RpcError) {
    const body: JsonRpcErrorObject = { code: error.code, message: error.message };
    if (error.data !== undefined) body.data = error.data;
    return { body, category: error.category };
  }
  if (isExpectedFailure(error)) {
    return {
      body: { code: RpcCodes.INTERNAL_ERROR, message: error.message },
      category: error.category,
    };
  }
  const ref = logWithReference(log, { err: error, ...fields }, 'request failed');
  return {
    body: { code: RpcCodes.INTERNAL_ERROR, message: `Internal error (reference ${ref}).` },
    category: 'internal',
  };
}
