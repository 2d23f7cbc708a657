// Sessionless legacy-era requests (the seeds' curl examples, gateways that POST one JSON-RPC
// message at a time): served statelessly, answered with one plain JSON body. See
// docs/compatibility.md, "HTTP without a session".
import type { Principal } from '../core/principal.js';
import type { RequestChannel } from '../mcp/channel.js';
import type { Dispatcher, Outcome } from '../mcp/dispatcher.js';
import { headerValue, type HeaderValue } from '../mcp/headers.js';
import type { Incoming } from '../mcp/inbound.js';
import { RpcCodes, RpcError } from '../mcp/jsonrpc.js';
import { createSession } from '../mcp/session.js';
import { isLegacyVersion, LATEST_LEGACY } from '../mcp/versions.js';

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

export type StatelessAnswer = { kind: 'accepted' } | { kind: 'answered'; outcome: Outcome };

export async function answerStateless(
  dispatcher: Dispatcher,
  incoming: Extract<Incoming, { kind: 'request' | 'notification' }>,
  headers: Record<string, HeaderValue>,
  principal: Principal,
): Promise<StatelessAnswer> {
  // Nothing to act on: no session to mark initialized, no request of this exchange to cancel.
  if (incoming.kind === 'notification') return { kind: 'accepted' };
  const { request } = incoming;
  if (SESSION_ONLY.has(request.method)) {
    const error = {
      code: RpcCodes.INVALID_REQUEST,
      message: `${request.method} needs a session: send initialize with an Accept header that admits text/event-stream, then Mcp-Session-Id.`,
    };
    return {
      kind: 'answered',
      outcome: { response: { jsonrpc: '2.0', id: request.id, error }, era: 'legacy' },
    };
  }
  const session = { ...createSession('stateless', () => undefined, principal), oneRequest: true };
  const version = headerValue(headers['mcp-protocol-version']);
  session.protocolVersion = version && isLegacyVersion(version) ? version : LATEST_LEGACY;
  const channel: RequestChannel = {
    session,
    principal,
    inFlight: null,
    // No stream to carry progress or log messages: they are dropped.
    notify: () => undefined,
    request: () =>
      Promise.reject(
        new RpcError(
          RpcCodes.INTERNAL_ERROR,
          'Server→client requests need a session: initialize with an Accept header that admits text/event-stream.',
        ),
      ),
  };
  const outcome = await dispatcher.handleRequest(request, 'legacy', channel);
  return { kind: 'answered', outcome };
}
