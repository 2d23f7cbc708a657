// The session-or-stateless stage: which session a message belongs to. A message that cannot be
// placed is answered here (406, an unsupported legacy version, 400/404 for the session, a
// sessionless request that needs a session) and never delivered.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_REFUSALS } from '../../core/error-table.js';
import { checkLegacyVersionHeader, headerValue } from '../../mcp/headers.js';
import type { Incoming } from '../../mcp/inbound.js';
import type { JsonRpcId } from '../../mcp/jsonrpc.js';
import type { Session } from '../../mcp/session.js';
import { principalKey } from '../authenticate.js';
import { refuse } from '../refuse.js';
import { sendJson } from '../replies.js';
import type { HttpSession } from '../sessions.js';
import { notAcceptable, type Acceptance } from './accept.js';
import type { McpEndpoint } from './endpoint.js';
import { namedSession } from './named-session.js';
import { isStatelessLegacy, statelessRefusal, statelessSession } from './stateless.js';

export type Place =
  /** The modern era, or not a JSON-RPC message: no session. */
  | { kind: 'none' }
  /** A legacy request or notification without Mcp-Session-Id: a session for this one request. */
  | { kind: 'stateless'; session: Session }
  /** Legacy: the session Mcp-Session-Id names, or (`opened`) the one an initialize creates. */
  | { kind: 'session'; session: HttpSession; opened: boolean };

/** Where the message is delivered; null once it was answered here. */
export async function placeOf(
  endpoint: McpEndpoint,
  req: FastifyRequest,
  reply: FastifyReply,
  incoming: Incoming,
  accept: Acceptance,
): Promise<Place | null> {
  const admitsBoth = accept.json && accept.sse;
  const sessionless = headerValue(req.headers['mcp-session-id']) === undefined;
  // A sessionless legacy request is answered with plain JSON, so it need not admit SSE.
  if (
    (incoming.kind === 'request' || incoming.kind === 'notification') &&
    isStatelessLegacy(incoming, sessionless, admitsBoth)
  ) {
    if (incoming.kind === 'request') {
      if (!legacyVersionAgrees(req, reply, incoming.request.id)) return null;
      const refusal = statelessRefusal(incoming.request);
      if (refusal) {
        sendJson(reply, 200, refusal);
        return null;
      }
    }
    return { kind: 'stateless', session: statelessSession(req.headers, req.principal) };
  }
  // A client that holds a session or speaks 2026-07-28 must admit both types.
  if (!admitsBoth && incoming.kind !== 'invalid') {
    notAcceptable(req, reply, 'application/json and text/event-stream');
    return null;
  }
  const named = async (id?: unknown): Promise<Place | null> => {
    const session = await namedSession(endpoint, req, reply, id);
    return session ? { kind: 'session', session, opened: false } : null;
  };
  switch (incoming.kind) {
    case 'invalid':
      return { kind: 'none' };
    case 'batch':
    case 'response':
      return named();
    case 'notification':
      // A modern notification belongs to no session; everything else names one.
      return incoming.era === 'modern' ? { kind: 'none' } : named();
    case 'request': {
      if (incoming.era === 'modern') return { kind: 'none' };
      if (!legacyVersionAgrees(req, reply, incoming.request.id)) return null;
      if (incoming.request.method !== 'initialize') return named(incoming.request.id);
      const session = endpoint.sessions.create(principalKey(req.principal), req.principal);
      return { kind: 'session', session, opened: true };
    }
  }
}

/** A legacy request's MCP-Protocol-Version header, when sent, names a version served; else 400. */
function legacyVersionAgrees(req: FastifyRequest, reply: FastifyReply, id: JsonRpcId): boolean {
  const problem = checkLegacyVersionHeader(req.headers);
  if (problem) refuse(req, reply, HTTP_REFUSALS.VERSION_UNSUPPORTED, problem, { id });
  return problem === undefined;
}
