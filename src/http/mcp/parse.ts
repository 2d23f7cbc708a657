// The parse stage: the body becomes one classified message (mcp/inbound.ts inspect()), its era
// decided once, by the MCP-Protocol-Version header when that names 2026-07-28.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_REFUSALS } from '../../core/error-table.js';
import type { Era } from '../../mcp/dispatcher.js';
import { headerValue } from '../../mcp/headers.js';
import { inspect, type Incoming } from '../../mcp/inbound.js';
import { isModernVersion } from '../../mcp/versions.js';
import { refuse } from '../refuse.js';

/** 'modern' when the request's MCP-Protocol-Version header is a 2026-07-28 one. */
export function headerEra(req: FastifyRequest): Era | undefined {
  return isModernVersion(headerValue(req.headers['mcp-protocol-version']) ?? '')
    ? 'modern'
    : undefined;
}

/** The message the body holds; null after answering -32700 (400) for a body that is not JSON. */
export function readMessage(req: FastifyRequest, reply: FastifyReply): Incoming | null {
  let message: unknown;
  try {
    message = JSON.parse(req.body as string);
  } catch {
    refuse(req, reply, HTTP_REFUSALS.NOT_JSON, 'Parse error: the body is not valid JSON.');
    return null;
  }
  return inspect(message, headerEra(req));
}
