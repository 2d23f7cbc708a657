// POST/GET/DELETE on the MCP endpoint (Streamable HTTP), both eras.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ANONYMOUS } from '../core/principal.js';
import type { Dispatcher, Outcome } from '../mcp/dispatcher.js';
import type { Exchange } from '../mcp/exchange.js';
import { checkLegacyVersionHeader, checkModernHeaders, headerValue } from '../mcp/headers.js';
import {
  classify,
  errorResponse,
  recoverId,
  RpcCodes,
  RpcError,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from '../mcp/jsonrpc.js';
import { batchRefusal, isModernVersion } from '../mcp/versions.js';
import type { Registry } from '../tools/registry.js';
import { accepts, sendJson, sendRpcError } from './replies.js';
import type { HttpSession, SessionStore } from './sessions.js';
import { GET_STREAM_ID } from './sessions.js';
import { parseEventId, SseStream, startSse } from './sse.js';

export interface McpRouteOptions {
  paths: string[];
  registry: Registry;
  dispatcher: Dispatcher;
  sessions: SessionStore;
  logger: Logger;
  keepAliveMs: number;
}

const RETRY_MS = 1000;

const header = (req: FastifyRequest, name: string): string | undefined =>
  headerValue(req.headers[name]);

export function registerMcpRoutes(app: FastifyInstance, options: McpRouteOptions): void {
  const { dispatcher, sessions, logger, registry } = options;

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
        recoverId({ id }),
      );
      return null;
    }
    const session = sessions.get(sessionId);
    if (!session) {
      sendRpcError(
        reply,
        404,
        RpcCodes.AUTH_REQUIRED,
        'Session not found: it ended or expired; initialize again.',
        recoverId({ id }),
      );
      return null;
    }
    return session;
  };

  /**
   * Run one request and answer it: as JSON when it produced nothing but its result, or
   * as an SSE stream as soon as it sends a notification or a request to the client.
   */
  const respond = async (
    req: FastifyRequest,
    reply: FastifyReply,
    request: JsonRpcRequest,
    session: HttpSession | null,
    modern: boolean,
    onAnswered?: (outcome: Outcome) => void,
  ): Promise<void> => {
    const res = reply.raw;
    let stream: SseStream | null = null;
    // Only the modern era cancels on a closed stream, so only it needs a controller.
    const transportAbort = modern ? new AbortController() : null;
    // Modern era: closing the response stream cancels the request. Legacy: it does not.
    if (modern) {
      res.on('close', () => {
        if (!res.writableFinished) transportAbort?.abort(new Error('client closed the stream'));
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
      if (session && !modern) {
        session.streams.set(stream.id, stream);
        if ((session.protocolVersion ?? '') >= '2025-11-25') stream.prime(RETRY_MS);
      }
      return stream;
    };
    const exchange: Exchange = {
      session,
      era: modern ? 'modern' : 'legacy',
      principal: ANONYMOUS,
      inFlight: session?.inFlight ?? null,
      signal: transportAbort?.signal,
      notify: (method, params) => ensureStream().send({ jsonrpc: '2.0', method, params }),
      disconnect: (retryMs = RETRY_MS) => {
        // Only a resumable stream (legacy, with a session's event store) may drop its connection.
        if (modern || !session) return false;
        const s = ensureStream();
        s.retry(retryMs);
        s.end(false);
        return true;
      },
      request: (method, params, signal) => {
        if (!session) {
          return Promise.reject(
            new RpcError(RpcCodes.INTERNAL_ERROR, 'Server→client requests need a legacy session.'),
          );
        }
        return session.outbound.request(
          (message) => ensureStream().send(message),
          method,
          params,
          signal,
        );
      },
    };
    const outcome = await dispatcher.handleRequest(request, exchange);
    onAnswered?.(outcome);
    if (stream !== null) {
      const s: SseStream = stream;
      s.send(outcome.response);
      s.end(true);
      session?.streams.delete(s.id);
      return;
    }
    // A failed initialize creates no session, so it names none.
    const named = onAnswered === undefined || 'result' in outcome.response;
    sendJson(reply, outcome.status, outcome.response, named ? sessionHeaders : {});
  };

  const post = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (
      !accepts(req.headers.accept, 'application/json') ||
      !accepts(req.headers.accept, 'text/event-stream')
    ) {
      sendRpcError(
        reply,
        406,
        RpcCodes.INVALID_REQUEST,
        'Not Acceptable: the Accept header must include application/json and text/event-stream.',
      );
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(req.body as string);
    } catch {
      sendRpcError(reply, 400, RpcCodes.PARSE_ERROR, 'Parse error: the body is not valid JSON.');
      return;
    }
    if (Array.isArray(message)) return batch(req, reply, message);
    const kind = classify(message);
    if (kind === 'invalid') {
      sendRpcError(
        reply,
        400,
        RpcCodes.INVALID_REQUEST,
        'Invalid JSON-RPC message: expected one request, notification or response.',
        recoverId(message),
      );
      return;
    }
    if (kind === 'response' || kind === 'notification') {
      const isModernNotification =
        kind === 'notification' && isModernVersion(header(req, 'mcp-protocol-version') ?? '');
      const session = isModernNotification ? null : sessionFor(req, reply);
      if (!isModernNotification && !session) return;
      if (kind === 'response') session!.outbound.settle(message as Record<string, unknown>);
      else {
        dispatcher.handleNotification(message as JsonRpcNotification, {
          session,
          principal: ANONYMOUS,
          inFlight: session?.inFlight ?? null,
          notify: () => undefined,
          request: () => Promise.reject(new Error('not available for notifications')),
        });
      }
      reply.code(202).send();
      return;
    }
    const request = message as JsonRpcRequest;
    const headerEra = isModernVersion(header(req, 'mcp-protocol-version') ?? '')
      ? 'modern'
      : undefined;
    if (dispatcher.eraOf(request, { era: headerEra }) === 'modern') {
      try {
        checkModernHeaders(request, req.headers, (name) => registry.tool(name)?.spec.inputSchema);
      } catch (error) {
        const e = error as RpcError;
        sendRpcError(reply, e.httpStatus, e.code, e.message, request.id, e.data);
        return;
      }
      return respond(req, reply, request, null, true);
    }
    const versionProblem = checkLegacyVersionHeader(req.headers);
    if (versionProblem) {
      sendRpcError(reply, 400, RpcCodes.INVALID_REQUEST, versionProblem, request.id);
      return;
    }
    if (request.method === 'initialize') {
      const session = sessions.create();
      return respond(req, reply, request, session, false, (outcome) => {
        if ('result' in outcome.response) sessions.register(session);
      });
    }
    const session = sessionFor(req, reply, request.id);
    if (!session) return;
    return respond(req, reply, request, session, false);
  };

  const batch = async (
    req: FastifyRequest,
    reply: FastifyReply,
    messages: unknown[],
  ): Promise<void> => {
    const session = sessionFor(req, reply);
    if (!session) return;
    const refusal = batchRefusal(session.protocolVersion, messages.length);
    if (refusal) {
      sendRpcError(reply, 400, RpcCodes.INVALID_REQUEST, refusal);
      return;
    }
    const exchange: Exchange = {
      session,
      principal: ANONYMOUS,
      inFlight: session.inFlight,
      notify: () => undefined,
      request: () =>
        Promise.reject(
          new RpcError(
            RpcCodes.INTERNAL_ERROR,
            'Server→client requests are not available inside a batch.',
          ),
        ),
    };
    const answers = await Promise.all(
      messages.map(async (m): Promise<JsonRpcResponse | null> => {
        const kind = classify(m);
        if (kind === 'request')
          return (await dispatcher.handleRequest(m as JsonRpcRequest, exchange)).response;
        if (kind === 'notification')
          dispatcher.handleNotification(m as JsonRpcNotification, exchange);
        else if (kind === 'response') session.outbound.settle(m as Record<string, unknown>);
        else
          return errorResponse(recoverId(m), {
            code: RpcCodes.INVALID_REQUEST,
            message: 'Invalid JSON-RPC message in batch.',
          });
        return null;
      }),
    );
    const responses = answers.filter((a): a is JsonRpcResponse => a !== null);
    if (responses.length === 0) reply.code(202).send();
    else sendJson(reply, 200, responses, { 'mcp-session-id': session.id });
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
