// The one place the HTTP layer writes a refusal of its own: a row of the error table's
// HTTP_REFUSALS (core/error-table.ts) gives the status and JSON-RPC code, and the route decides
// the form, here and nowhere else: `{"error": …}` under /api, a JSON-RPC error everywhere else.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Refusal } from '../core/error-table.js';
import { errorResponse, type JsonRpcId } from '../mcp/jsonrpc.js';
import { sendJson } from './replies.js';
import { isApiPath } from './security-headers.js';

type AnswerForm = 'rpc' | 'rest';

/** How a route answers failures: /api with `{"error": …}`, the MCP endpoint (and the rest) JSON-RPC. */
export function answerForm(routePath: string): AnswerForm {
  return isApiPath(routePath) ? 'rest' : 'rpc';
}

interface RefusalExtras {
  /** The JSON-RPC id of the request refused, when it is known. */
  id?: JsonRpcId | null;
  /** JSON-RPC `data` (the REST body carries the message only). */
  data?: unknown;
}

export function refuse(
  req: FastifyRequest,
  reply: FastifyReply,
  refusal: Refusal,
  message: string,
  extras: RefusalExtras = {},
): FastifyReply {
  if (answerForm(req.routeOptions.url ?? '') === 'rest') {
    return sendJson(reply, refusal.status, { error: message });
  }
  const error: { code: number; message: string; data?: unknown } = { code: refusal.rpc, message };
  if (extras.data !== undefined) error.data = extras.data;
  return sendJson(reply, refusal.status, errorResponse(extras.id ?? null, error));
}
