// POST/GET/DELETE on the MCP endpoint (Streamable HTTP), both eras.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Principal } from '../core/principal.js';
import { Refusals } from '../core/refusals.js';
import { principalKey } from './authenticate.js';
import type { RequestChannel } from '../mcp/channel.js';
import type { Dispatcher, Era } from '../mcp/dispatcher.js';
import { checkLegacyVersionHeader, headerValue } from '../mcp/headers.js';
import { deliver, inspect, type Incoming, type Link } from '../mcp/inbound.js';
import { RpcCodes, RpcError, type JsonRpcRequest } from '../mcp/jsonrpc.js';
import { isModernVersion } from '../mcp/versions.js';
import { accepts, sendJson, sendRpcError } from './replies.js';
import type { HttpSession, SessionStore } from './sessions.js';
import { GET_STREAM_ID } from './sessions.js';
import { parseEventId, SseStream, startSse } from './sse.js';
import { challenge } from './challenge.js';
import type { OAuthDiscovery } from './oauth-discovery.js';
import { answerStateless, isStatelessLegacy } from './stateless.js';
import { statusOf } from './status.js';
import type { LapseReason, StreamWatch } from './stream-watch.js';

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

const RETRY_MS = 1000;
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

const header = (req: FastifyRequest, name: string): string | undefined =>
  headerValue(req.headers[name]);

interface ServerTimings {
  add(stage: string, durationMs: number): void;
  /** The Server-Timing header value; '' when nothing was timed. */
  readonly header: string;
}

/** Stage timings a handler reports, as a Server-Timing header (`parse;dur=0.41, run;dur=1.9`). */
function serverTimings(): ServerTimings {
  const parts: string[] = [];
  return {
    add(stage, durationMs) {
      if (/^[A-Za-z0-9_-]+$/.test(stage)) parts.push(`${stage};dur=${durationMs.toFixed(2)}`);
    },
    get header() {
      return parts.join(', ');
    },
  };
}

/** Messages that are not requests never get a channel. */
const noChannel = (request: JsonRpcRequest): never => {
  throw new Error(`no channel for ${request.method}`);
};

