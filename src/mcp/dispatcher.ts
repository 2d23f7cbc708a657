// The protocol core: one method table built at start; each request is classified into
// the legacy era (initialize + session) or the modern era (_meta envelope, stateless),
// checked, dispatched, and its outcome mapped to a JSON-RPC result or error in one place.
import type { Logger } from 'pino';
import type { ErrorCategory } from '../core/errors.js';
import type { ExchangeRecord } from '../tools/handlers/exchange-log.js';
import type { Registry } from '../tools/registry.js';
import { recordableArguments } from '../tools/tool-call-record.js';
import type { RequestChannel } from './channel.js';
import { rpcErrorOf } from './errors.js';
import { checkModernHeaders, type HeaderValue } from './headers.js';
import {
  errorResponse,
  isObject,
  resultResponse,
  RpcCodes,
  RpcError,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
} from './jsonrpc.js';
import { createFeatures, type FeatureOptions, type RequestScope } from './methods/index.js';
import type { InFlight, Session } from './session.js';
import {
  ALL_VERSIONS,
  isModernVersion,
  META_CLIENT_CAPABILITIES,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
} from './versions.js';
import { LOG_LEVELS, type LogLevel } from '../core/specs.js';
import { bindSessionNotifications, listen, parseListenFilter } from './subscriptions.js';
import { traceRequest, type TraceNames } from './trace.js';

export type Era = 'legacy' | 'modern';

export interface DispatcherOptions extends FeatureOptions {
  registry: Registry;
  logger: Logger;
  /** Aborted at shutdown: ends long-lived subscriptions/listen requests gracefully. */
  shutdown?: AbortSignal;
  /** Called after every request is answered (never for notifications). Must not throw. */
  onExchange?(record: ExchangeRecord): void;
  /**
   * Start-up still under way: requests other than the lifecycle ones (initialize, ping,
   * server/discover, logging/setLevel) wait for this; a rejection answers them with its error.
   */
  ready?: Promise<unknown>;
}

/** A request's answer, with what a transport needs to carry it (HTTP derives its status). */
export interface Outcome {
  response: JsonRpcResponse;
  era: Era;
  /** For an error response: what kind of failure it was, when known. */
  category?: ErrorCategory | undefined;
}

export interface Dispatcher {
  /** Answer one request of the given era (decided by the transport seam, mcp/inbound.ts). */
  handleRequest(request: JsonRpcRequest, era: Era, channel: RequestChannel): Promise<Outcome>;
  /** Act on a notification; only cancellation needs the requests in flight. */
  handleNotification(notification: JsonRpcNotification, inFlight: InFlight | null): void;
  /**
   * Deliver list_changed and resources/updated to these legacy sessions (HTTP's, stdio's one)
   * as the catalog changes. Returns the unsubscribe.
   */
  bindSessions(sessions: () => Iterable<Session>): () => void;
  /** Modern era over HTTP: the headers must agree with the body. An error outcome when not. */
  checkHeaders(request: JsonRpcRequest, headers: Record<string, HeaderValue>): Outcome | null;
  /** Capabilities as advertised by initialize and server/discover. */
  readonly capabilities: Record<string, unknown>;
  readonly serverInfo: { name: string; version: string };
}

type Handler = (
  params: Record<string, unknown>,
  scope: RequestScope,
) => Promise<Record<string, unknown>>;

interface MethodDef {
  eras: readonly Era[];
  handler: Handler;
  /** may be called before notifications/initialized (legacy) */
  early?: boolean;
  /** answered while start-up is still under way (needs no database, tool or catalog) */
  beforeReady?: boolean;
}

/** Methods that exist only with sessions; called in modern form they are unknown (404). */
const LEGACY_ONLY: readonly Era[] = ['legacy'];
const BOTH: readonly Era[] = ['legacy', 'modern'];
const MODERN_ONLY: readonly Era[] = ['modern'];

/**
 * What the exchange log records of one answered request. A tools/call the invocation step
 * recorded itself (tools/invoke.ts, with the audit) is not recorded again: this is for the
 * other methods and for a tools/call refused before it reached that step.
 */
