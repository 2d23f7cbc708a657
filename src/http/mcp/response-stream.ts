// The response of one POST request turns into an SSE stream the moment the request sends a
// notification or a request to the client. A modern request's stream also carries its
// cancellation: closing it, or its credential lapsing, aborts the request.
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RpcCodes, RpcError } from '../../mcp/jsonrpc.js';
import type { HttpSession } from '../sessions.js';
import { SseStream, startSse } from '../sse.js';
import type { LapseReason } from '../stream-watch.js';
import { RETRY_MS, type McpEndpoint } from './endpoint.js';
import { watchStream } from './watch.js';

/** A modern request told its credential lapsed gets this long to answer before its stream ends. */
const LAPSE_GRACE_MS = 1000;

const LAPSED: Record<LapseReason, string> = {
  revoked: 'was revoked',
  expired: 'has expired',
  disabled: 'belongs to a disabled user',
  ended: 'has ended (signed out, or its session was closed)',
};

/** The final answer of a modern request whose stream closes because its credential lapsed. */
function credentialLapsed(reason: LapseReason): RpcError {
  return new RpcError(
    RpcCodes.AUTH_REQUIRED,
    `Stream closed: the bearer token it was opened with ${LAPSED[reason]}. Send a valid token to continue.`,
    { reason },
    'auth',
  );
}

export interface ResponseStream {
  /** The SSE stream, opened (the response hijacked) at the first call. */
  open(): SseStream;
  /** The stream when it was opened; null while the answer can still be one JSON body. */
  readonly opened: SseStream | null;
  /** Modern era: aborted when the client closes the response or its credential lapses. */
  readonly signal: AbortSignal | undefined;
}

export function responseStream(
  endpoint: McpEndpoint,
  req: FastifyRequest,
  reply: FastifyReply,
  session: HttpSession | null,
  modern: boolean,
): ResponseStream {
  const res = reply.raw;
  let stream: SseStream | null = null;
  // Modern era: closing the response stream cancels the request. Legacy: it does not.
  const transportAbort = modern ? new AbortController() : null;
  if (transportAbort) {
    res.on('close', () => {
      if (!res.writableFinished) transportAbort.abort(new Error('client closed the stream'));
    });
  }
  const onLapse = (reason: LapseReason): void => {
    if (!transportAbort) {
      // Legacy: the connection ends; the request's answer waits in the session's event store
      // for a resumption, which needs a valid credential.
      res.end();
      return;
    }
    // Modern: the request is cancelled with this reason (subscriptions/listen answers it as
    // its final error); one that does not stop loses its stream all the same.
    transportAbort.abort(credentialLapsed(reason));
    setTimeout(() => {
      if (!res.writableEnded) res.end();
    }, LAPSE_GRACE_MS).unref();
  };
  const open = (): SseStream => {
    if (stream) return stream;
    reply.hijack();
    startSse(res, session ? { 'mcp-session-id': session.id } : {});
    stream = new SseStream(
      randomBytes(6).toString('hex'),
      modern ? null : (session?.store ?? null),
      endpoint.keepAliveMs,
    );
    stream.attach(res);
    watchStream(endpoint.streamWatch, req, res, onLapse);
    if (session && !modern) {
      session.streams.set(stream.id, stream);
      if ((session.protocolVersion ?? '') >= '2025-11-25') stream.prime(RETRY_MS);
    }
    return stream;
  };
  return {
    open,
    get opened() {
      return stream;
    },
    signal: transportAbort?.signal,
  };
}
