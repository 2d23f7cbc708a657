// POST/GET/DELETE on the MCP endpoint (Streamable HTTP), both eras. Each stage is a function of
// its own under mcp/; every message goes through the transport seam (mcp/inbound.ts deliver()).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { clientError, HTTP_REFUSALS } from '../core/error-table.js';
import type { Dispatcher } from '../mcp/dispatcher.js';
import { deliver } from '../mcp/inbound.js';
import { acceptanceOf, notAcceptable } from './mcp/accept.js';
import { answer } from './mcp/answer.js';
import type { McpEndpoint } from './mcp/endpoint.js';
import { exchangeFor } from './mcp/exchange.js';
import { openGetStream } from './mcp/get-stream.js';
import { namedSession } from './mcp/named-session.js';
import { headerEra, readMessage } from './mcp/parse.js';
import { placeOf } from './mcp/place.js';
import { keepSession } from './mcp/keep-session.js';
import type { OAuthDiscovery } from './oauth-discovery.js';
import { refuse } from './refuse.js';
import type { SessionStore } from './sessions.js';
import type { StreamWatch } from './stream-watch.js';

export interface McpRouteOptions {
  paths: string[];
  dispatcher: Dispatcher;
  sessions: SessionStore;
  logger: Logger;
  keepAliveMs: number;
  /** With OAuth: challenges name the protected resource metadata and the scope to ask for. */
  discovery?: OAuthDiscovery | null;
  /** Closes the SSE streams of a credential that is revoked, expired or ended (stream-watch.ts). */
  streamWatch?: StreamWatch | null;
}

type Handler = (req: FastifyRequest, reply: FastifyReply) => Promise<void>;

export function registerMcpRoutes(app: FastifyInstance, options: McpRouteOptions): void {
  const endpoint: McpEndpoint = {
    dispatcher: options.dispatcher,
    sessions: options.sessions,
    logger: options.logger,
    keepAliveMs: options.keepAliveMs,
    discovery: options.discovery ?? null,
    streamWatch: options.streamWatch ?? null,
  };

  /** accept → parse (inspect, era) → session or stateless → deliver → answer. */
  const post: Handler = async (req, reply) => {
    const accept = acceptanceOf(req);
    if (!accept.json) return notAcceptable(req, reply, 'application/json and text/event-stream');
    const incoming = readMessage(req, reply);
    if (!incoming) return;
    const place = await placeOf(endpoint, req, reply, incoming, accept);
    if (!place) return;
    const exchange = exchangeFor(endpoint, req, reply, incoming, place);
    const delivery = await deliver(endpoint.dispatcher, incoming, exchange.link);
    if (place.kind === 'session') {
      await keepSession(endpoint, place, incoming, delivery, exchange.forwarded);
    }
    answer(endpoint, req, reply, incoming, delivery, exchange);
  };

  /** The session's GET stream, or the resumption of a stream (legacy era only). */
  const get: Handler = async (req, reply) => {
    if (headerEra(req) === 'modern') return methodNotAllowed(reply);
    if (!acceptanceOf(req).sse) return notAcceptable(req, reply, 'text/event-stream');
    const session = await namedSession(endpoint, req, reply);
    if (session) await openGetStream(endpoint, req, reply, session);
  };

  /** Ends the session (legacy era only). */
  const del: Handler = async (req, reply) => {
    if (headerEra(req) === 'modern') return methodNotAllowed(reply);
    const session = await namedSession(endpoint, req, reply);
    if (!session) return;
    await endpoint.sessions.delete(session.id);
    reply.code(200).send();
  };

  const wrap =
    (handler: Handler) =>
    async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
      await handler(req, reply).catch((error: unknown) => failed(req, reply, error));
      return reply;
    };
  for (const path of options.paths) {
    app.post(path, wrap(post));
    app.get(path, wrap(get));
    app.delete(path, wrap(del));
    // Any other method is the endpoint's own refusal (405, JSON-RPC), not the framework's 404
    // in its own shape. OPTIONS only where CORS has no catch-all preflight route: a route of
    // ours would take the preflights from it.
    const others = app.hasRoute({ method: 'OPTIONS', url: '*' }) ? [] : ['OPTIONS' as const];
    app.route({ method: ['PUT', 'PATCH', ...others], url: path, handler: wrongMethod });
  }

  function failed(req: FastifyRequest, reply: FastifyReply, error: unknown): void {
    options.logger.error({ err: error }, 'mcp route failed');
    if (!reply.sent && !reply.raw.headersSent) {
      refuse(req, reply, HTTP_REFUSALS.INTERNAL, 'Internal error; see the server log.');
    } else if (!reply.raw.writableEnded) {
      reply.raw.end();
    }
  }
}

async function wrongMethod(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  reply.header('allow', 'GET, POST, DELETE');
  const message = `Method ${req.method} is not allowed here: use POST (GET and DELETE in a session).`;
  return refuse(req, reply, clientError(405), message);
}

/** 2026-07-28 has no GET stream and no session to delete. */
function methodNotAllowed(reply: FastifyReply): void {
  reply.code(405).header('allow', 'POST').send();
}
