// The legacy session a request names with Mcp-Session-Id, used only by the caller who opened it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { headerValue } from '../../mcp/headers.js';
import { RpcCodes } from '../../mcp/jsonrpc.js';
import { principalKey } from '../authenticate.js';
import { sendRpcError } from '../replies.js';
import type { HttpSession, SessionStore } from '../sessions.js';

/** The session the request names, or null after answering 400 (none named) or 404 (not found). */
export function namedSession(
  sessions: SessionStore,
  req: FastifyRequest,
  reply: FastifyReply,
  id: unknown = null,
): HttpSession | null {
  const answerId = typeof id === 'string' || typeof id === 'number' ? id : null;
  const sessionId = headerValue(req.headers['mcp-session-id']);
  if (!sessionId) {
    sendRpcError(
      reply,
      400,
      RpcCodes.INVALID_REQUEST,
      'Missing Mcp-Session-Id header: send initialize first.',
      answerId,
    );
    return null;
  }
  const session = sessions.get(sessionId);
  // Another caller's session is as good as none: it is not confirmed to exist.
  if (!session || session.owner !== principalKey(req.principal)) {
    sendRpcError(
      reply,
      404,
      RpcCodes.SESSION_NOT_FOUND,
      'Session not found: it ended or expired; initialize again.',
      answerId,
    );
    return null;
  }
  return session;
}
