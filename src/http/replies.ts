// Small helpers for answering on the raw HTTP response with JSON-RPC bodies.
import type { FastifyReply } from 'fastify';
import { errorResponse, type JsonRpcId } from '../mcp/jsonrpc.js';
import { serialize } from '../mcp/serialize.js';

export function sendJson(
  reply: FastifyReply,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): FastifyReply {
  return reply
    .code(status)
    .headers({ 'content-type': 'application/json', ...headers })
    .send(serialize(body));
}

export function sendRpcError(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
  id: JsonRpcId | null = null,
  data?: unknown,
): FastifyReply {
  const error: { code: number; message: string; data?: unknown } = { code, message };
  if (data !== undefined) error.data = data;
  return sendJson(reply, status, errorResponse(id, error));
}

/** Whether an Accept header admits a media type (wildcards included). */
export function accepts(header: string | undefined, type: string): boolean {
  if (!header) return false;
  const [major] = type.split('/');
  return header
    .split(',')
    .map((part) => part.split(';')[0]!.trim().toLowerCase())
    .some((media) => media === type || media === '*/*' || media === `${major}/*`);
}
