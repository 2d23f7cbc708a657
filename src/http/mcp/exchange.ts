// What the transport seam is handed for one placed message (mcp/inbound.ts Link): its session,
// the requests in flight and pending on it, the headers, and how each request gets its channel.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Incoming, Link } from '../../mcp/inbound.js';
import { channelFor, noChannel } from './channel.js';
import type { McpEndpoint } from './endpoint.js';
import type { Place } from './place.js';
import { responseStream, type ResponseStream } from './response-stream.js';
import { statelessChannel } from './stateless.js';
import { serverTimings, type ServerTimings } from './timings.js';

export interface Exchange {
  readonly place: Place;
  readonly link: Link;
  /** What the request's handler timed (the Server-Timing header). */
  readonly timings: ServerTimings;
  /** A lone request's response, which may turn into an SSE stream; null for anything else. */
  readonly stream: ResponseStream | null;
  /**
   * Cancellations and client answers passed on to the other instances, a batch's included,
   * each sent as soon as it was met (keep-session.ts waits for them before the answer).
   */
  readonly forwarded: Promise<void>[];
}

export function exchangeFor(
  endpoint: McpEndpoint,
  req: FastifyRequest,
  reply: FastifyReply,
  incoming: Incoming,
  place: Place,
): Exchange {
  const kept = place.kind === 'session' ? place.session : null;
  const timings = serverTimings();
  const forwarded: Promise<void>[] = [];
  // Never rejects: a batch may take long to answer, and the failure is only logged.
  const forward = (sending: Promise<void>): void => {
    forwarded.push(
      sending.catch((error: unknown) =>
        endpoint.logger.warn(
          { err: error, session: kept?.id },
          'a cancellation or client answer could not be passed to the other instances',
        ),
      ),
    );
  };
  // A session another instance may also serve: what names none of its requests here may name
  // one running there.
  const elsewhere: Link['elsewhere'] = kept
    ? {
        cancel: (id, reason) => forward(endpoint.sessions.forwardCancel(kept, id, reason)),
        answer: (message) => forward(endpoint.sessions.forwardAnswer(kept, message)),
      }
    : undefined;
  const exchange = (channel: Link['channel'], stream: ResponseStream | null = null): Exchange => ({
    place,
    link: {
      session: place.kind === 'none' ? null : place.session,
      inFlight: kept?.inFlight ?? null,
      outbound: kept?.outbound ?? null,
      headers: req.headers,
      ...(elsewhere ? { elsewhere } : {}),
      channel,
    },
    timings,
    stream,
    forwarded,
  });
  if (place.kind === 'stateless') {
    // Nothing keeps the answer of a request without a session: a client that goes away ends
    // the work (a query, a tasks/result wait) instead of leaving it to run for nobody.
    const gone = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) gone.abort(new Error('client closed the connection'));
    });
    return exchange(() => statelessChannel(place.session, req.principal, gone.signal));
  }
  switch (incoming.kind) {
    case 'request': {
      const stream = responseStream(endpoint, req, reply, kept, incoming.era === 'modern');
      return exchange(
        (_request, era) =>
          channelFor(kept, era, req.principal, stream.open, stream.signal, timings.add),
        stream,
      );
    }
    case 'batch':
      return exchange((_request, era) => channelFor(kept, era, req.principal, null, undefined));
    default:
      return exchange(noChannel);
  }
}
