// JSON-RPC 2.0 message shapes and the error codes MCP uses.
import type { ErrorCategory } from '../core/errors.js';

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId | null; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id: JsonRpcId | null; error: JsonRpcErrorObject };

// The codes live in the error table (core/error-table.ts), beside what each one answers.
export { RpcCodes } from '../core/error-table.js';

/** A protocol-level failure: becomes a JSON-RPC error response (never a tool result). */
export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  /** What kind of failure it is, for transports that say more than the code (HTTP: 404). */
  readonly category: ErrorCategory | undefined;

  constructor(code: number, message: string, data?: unknown, category?: ErrorCategory) {
    super(message);
    this.name = 'RpcError';
    this.code = code;
    this.data = data;
    this.category = category;
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type MessageKind = 'request' | 'notification' | 'response' | 'invalid';

export function classify(message: unknown): MessageKind {
  if (!isObject(message) || message['jsonrpc'] !== '2.0') return 'invalid';
  const hasId = 'id' in message;
  const id = message['id'];
  if (typeof message['method'] === 'string') {
    if (!hasId) return 'notification';
    if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) {
      return message['params'] === undefined || isObject(message['params']) ? 'request' : 'invalid';
    }
    return 'invalid';
  }
  if (hasId && ('result' in message || 'error' in message)) return 'response';
  return 'invalid';
}

export function errorResponse(id: JsonRpcId | null, error: JsonRpcErrorObject): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error };
}

export function resultResponse(id: JsonRpcId, result: Record<string, unknown>): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result };
}

/** The id of a message that failed validation, when one can be recovered (else null). */
export function recoverId(message: unknown): JsonRpcId | null {
  if (!isObject(message)) return null;
  const id = message['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
