// The legacy session a request names with Mcp-Session-Id, used only by the caller who opened it:
// held by this instance, or loaded from the state database when another instance created it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_REFUSALS } from '../../core/error-table.js';
import { headerValue } from '../../mcp/headers.js';
import { principalKey } from '../authenticate.js';
import { refuse } from '../refuse.js';
import type { HttpSession } from '../sessions.js';
import type { McpEndpoint } from './endpoint.js';

/**
 * The session the request names, or null after answering 400 (none named), 404 (not found) or
 * 503 (the state database cannot say).
 */
export async function namedSession(
  endpoint: Pick<McpEndpoint, 'sessions' | 'logger'>,
  req: FastifyRequest,
  reply: FastifyReply,
  id: unknown = null,
): Promise<HttpSession | null> {
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
  let session: HttpSession | undefined;
  try {
    // Another caller's session is as good as none: it is not confirmed to exist.
    session = await endpoint.sessions.find(sessionId, principalKey(req.principal), req.principal);
  } catch (error) {
    endpoint.logger.warn({ err: error }, 'a shared session could not be loaded');
    refuse(
      req,
      reply,
      HTTP_REFUSALS.STATE_UNAVAILABLE,
      'Service unavailable: the session cannot be looked up now (the state database is unreachable); retry shortly.',
      { id: answerId },
    );
    return null;
  }
  if (!session) {
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
