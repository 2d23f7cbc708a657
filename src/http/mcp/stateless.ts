// Sessionless legacy-era requests (the curl examples in pgmi's and the pgEdge agent's documentation, gateways that POST one JSON-RPC
// message at a time): served statelessly, on a session that lives for the one request, and
// answered with one plain JSON body. They are delivered like every other message (inbound.ts
// deliver()). See docs/compatibility.md, "HTTP without a session".
import type { Principal } from '../../core/principal.js';
import type { RequestChannel } from '../../mcp/channel.js';
import { headerValue, type HeaderValue } from '../../mcp/headers.js';
import type { Incoming } from '../../mcp/inbound.js';
import {
  errorResponse,
  RpcCodes,
  RpcError,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../../mcp/jsonrpc.js';
import { createSession, type Session } from '../../mcp/session.js';
import { isLegacyVersion, LATEST_LEGACY } from '../../mcp/versions.js';

/**
 * A legacy request or notification that names no session is served without one — except an
 * initialize from a client that accepts SSE (a spec client), which opens a session as before.
 */
export function isStatelessLegacy(
  incoming: Incoming,
  sessionless: boolean,
  admitsSse: boolean,
): boolean {
  if (!sessionless) return false;
  if (incoming.kind === 'notification') return incoming.era === 'legacy';
  if (incoming.kind !== 'request' || incoming.era !== 'legacy') return false;
  return incoming.request.method !== 'initialize' || !admitsSse;
}

/** What only means something on a session that lives on: refused rather than silently lost. */
const SESSION_ONLY = new Set(['resources/subscribe', 'resources/unsubscribe', 'logging/setLevel']);

/** The legacy error answer (a 200) of a request that needs a session; null for any other. */
export function statelessRefusal(request: JsonRpcRequest): JsonRpcResponse | null {
  if (!SESSION_ONLY.has(request.method)) return null;
  return errorResponse(request.id, {
    code: RpcCodes.INVALID_REQUEST,
    message: `${request.method} needs a session: send initialize with an Accept header that admits text/event-stream, then Mcp-Session-Id.`,
  });
}

/**
 * The session of one request: nothing is kept, and it speaks the MCP-Protocol-Version header's
 * legacy version (the newest without one). A notification on it acts on nothing: there is no
 * session to mark initialized, no request of this exchange to cancel.
 */
export function statelessSession(
  headers: Record<string, HeaderValue>,
  principal: Principal,
): Session {
  const session = { ...createSession('stateless', () => undefined, principal), oneRequest: true };
  const version = headerValue(headers['mcp-protocol-version']);
  session.protocolVersion = version && isLegacyVersion(version) ? version : LATEST_LEGACY;
  return session;
}

/** The request's handle: no stream to carry progress, log messages or requests to the client. */
export function statelessChannel(
  session: Session,
  principal: Principal,
  signal?: AbortSignal,
): RequestChannel {
  return {
    session,
    principal,
    inFlight: null,
    ...(signal ? { signal } : {}),
    // Progress and log messages are dropped.
    notify: () => undefined,
    request: () =>
      Promise.reject(
        new RpcError(
          RpcCodes.INTERNAL_ERROR,
          'Server→client requests need a session: initialize with an Accept header that admits text/event-stream.',
        ),
      ),
  };
}
