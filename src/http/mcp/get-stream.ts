// GET on the MCP endpoint (legacy era): the session's stream of messages that belong to no
// request, or, with Last-Event-ID, the resumption of a stream where the client lost it — on
// this instance, or (sessions shared) one another instance sent, followed until it ends.
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_REFUSALS } from '../../core/error-table.js';
import { headerValue } from '../../mcp/headers.js';
import { refuse } from '../refuse.js';
import { GET_STREAM_ID, type HttpSession } from '../sessions.js';
import { parseEventId, SseStream, startSse } from '../sse.js';
import type { McpEndpoint } from './endpoint.js';
import { watchStream } from './watch.js';

/** How often a stream another instance sends is read again while it has not ended. */
const FOLLOW_EVERY_MS = 200;
/** A followed stream that has not ended by then is left (its events are no longer kept). */
const FOLLOW_AT_MOST_MS = 5 * 60_000;

export async function openGetStream(
  endpoint: McpEndpoint,
  req: FastifyRequest,
  reply: FastifyReply,
  session: HttpSession,
): Promise<void> {
  const lastEventId = headerValue(req.headers['last-event-id']);
  const resumeFrom = lastEventId ? parseEventId(lastEventId) : null;
  if (!resumeFrom && session.getStream.connected) {
    refuse(
      req,
      reply,
      HTTP_REFUSALS.STREAM_OPEN,
      'Conflict: this session already has an open GET stream.',
    );
    return;
  }
  reply.hijack();
  const res = reply.raw;
  startSse(res, { 'mcp-session-id': session.id });
  // No JSON-RPC request to answer here: the response simply ends (a resumption needs a valid
  // credential, so the client's reconnect gets 401).
  watchStream(endpoint.streamWatch, req, res, () => res.end());
  if (!resumeFrom) {
    session.getStream.attach(res);
    return;
  }
  const live =
    resumeFrom.streamId === GET_STREAM_ID
      ? session.getStream
      : session.streams.get(resumeFrom.streamId);
  const missed = session.store.after(resumeFrom.streamId, resumeFrom.seq);
  if (live && !live.finished) {
    live.attach(res);
    live.replay(missed);
  } else if (!live && missed.length === 0 && resumeFrom.streamId !== GET_STREAM_ID) {
    await followShared(endpoint, session, res, resumeFrom.streamId, resumeFrom.seq);
  } else {
    const past = new SseStream(resumeFrom.streamId, null, 0);
    past.attach(res);
    past.replay(missed);
    past.end(true);
  }
}

/**
 * A response stream this instance did not send: its events as the sending instance kept them,
 * then whatever it sends next, until it ends, the client leaves or the session ends. Without
 * shared sessions (or with nothing kept), the response just ends, as for a finished stream.
 */
async function followShared(
  endpoint: McpEndpoint,
  session: HttpSession,
  res: ServerResponse,
  streamId: string,
  after: number,
): Promise<void> {
  const stream = new SseStream(streamId, null, endpoint.keepAliveMs);
  stream.attach(res);
  let seq = after;
  const until = Date.now() + FOLLOW_AT_MOST_MS;
  try {
    for (;;) {
      const kept = await endpoint.sessions.sharedEvents(session, streamId, seq);
      if (!kept) break;
      stream.replay(kept.events);
      seq = kept.events.at(-1)?.seq ?? seq;
      if (kept.finished || !stream.connected || !endpoint.sessions.holds(session)) break;
      if (Date.now() > until) break;
      await sleep(FOLLOW_EVERY_MS);
    }
  } catch (error) {
    endpoint.logger.warn({ err: error }, 'a stream kept by another instance could not be read');
  }
  stream.end(true);
}