function exchangeRecord(
  request: JsonRpcRequest,
  channel: RequestChannel,
  outcome: Outcome,
  note: NonNullable<RequestScope['note']>,
  started: number,
  registry: Registry,
): ExchangeRecord {
  const params = request.params ?? {};
  const named =
    request.method === 'resources/read'
      ? params['uri']
      : request.method === 'tools/call' || request.method === 'prompts/get'
        ? params['name']
        : undefined;
  const response = outcome.response;
  const failed = 'error' in response || response.result['isError'] === true;
  const record: ExchangeRecord = {
    principal: channel.principal,
    method: request.method,
    name: typeof named === 'string' ? named : null,
    durationMs: performance.now() - started,
    outcome: failed ? 'error' : 'ok',
    errorCode: 'error' in response ? response.error.code : null,
  };
  if (note.database !== undefined) record.database = note.database;
  // A tool's arguments only when they carry no secret (authenticate_user's password).
  const args =
    request.method === 'tools/call'
      ? recordableArguments(registry, typeof named === 'string' ? named : '', params['arguments'])
      : params['arguments'];
  if (args !== undefined) record.args = args;
  return record;
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { logger } = options;
  const features = createFeatures(
    options.onExchange ? { ...options, onToolCall: options.onExchange } : options,
  );
  const serverInfoMeta = { [META_SERVER_INFO]: features.serverInfo };

  // Until start-up completes, the other methods wait for it; after, nothing is awaited.
  let starting: Promise<unknown> | null = options.ready ?? null;
  starting?.then(
    () => (starting = null),
    () => undefined,
  );

  const table: Record<string, MethodDef> = {
    initialize: {
      eras: LEGACY_ONLY,
      handler: features.initialize,
      early: true,
      beforeReady: true,
    },
    ping: { eras: LEGACY_ONLY, handler: async () => ({}), early: true, beforeReady: true },
    'logging/setLevel': { eras: LEGACY_ONLY, handler: features.setLevel, beforeReady: true },
    'resources/subscribe': { eras: LEGACY_ONLY, handler: features.subscribe },
    'resources/unsubscribe': { eras: LEGACY_ONLY, handler: features.unsubscribe },
    'server/discover': { eras: MODERN_ONLY, handler: features.discover, beforeReady: true },
    'tools/list': { eras: BOTH, handler: features.listTools },
    'tools/call': { eras: BOTH, handler: features.callTool },
    'resources/list': { eras: BOTH, handler: features.listResources },
    'resources/templates/list': { eras: BOTH, handler: features.listTemplates },
    'resources/read': { eras: BOTH, handler: features.readResource },
    'prompts/list': { eras: BOTH, handler: features.listPrompts },
    'prompts/get': { eras: BOTH, handler: features.getPrompt },
    'completion/complete': { eras: BOTH, handler: features.complete },
    ...(features.tasks
      ? {
          'tasks/get': { eras: BOTH, handler: features.tasks.get },
          'tasks/cancel': { eras: BOTH, handler: features.tasks.cancel },
          'tasks/result': { eras: LEGACY_ONLY, handler: features.tasks.result },
          'tasks/list': { eras: LEGACY_ONLY, handler: features.tasks.list },
          'tasks/update': { eras: MODERN_ONLY, handler: features.tasks.update },
        }
      : {}),
    'subscriptions/listen': {
      eras: MODERN_ONLY,
      handler: async (params, scope) => {
        const filter = parseListenFilter(params);
        // notifications/cancelled for this request ends it too (stdio has no stream to close).
        const cancel = new AbortController();
        scope.channel.inFlight?.set(scope.id, cancel);
        const signals = [scope.channel.signal, options.shutdown, cancel.signal].filter(
          (s): s is AbortSignal => !!s,
        );
        try {
          await listen(
            options.registry,
            filter,
            scope.id,
            scope.channel.notify,
            AbortSignal.any(signals),
            scope.channel.principal,
          );
        } finally {
          scope.channel.inFlight?.delete(scope.id);
        }
        // The transport ended it for a reason the client should hear (its credential lapsed):
        // the final answer is that error rather than the empty result of a graceful end.
        const reason: unknown = scope.channel.signal?.aborted ? scope.channel.signal.reason : null;
        if (reason instanceof RpcError) throw reason;
        return {};
      },
    },
  };

  /** Checks the modern envelope; returns the request's client capabilities and log level. */
  const checkModernEnvelope = (
    params: Record<string, unknown>,
  ): { capabilities: Record<string, unknown>; logLevel: LogLevel | null; version: string } => {
    const meta = params['_meta'];
    if (!isObject(meta)) {
      throw new RpcError(
        RpcCodes.INVALID_PARAMS,
        `params._meta is required in protocol 2026-07-28 (with "${META_PROTOCOL_VERSION}" and "${META_CLIENT_CAPABILITIES}").`,
      );
    }
    const version = meta[META_PROTOCOL_VERSION];
    if (typeof version !== 'string') {
      throw new RpcError(
        RpcCodes.INVALID_PARAMS,
        `_meta["${META_PROTOCOL_VERSION}"] must be a string.`,
      );
    }
    if (!isModernVersion(version)) {
      throw new RpcError(
        RpcCodes.UNSUPPORTED_VERSION,
        `Protocol version ${version} is not supported; supported versions: ${ALL_VERSIONS.join(', ')}.`,
        { requested: version, supported: ALL_VERSIONS },
      );
    }
    const capabilities = meta[META_CLIENT_CAPABILITIES];
    if (!isObject(capabilities)) {
      throw new RpcError(
        RpcCodes.INVALID_PARAMS,
        `_meta["${META_CLIENT_CAPABILITIES}"] is required (use {} for none).`,
      );
    }
    const level = meta[META_LOG_LEVEL];
    if (level !== undefined && !LOG_LEVELS.includes(level as LogLevel)) {
      throw new RpcError(RpcCodes.INVALID_PARAMS, `Unknown log level ${JSON.stringify(level)}.`);
    }
    return { capabilities, logLevel: (level as LogLevel | undefined) ?? null, version };
  };

  const run = async (
    request: JsonRpcRequest,
    era: Era,
    channel: RequestChannel,
    note: RequestScope['note'],
  ): Promise<Outcome> => {
    const params = request.params ?? {};
    // Own names only: a method called `constructor` or `__proto__` is not a member of the table.
    const def = Object.hasOwn(table, request.method) ? table[request.method] : undefined;
    if (!def || !def.eras.includes(era)) {
      throw new RpcError(RpcCodes.METHOD_NOT_FOUND, `Method not found: ${request.method}`);
    }
    let scope: RequestScope;
    if (era === 'modern') {
      const envelope = checkModernEnvelope(params);
      scope = {
        era,
        id: request.id,
        channel,
        clientCapabilities: envelope.capabilities,
        logLevel: envelope.logLevel,
        protocolVersion: envelope.version,
        note,
      };
    } else {
      const session = channel.session;
      if (!session) {
        throw new RpcError(RpcCodes.INVALID_REQUEST, 'No session: send initialize first.');
      }
      if (session.protocolVersion === null && request.method !== 'initialize' && !def.early) {
        throw new RpcError(
          RpcCodes.INVALID_REQUEST,
          'The session is not initialized: send initialize first.',
        );
      }
      scope = {
        era,
        id: request.id,
        channel,
        clientCapabilities: session.clientCapabilities,
        logLevel: session.logLevel ?? 'info',
        protocolVersion: session.protocolVersion ?? '',
        note,
      };
    }
    if (starting !== null && !def.beforeReady) await starting;
    const result = await def.handler(params, scope);
    if (era === 'modern') {
      result['resultType'] ??= 'complete';
      result['_meta'] = {
        ...(isObject(result['_meta']) ? result['_meta'] : {}),
        ...serverInfoMeta,
      };
    }
    return { response: resultResponse(request.id, result), era };
  };

  const traceNames: TraceNames = {
    method: (name) => Object.hasOwn(table, name),
    target: (method, name) =>
      method === 'tools/call'
        ? options.registry.tool(name) !== undefined
        : method === 'prompts/get' && options.registry.prompt(name) !== undefined,
  };

  /** Runs a request; whatever it threw becomes the JSON-RPC error (mcp/errors.ts). */
  const answer = async (
    request: JsonRpcRequest,
    era: Era,
    channel: RequestChannel,
    note: RequestScope['note'],
  ): Promise<Outcome> => {
    try {
      return await run(request, era, channel, note);
    } catch (error) {
      const { body, category } = rpcErrorOf(error, logger, { method: request.method });
      return { response: errorResponse(request.id, body), era, category };
    }
  };

  return {
    capabilities: features.capabilities,
    serverInfo: features.serverInfo,
    async handleRequest(request, era, channel) {
      if (!options.onExchange)
        return traceRequest(request, era, channel, traceNames, () =>
          answer(request, era, channel, undefined),
        );
      const started = performance.now();
      const note: NonNullable<RequestScope['note']> = {};
      const outcome = await traceRequest(request, era, channel, traceNames, () =>
        answer(request, era, channel, note),
      );
      if (note.recorded) return outcome;
      try {
        const record = exchangeRecord(request, channel, outcome, note, started, options.registry);
        options.onExchange({ ...record, era });
      } catch (error) {
        logger.warn({ err: error }, 'exchange hook failed');
      }
      return outcome;
    },
    handleNotification(notification, inFlight) {
      // notifications/initialized, roots/list_changed and unknown notifications need no action.
      if (notification.method !== 'notifications/cancelled' || !inFlight) return;
      const params = notification.params ?? {};
      const id = params['requestId'];
      if (typeof id === 'string' || typeof id === 'number') {
        inFlight.get(id)?.abort(new Error(String(params['reason'] ?? 'cancelled by the client')));
      }
    },
    bindSessions: (sessions) => bindSessionNotifications(options.registry, sessions),
    checkHeaders(request, headers) {
      try {
        checkModernHeaders(
          request,
          headers,
          (name) => options.registry.tool(name)?.spec.inputSchema,
        );
        return null;
      } catch (error) {
        const { body, category } = rpcErrorOf(error, undefined, {});
        return { response: errorResponse(request.id, body), era: 'modern', category };
      }
    },
  };
}
