// The transport seam: every message a client sends, over stdio or HTTP, is classified here,
// its era decided once, the batch rule applied, and it is handed to the dispatcher. A
// transport supplies a Link (what it knows of the connection) and turns the Delivery into
// its own answer (a line on stdout; a JSON body, an SSE stream or a 202 on HTTP).
import type { RequestChannel } from './channel.js';
import type { Dispatcher, Era, Outcome } from './dispatcher.js';
import type { HeaderValue } from './headers.js';
import {
  classify,
  errorResponse,
  isObject,
  recoverId,
  RpcCodes,
  type JsonRpcId,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './jsonrpc.js';
import type { Outbound } from './outbound.js';
import type { InFlight, Session } from './session.js';
import { batchRefusal, META_PROTOCOL_VERSION } from './versions.js';

export type Incoming =
  | { kind: 'request'; request: JsonRpcRequest; era: Era }
  | { kind: 'notification'; notification: JsonRpcNotification; era: Era }
  | { kind: 'response'; message: Record<string, unknown> }
  | { kind: 'batch'; messages: unknown[] }
  | { kind: 'invalid'; id: JsonRpcId | null };

/** What a transport knows of the connection a message arrived on. */
export interface Link {
  /** The legacy-era session the message belongs to; null when there is none. */
  session: Session | null;
  /** Requests in flight that notifications/cancelled may stop; null where closing the stream cancels. */
  inFlight: InFlight | null;
  /** Where the client's answers to our server→client requests go; null when none can be pending. */
  outbound: Outbound | null;
  /**
   * Requests the client cancelled whose answers are dropped (stdio: the client stopped
   * waiting). Absent where a cancelled request is still answered.
   */
  cancelled?: Set<JsonRpcId>;
  /** HTTP request headers, checked against a modern request's body; absent on stdio. */
  headers?: Record<string, HeaderValue>;
  /**
   * A notifications/cancelled naming no request in flight here, or a client's answer that
   * settles no request of ours: told at once, a batch's too (HTTP: the request may run on
   * another instance of a shared session). Absent where nothing runs elsewhere.
   */
  elsewhere?: {
    cancel(requestId: string | number, reason: unknown): void;
    answer(message: Record<string, unknown>): void;
  };
  /** The handle for one request; `batched` when it arrived inside a batch. */
  channel(request: JsonRpcRequest, era: Era, batched: boolean): RequestChannel;
}

export type Delivery =
  /** A request, answered (successfully or with a JSON-RPC error). */
  | { kind: 'answered'; outcome: Outcome }
  /** A request the client cancelled while it ran (Link.cancelled): nothing to answer. */
  | { kind: 'cancelled' }
  /** A notification, or a client's response to one of our requests: nothing to answer. */
  | { kind: 'accepted'; settled?: boolean }
  /** A batch: the answers to its requests (empty when it held none). */
  | { kind: 'batch'; responses: JsonRpcResponse[] }
  /** Not a JSON-RPC message, or a batch this protocol revision does not allow. */
  | { kind: 'refused'; response: JsonRpcResponse };

/**
 * A request is modern when the transport already knows so (HTTP: a 2026-07-28
 * MCP-Protocol-Version header, so a broken _meta is judged by modern rules) or when its
 * _meta names a protocol version; otherwise legacy.
 */
function eraOf(params: Record<string, unknown> | undefined, knownEra?: Era): Era {
  if (knownEra) return knownEra;
  const meta = params?.['_meta'];
  return isObject(meta) && META_PROTOCOL_VERSION in meta ? 'modern' : 'legacy';
}

export function inspect(message: unknown, knownEra?: Era): Incoming {
  if (Array.isArray(message)) return { kind: 'batch', messages: message };
  switch (classify(message)) {
    case 'request': {
      const request = message as JsonRpcRequest;
      return { kind: 'request', request, era: eraOf(request.params, knownEra) };
    }
    case 'notification': {
      const notification = message as JsonRpcNotification;
      return { kind: 'notification', notification, era: eraOf(notification.params, knownEra) };
    }
    case 'response':
      return { kind: 'response', message: message as Record<string, unknown> };
    default:
      return { kind: 'invalid', id: recoverId(message) };
  }
}

const invalid = (id: JsonRpcId | null, batched: boolean): JsonRpcResponse =>
  errorResponse(id, {
    code: RpcCodes.INVALID_REQUEST,
    message: batched
      ? 'Invalid JSON-RPC message in batch.'
      : 'Invalid JSON-RPC message: expected one request, notification or response.',
  });

export async function deliver(
  dispatcher: Dispatcher,
  incoming: Incoming,
  link: Link,
): Promise<Delivery> {
  if (incoming.kind === 'batch') {
    const refusal = batchRefusal(link.session?.protocolVersion ?? null, incoming.messages.length);
    if (refusal) {
      return {
        kind: 'refused',
        response: errorResponse(null, { code: RpcCodes.INVALID_REQUEST, message: refusal }),
      };
    }
    const answers = await Promise.all(
      incoming.messages.map((m) => deliverOne(dispatcher, inspect(m), link, true)),
    );
    const responses: JsonRpcResponse[] = [];
    for (const answer of answers) {
      if (answer.kind === 'answered') responses.push(answer.outcome.response);
      else if (answer.kind === 'refused') responses.push(answer.response);
    }
    return { kind: 'batch', responses };
  }
  return deliverOne(dispatcher, incoming, link, false);
}

async function deliverOne(
  dispatcher: Dispatcher,
  incoming: Incoming,
  link: Link,
  batched: boolean,
): Promise<Delivery> {
  switch (incoming.kind) {
    case 'request': {
      const { request, era } = incoming;
      if (era === 'modern' && link.headers) {
        const mismatch = dispatcher.checkHeaders(request, link.headers);
        if (mismatch) return { kind: 'answered', outcome: mismatch };
      }
      const outcome = await dispatcher.handleRequest(
        request,
        era,
        link.channel(request, era, batched),
      );
      if (link.cancelled?.delete(request.id)) return { kind: 'cancelled' };
      return { kind: 'answered', outcome };
    }
    case 'notification': {
      const { notification } = incoming;
      if (notification.method === 'notifications/cancelled') {
        const id = notification.params?.['requestId'];
        if (typeof id === 'string' || typeof id === 'number') {
          if (!link.inFlight?.has(id)) link.elsewhere?.cancel(id, notification.params?.['reason']);
          else link.cancelled?.add(id);
        }
      }
      dispatcher.handleNotification(notification, link.inFlight);
      return { kind: 'accepted' };
    }
    case 'response': {
      const settled = link.outbound?.settle(incoming.message) ?? false;
      if (!settled) link.elsewhere?.answer(incoming.message);
      return { kind: 'accepted', settled };
    }
    case 'batch':
      // A batch inside a batch is not a JSON-RPC message.
      return { kind: 'refused', response: invalid(null, true) };
    default:
      return { kind: 'refused', response: invalid(incoming.id, batched) };
  }
}
