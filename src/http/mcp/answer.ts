// The answer stage: a delivery becomes the HTTP response. 202 for what needs no answer, 400 for
// what is not a JSON-RPC message, the batch's answers, or one request's answer: the last event of
// its SSE stream when it opened one, else one JSON body with the HTTP status of the answer
// (status.ts), the session, the Server-Timing header and, for 401/403, the OAuth challenge.
import { answeringServer } from '../../core/request-scope.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Refusals } from '../../core/refusals.js';
import type { Delivery, Incoming } from '../../mcp/inbound.js';
import { challenge } from '../challenge.js';
import { sendJson } from '../replies.js';
import { statusOf } from '../status.js';
import type { McpEndpoint } from './endpoint.js';
import type { Exchange } from './exchange.js';

export function answer(
  endpoint: McpEndpoint,
  req: FastifyRequest,
  reply: FastifyReply,
  incoming: Incoming,
  delivery: Delivery,
  exchange: Exchange,
): void {
  const { place } = exchange;
  const session = place.kind === 'session' ? place.session : null;
  switch (delivery.kind) {
    case 'refused':
      sendJson(reply, 400, delivery.response);
      return;
    case 'batch':
      if (delivery.responses.length > 0) {
        sendJson(reply, 200, delivery.responses, session ? { 'mcp-session-id': session.id } : {});
      } else {
        reply.code(202).send();
      }
      return;
    case 'accepted':
    case 'cancelled':
      reply.code(202).send();
      return;
    case 'answered':
      break;
  }
  const { outcome } = delivery;
  const succeeded = 'result' in outcome.response;
  const { timings } = exchange;
  if (timings.header && incoming.kind === 'request') {
    endpoint.logger.debug(
      { method: incoming.request.method, timings: timings.header },
      'stage timings',
    );
  }
  const stream = exchange.stream?.opened ?? null;
  if (stream !== null) {
    stream.send(outcome.response);
    stream.end(true);
    session?.streams.delete(stream.id);
    return;
  }
  // A failed initialize names no session.
  const named = place.kind === 'session' && (!place.opened || succeeded);
  const headers: Record<string, string> = named ? { 'mcp-session-id': place.session.id } : {};
  // Which database server answered (the primary or a read replica), as a `db;desc=` entry.
  const server = answeringServer();
  const timing = [timings.header, server === null ? '' : `db;desc="${server}"`].filter(Boolean);
  if (timing.length > 0) headers['server-timing'] = timing.join(', ');
  const status = statusOf(outcome);
  if (status === 401 || status === 403) {
    headers['www-authenticate'] = challengeOf(endpoint, req, status, outcome.response);
  }
  sendJson(reply, status, outcome.response, headers);
}

/** 401: sign in; 403: a role is missing, named as the scope to ask for (step-up). */
function challengeOf(
  endpoint: McpEndpoint,
  req: FastifyRequest,
  status: 401 | 403,
  response: unknown,
): string {
  const kind = status === 401 ? 'missing' : 'insufficient_scope';
  const data = (response as { error?: { data?: { requiredRoles?: unknown } } }).error?.data;
  const roles = Array.isArray(data?.requiredRoles) ? (data.requiredRoles as string[]) : undefined;
  if (!endpoint.discovery) return challenge(kind);
  return endpoint.discovery.challengeFor(req, kind, {
    ...(status === 403 ? { description: Refusals.SCOPE_MISSING } : {}),
    ...(roles ? { roles } : {}),
  });
}
