// GET on the MCP endpoint (legacy era): the session's stream of messages that belong to no
// request, or, with Last-Event-ID, the resumption of a stream where the client lost it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HTTP_REFUSALS } from '../../core/error-table.js';
import { headerValue } from '../../mcp/headers.js';
import { refuse } from '../refuse.js';
import { GET_STREAM_ID, type HttpSession } from '../sessions.js';
import { parseEventId, SseStream, startSse } from '../sse.js';
import type { McpEndpoint } from './endpoint.js';
import { watchStream } from './watch.js';

export function openGetStream(
  endpoint: McpEndpoint,
  req: FastifyRequest,
  reply: FastifyReply,
  session: HttpSession,
): void {
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
  } else {
    const past = new SseStream(resumeFrom.streamId, null, 0);
    past.attach(res);
    past.replay(missed);
    past.end(true);
  }
}