export function registerMcpRoutes(app: FastifyInstance, options: McpRouteOptions): void {
  const { dispatcher, sessions, logger } = options;

  /** 401: sign in; 403: a role is missing, named as the scope to ask for (step-up). */
  const challengeOf = (req: FastifyRequest, status: 401 | 403, response: unknown): string => {
    const kind = status === 401 ? 'missing' : 'insufficient_scope';
    const data = (response as { error?: { data?: { requiredRoles?: unknown } } }).error?.data;
    const roles = Array.isArray(data?.requiredRoles) ? (data.requiredRoles as string[]) : undefined;
    if (!options.discovery) return challenge(kind);
    return options.discovery.challengeFor(req, kind, {
      ...(status === 403 ? { description: Refusals.SCOPE_MISSING } : {}),
      ...(roles ? { roles } : {}),
    });
  };

  /** Run `onLapse` (once) if the credential this SSE response was opened with lapses. */
  const watchStream = (
    req: FastifyRequest,
    res: FastifyReply['raw'],
    onLapse: (reason: LapseReason) => void,
  ): void => {
    const credential = options.streamWatch?.credentialOf(req);
    if (!credential || res.writableEnded) return;
    const unwatch = options.streamWatch!.watch(credential, onLapse);
    res.once('close', unwatch);
  };

  /** Find the session a legacy request names, or answer 400/404 and return null. */
  const sessionFor = (
    req: FastifyRequest,
    reply: FastifyReply,
    id: unknown = null,
  ): HttpSession | null => {
    const sessionId = header(req, 'mcp-session-id');
    if (!sessionId) {
      sendRpcError(
        reply,
        400,
        RpcCodes.INVALID_REQUEST,
        'Missing Mcp-Session-Id header: send initialize first.',
        typeof id === 'string' || typeof id === 'number' ? id : null,
      );
      return null;
    }
    const session = sessions.get(sessionId);
    // Another caller's session is as good as none: it is not confirmed to exist.
    if (!session || session.owner !== principalKey(req.principal)) {
      sendRpcError(
        reply,
        404,
        RpcCodes.SESSION_NOT_FOUND,
        'Session not found: it ended or expired; initialize again.',
        typeof id === 'string' || typeof id === 'number' ? id : null,
      );
      return null;
    }
    return session;
  };

  /**
   * The handle for one request on this HTTP exchange. A lone request gets a response that
   * turns into an SSE stream as soon as it sends a notification or a request to the client
   * (`stream()` opens it); a request inside a batch has no stream of its own.
   */
  const channelFor = (
    session: HttpSession | null,
    era: Era,
    principal: Principal,
    stream: (() => SseStream) | null,
    signal: AbortSignal | undefined,
    timings?: ServerTimings,
  ): RequestChannel => ({
    session,
    principal,
    inFlight: session?.inFlight ?? null,
    signal,
    timing: timings?.add,
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
  });

  const linkFor = (
    req: FastifyRequest,
    session: HttpSession | null,
    channel: Link['channel'],
  ): Link => ({
    session,
    inFlight: session?.inFlight ?? null,
    outbound: session?.outbound ?? null,
    headers: req.headers,
    channel,
  });

  /**
   * Run one request and answer it: as JSON when it produced nothing but its result, or
   * as an SSE stream as soon as it sends a notification or a request to the client.
   */
  const respond = async (
    req: FastifyRequest,
    reply: FastifyReply,
    incoming: Extract<Incoming, { kind: 'request' }>,
    session: HttpSession | null,
    onAnswered?: (answered: boolean) => void,
  ): Promise<void> => {
    const res = reply.raw;
    const modern = incoming.era === 'modern';
    let stream: SseStream | null = null;
    // Modern era: closing the response stream cancels the request. Legacy: it does not.
    const transportAbort = modern ? new AbortController() : null;
    if (transportAbort) {
      res.on('close', () => {
        if (!res.writableFinished) transportAbort.abort(new Error('client closed the stream'));
      });
    }
    const sessionHeaders: Record<string, string> = session ? { 'mcp-session-id': session.id } : {};
    const ensureStream = (): SseStream => {
      if (stream) return stream;
      reply.hijack();
      startSse(res, sessionHeaders);
      stream = new SseStream(
        randomBytes(6).toString('hex'),
        modern ? null : (session?.store ?? null),
        options.keepAliveMs,
      );
      stream.attach(res);
      watchStream(req, res, (reason) => {
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
      });
      if (session && !modern) {
        session.streams.set(stream.id, stream);
        if ((session.protocolVersion ?? '') >= '2025-11-25') stream.prime(RETRY_MS);
      }
      return stream;
    };
    const timings = serverTimings();
    const link = linkFor(req, session, (_request, era) =>
      channelFor(session, era, req.principal, ensureStream, transportAbort?.signal, timings),
    );
    const delivery = await deliver(dispatcher, incoming, link);
    if (delivery.kind !== 'answered') return; // only requests reach respond()
    const { outcome } = delivery;
    const answered = 'result' in outcome.response;
    if (timings.header) {
      logger.debug({ method: incoming.request.method, timings: timings.header }, 'stage timings');
    }
    onAnswered?.(answered);
    if (stream !== null) {
      const s: SseStream = stream;
      s.send(outcome.response);
      s.end(true);
      session?.streams.delete(s.id);
      return;
    }
    // A failed initialize creates no session, so it names none.
    const named = onAnswered === undefined || answered;
    const headers = named ? { ...sessionHeaders } : {};
    if (timings.header) headers['server-timing'] = timings.header;
    const status = statusOf(outcome);
    if (status === 401 || status === 403) {
      headers['www-authenticate'] = challengeOf(req, status, outcome.response);
    }
    sendJson(reply, status, outcome.response, headers);
  };

  const notAcceptable = (reply: FastifyReply): void => {
    sendRpcError(
      reply,
      406,
      RpcCodes.INVALID_REQUEST,
      'Not Acceptable: the Accept header must include application/json and text/event-stream.',
    );
  };

  const post = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    // No Accept at all is read as JSON (seed clients: curl, gateways). A client that holds a
    // session or speaks 2026-07-28 must admit both types; a sessionless legacy request is
    // answered with plain JSON (see stateless.ts).
    const accept = req.headers.accept;
    const admitsJson = accept === undefined || accepts(accept, 'application/json');
    const admitsBoth = admitsJson && accepts(accept, 'text/event-stream');
    if (!admitsJson) return notAcceptable(reply);
    let message: unknown;
    try {
      message = JSON.parse(req.body as string);
    } catch {
      sendRpcError(reply, 400, RpcCodes.PARSE_ERROR, 'Parse error: the body is not valid JSON.');
      return;
    }
    const headerEra = isModernVersion(header(req, 'mcp-protocol-version') ?? '')
      ? 'modern'
      : undefined;
    const incoming = inspect(message, headerEra);
    const sessionless = header(req, 'mcp-session-id') === undefined;
    if (
      (incoming.kind === 'request' || incoming.kind === 'notification') &&
      isStatelessLegacy(incoming, sessionless, admitsBoth)
    ) {
      const versionProblem = checkLegacyVersionHeader(req.headers);
      if (versionProblem && incoming.kind === 'request') {
        sendRpcError(reply, 400, RpcCodes.INVALID_REQUEST, versionProblem, incoming.request.id);
        return;
      }
      const stateless = await answerStateless(dispatcher, incoming, req.headers, req.principal);
      if (stateless.kind === 'accepted') {
        reply.code(202).send();
        return;
      }
      const status = statusOf(stateless.outcome);
      const headers: Record<string, string> = {};
      if (status === 401 || status === 403) {
        headers['www-authenticate'] = challengeOf(req, status, stateless.outcome.response);
      }
      sendJson(reply, status, stateless.outcome.response, headers);
      return;
    }
    if (!admitsBoth && incoming.kind !== 'invalid') return notAcceptable(reply);
    switch (incoming.kind) {
      case 'invalid': {
        const delivery = await deliver(dispatcher, incoming, linkFor(req, null, noChannel));
        if (delivery.kind === 'refused') sendJson(reply, 400, delivery.response);
        return;
      }
      case 'batch': {
        const session = sessionFor(req, reply);
        if (!session) return;
        const delivery = await deliver(
          dispatcher,
          incoming,
          linkFor(req, session, (_request, era) =>
            channelFor(session, era, req.principal, null, undefined),
          ),
        );
        if (delivery.kind === 'refused') sendJson(reply, 400, delivery.response);
        else if (delivery.kind === 'batch' && delivery.responses.length > 0)
          sendJson(reply, 200, delivery.responses, { 'mcp-session-id': session.id });
        else reply.code(202).send();
        return;
      }
      case 'notification':
      case 'response': {
        // A modern notification belongs to no session; everything else names one.
        const sessionless = incoming.kind === 'notification' && incoming.era === 'modern';
        const session = sessionless ? null : sessionFor(req, reply);
        if (!sessionless && !session) return;
        await deliver(dispatcher, incoming, linkFor(req, session, noChannel));
        reply.code(202).send();
        return;
      }
      default:
        break;
    }
    if (incoming.era === 'modern') return respond(req, reply, incoming, null);
    const versionProblem = checkLegacyVersionHeader(req.headers);
    if (versionProblem) {
      sendRpcError(reply, 400, RpcCodes.INVALID_REQUEST, versionProblem, incoming.request.id);
      return;
    }
    if (incoming.request.method === 'initialize') {
      const session = sessions.create(principalKey(req.principal), req.principal);
      return respond(req, reply, incoming, session, (answered) => {
        if (answered) sessions.register(session);
      });
    }
    const session = sessionFor(req, reply, incoming.request.id);
    if (!session) return;
    return respond(req, reply, incoming, session);
  };

  const get = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (isModernVersion(header(req, 'mcp-protocol-version') ?? '')) {
      reply.code(405).header('allow', 'POST').send();
      return;
    }
    if (!accepts(req.headers.accept, 'text/event-stream')) {
      sendRpcError(
        reply,
        406,
        RpcCodes.INVALID_REQUEST,
        'Not Acceptable: the Accept header must include text/event-stream.',
      );
      return;
    }
    const session = sessionFor(req, reply);
    if (!session) return;
    const lastEventId = header(req, 'last-event-id');
    const resumeFrom = lastEventId ? parseEventId(lastEventId) : null;
    if (!resumeFrom && session.getStream.connected) {
      sendRpcError(
        reply,
        409,
        RpcCodes.INVALID_REQUEST,
        'Conflict: this session already has an open GET stream.',
      );
      return;
    }
    reply.hijack();
    const res = reply.raw;
    startSse(res, { 'mcp-session-id': session.id });
    // No JSON-RPC request to answer here: the response simply ends (a resumption needs a valid
    // credential, so the client's reconnect gets 401).
    watchStream(req, res, () => res.end());
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
  };

  const del = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (isModernVersion(header(req, 'mcp-protocol-version') ?? '')) {
      reply.code(405).header('allow', 'POST').send();
      return;
    }
    const session = sessionFor(req, reply);
    if (!session) return;
    sessions.delete(session.id);
    reply.code(200).send();
  };

  for (const path of options.paths) {
    const wrap =
      (handler: (req: FastifyRequest, reply: FastifyReply) => Promise<void>) =>
      async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
        await handler(req, reply).catch((error: unknown) => failed(reply, error));
        return reply;
      };
    app.post(path, wrap(post));
    app.get(path, wrap(get));
    app.delete(path, wrap(del));
  }

  function failed(reply: FastifyReply, error: unknown): void {
    logger.error({ err: error }, 'mcp route failed');
    if (!reply.sent && !reply.raw.headersSent) {
      sendRpcError(reply, 500, RpcCodes.INTERNAL_ERROR, 'Internal error; see the server log.');
    } else if (!reply.raw.writableEnded) {
      reply.raw.end();
    }
  }
}
