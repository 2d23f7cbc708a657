// The handle of one request on an HTTP exchange (RequestChannel), built here only: the caller,
// the legacy session, the request's own stream and its stage timings.
import type { Principal } from '../../core/principal.js';
import type { RequestChannel } from '../../mcp/channel.js';
import type { Era } from '../../mcp/dispatcher.js';
import { RpcCodes, RpcError, type JsonRpcRequest } from '../../mcp/jsonrpc.js';
import type { HttpSession } from '../sessions.js';
import type { SseStream } from '../sse.js';
import { RETRY_MS } from './endpoint.js';

/**
 * A lone request gets a response that turns into an SSE stream as soon as it sends a
 * notification or a request to the client (`stream()` opens it); a request inside a batch has
 * no stream of its own (`stream` null).
 */
export function channelFor(
  session: HttpSession | null,
  era: Era,
  principal: Principal,
  stream: (() => SseStream) | null,
  signal: AbortSignal | undefined,
  timing?: (stage: string, durationMs: number) => void,
): RequestChannel {
  return {
    session,
    principal,
    inFlight: session?.inFlight ?? null,
    signal,
    timing,
    notify: (method, params) => stream?.().send({ jsonrpc: '2.0', method, params }),
    disconnect: (retryMs = RETRY_MS) => {
      // Only a resumable stream (legacy, with a session's event store) may drop its connection.
      if (era === 'modern' || !session || !stream) return false;
      const s = stream();
      s.retry(retryMs);
      s.end(false);
      return true;
    },
    request: (method, params, abort) => {
      if (!session || !stream) {
        return Promise.reject(
          new RpcError(
            RpcCodes.INTERNAL_ERROR,
            stream
              ? 'Server→client requests need a legacy session.'
              : 'Server→client requests are not available inside a batch.',
          ),
        );
      }
      return session.outbound.request((message) => stream().send(message), method, params, abort);
    },
  };
}

/** Messages that are not requests never get a channel. */
export const noChannel = (request: JsonRpcRequest): never => {
  throw new Error(`no channel for ${request.method}`);
};
