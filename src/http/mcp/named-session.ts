// The legacy session a request names with Mcp-Session-Id, used only by the caller who opened it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_REFUSALS } from '../../core/error-table.js';
import { headerValue } from '../../mcp/headers.js';
import { principalKey } from '../authenticate.js';
import { refuse } from '../refuse.js';
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
    refuse(
      req,
      reply,
      HTTP_REFUSALS.SESSION_MISSING,
      'Missing Mcp-Session-Id header: send initialize first.',
      { id: answerId },
    );
    return null;
  }
  const session = sessions.get(sessionId);
  // Another caller's session is as good as none: it is not confirmed to exist.
  if (!session || session.owner !== principalKey(req.principal)) {
    refuse(
      req,
      reply,
      HTTP_REFUSALS.SESSION_NOT_FOUND,
      'Session not found: it ended or expired; initialize again.',
      { id: answerId },
    );
    return null;
  }
  return session;
}
