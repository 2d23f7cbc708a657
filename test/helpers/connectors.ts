// The clients the e2e scenarios run through: {stdio, Streamable HTTP} × {legacy era (SDK v1
// Client: 2025-11-25, and over HTTP also 2025-06-18 and 2025-03-26), modern era (SDK v2 Client
// pinned to 2026-07-28)}. Each connector gives the scenarios the same small surface, backed by
// the official client as a real MCP client would use it; `wire` taps the transport so a
// scenario can also check what the server actually sent, in order.
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdioTransport } from '@modelcontextprotocol/client/stdio';
import type { Readable } from 'node:stream';
import { REPO_ROOT } from './postgres.js';
import { serveScript, tail } from './server.js';

export type TransportKind = 'stdio' | 'http';
export type Era = 'legacy' | 'modern';

export interface ToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ToolCallResult {
  content: Array<{ type: string; text?: string; [key: string]: unknown }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

export interface CallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  timeoutMs?: number;
}

/** A server→client request the client's handlers answered (sampling, elicitation). */
export interface HandledRequest {
  method: 'sampling/createMessage' | 'elicitation/create';
  params: any;
}

export interface McpConnection {
  readonly name: string;
  readonly transport: TransportKind;
  readonly era: Era;
  /** The version in force: the one initialize negotiated, or 2026-07-28. */
  readonly protocolVersion: string;
  /** Every JSON-RPC message received from the server, in arrival order (transport tap). */
  readonly wire: any[];
  /** What the client's sampling/elicitation handlers were asked, in order. */
  readonly handled: HandledRequest[];
  listTools(cursor?: string): Promise<{ tools: ToolInfo[]; nextCursor?: string }>;
  callTool(
    name: string,
    args?: Record<string, unknown>,
    options?: CallOptions,
  ): Promise<ToolCallResult>;
  /** Legacy era only. */
  ping(): Promise<unknown>;
  /** Legacy era only. */
  setLogLevel(level: string): Promise<unknown>;
  /** Modern era only. */
  discover(): Promise<Record<string, unknown>>;
  /** Register a handler through the SDK client for a notification the server sends. */
  onNotification(
    method: 'notifications/tools/list_changed' | 'notifications/message',
    handler: (params: any) => void,
  ): void;
  /**
   * Start receiving tools/list_changed: unsolicited in the legacy era, a subscriptions/listen
   * stream in the modern era. Resolves with a function that stops it.
   */
  watchToolList(): Promise<() => Promise<void>>;
  /** The server's stderr (stdio connectors only; the HTTP server's is kept by its owner). */
  stderr(): string;
  close(): Promise<void>;
}

export interface Deployment {
  /** The shared HTTP server's MCP endpoint. */
  httpUrl(): string;
  /** Arguments after `pgmcp serve --stdio` for a stdio server of this deployment. */
  stdioArgs: string[];
  /** Stdio servers are the conformance fixture server (same arguments) instead of `pgmcp serve`. */
  fixtures?: boolean;
  env: Record<string, string>;
}

export interface Connector {
  readonly name: string;
  readonly transport: TransportKind;
  readonly era: Era;
  readonly version: string;
  connect(deployment: Deployment): Promise<McpConnection>;
}

export const LATEST_LEGACY = '2025-11-25';
export const MODERN = '2026-07-28';

export const CLIENT_INFO = { name: 'pgmcp-e2e', version: '1.0.0' };

// ---------------------------------------------------------------------------------------------
// What the client's handlers answer: deterministic, so scenarios can check the tool's echo.

export const SAMPLED_PREFIX = 'Sampled reply to: ';

function sampleReply(params: any): {
  model: string;
  role: 'assistant';
  content: { type: 'text'; text: string };
} {
  const last = params?.messages?.at?.(-1)?.content;
  const text = last && typeof last.text === 'string' ? last.text : JSON.stringify(last);
  return {
    model: 'e2e-model',
    role: 'assistant',
    content: { type: 'text', text: `${SAMPLED_PREFIX}${text}` },
  };
}

/** Answers each requested field with a fixed value: username/email/name/color. */
export const ELICITED: Record<string, string> = {
  username: 'ada',
  email: 'ada@example.com',
  name: 'Ada',
  color: 'teal',
};

function elicitReply(params: any): { action: 'accept'; content: Record<string, string> } {
  const properties = Object.keys(params?.requestedSchema?.properties ?? {});
  const content: Record<string, string> = {};
  for (const key of properties) if (key in ELICITED) content[key] = ELICITED[key]!;
  return { action: 'accept', content };
}

// ---------------------------------------------------------------------------------------------

/**
 * Record every message the transport delivers, before the client sees it. Installed before
 * connect (the client assigns onmessage in connect), so the handshake is recorded too.
 */
function tapTransport(transport: object, wire: any[]): void {
  let handler: ((...args: any[]) => void) | undefined;
  const tapped = (message: unknown, ...rest: unknown[]): void => {
    wire.push(message);
    handler?.(message, ...rest);
  };
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (handler ? tapped : undefined),
    set: (value: ((...args: any[]) => void) | undefined) => {
      handler = value;
    },
  });
}

/** Make the SDK v1 client propose `version` in initialize (it always proposes its latest). */
function proposeVersion(
  transport: { send: (message: any, options?: any) => Promise<void> },
  version: string,
): void {
  const send = transport.send.bind(transport);
  transport.send = (message: any, options?: any) =>
    send(
      message?.method === 'initialize'
        ? { ...message, params: { ...message.params, protocolVersion: version } }
        : message,
      options,
    );
}

function collect(stream: Readable | null | undefined): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer | string) => {
    text += chunk.toString();
  });
  return () => text;
}

const LEGACY_NOTIFICATION_SCHEMAS = {
  'notifications/tools/list_changed': ToolListChangedNotificationSchema,
  'notifications/message': LoggingMessageNotificationSchema,
} as const;

function legacyConnector(transportKind: TransportKind, version: string): Connector {
  return {
    name: `${transportKind} · legacy ${version}`,
    transport: transportKind,
    era: 'legacy',
    version,
    async connect(deployment) {
      const wire: any[] = [];
      const handled: HandledRequest[] = [];
      const client = new LegacyClient(CLIENT_INFO, {
        capabilities: { sampling: {}, elicitation: {} },
      });
      client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
        handled.push({ method: 'sampling/createMessage', params: request.params });
        return sampleReply(request.params);
      });
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        handled.push({ method: 'elicitation/create', params: request.params });
        return elicitReply(request.params);
      });
      let stderr = (): string => '';
      let transport: LegacyStdioTransport | LegacyHttpTransport;
      if (transportKind === 'stdio') {
        const stdio = new LegacyStdioTransport({
          command: process.execPath,
          args: serveScript(['--stdio', ...deployment.stdioArgs], deployment.fixtures),
          env: deployment.env,
          cwd: REPO_ROOT,
          stderr: 'pipe',
        });
        stderr = collect(stdio.stderr as Readable | null);
        transport = stdio;
      } else {
        transport = new LegacyHttpTransport(new URL(deployment.httpUrl()));
      }
      if (version !== LATEST_LEGACY) proposeVersion(transport, version);
      tapTransport(transport, wire);
      try {
        await client.connect(transport);
      } catch (error) {
        throw new Error(`connect failed: ${(error as Error).message}\n${tail(stderr())}`);
      }
      const negotiated = wire.find((m) => typeof m?.result?.protocolVersion === 'string')?.result
        .protocolVersion as string;
      return {
        name: `${transportKind} · legacy ${version}`,
        transport: transportKind,
        era: 'legacy',
        protocolVersion: negotiated,
        wire,
        handled,
        listTools: (cursor) =>
          client.listTools(cursor === undefined ? undefined : { cursor }) as any,
        callTool: (name, args = {}, options = {}) =>
          client.callTool({ name, arguments: args }, undefined, {
            signal: options.signal,
            onprogress: options.onprogress,
            timeout: options.timeoutMs,
          }) as any,
        ping: () => client.ping(),
        setLogLevel: (level) => client.setLoggingLevel(level as any),
        discover: () => Promise.reject(new Error('server/discover is a modern-era method')),
        onNotification(method, handler) {
          client.setNotificationHandler(
            LEGACY_NOTIFICATION_SCHEMAS[method] as typeof ToolListChangedNotificationSchema,
            (n: any) => handler(n.params),
          );
        },
        // Legacy servers send list_changed unsolicited (stdout, or the session's GET stream).
        watchToolList: async () => async () => undefined,
        stderr,
        close: () => client.close(),
      };
    },
  };
}

function modernConnector(transportKind: TransportKind): Connector {
  return {
    name: `${transportKind} · modern ${MODERN}`,
    transport: transportKind,
    era: 'modern',
    version: MODERN,
    async connect(deployment) {
      const wire: any[] = [];
      const handled: HandledRequest[] = [];
      const client = new ModernClient(CLIENT_INFO, {
        versionNegotiation: { mode: { pin: MODERN } },
        capabilities: { sampling: {}, elicitation: {} },
      });
      // In this era the server asks through input-required results; the client fulfils them
      // through the same handlers and retries the call (SEP-2322).
      client.setRequestHandler('sampling/createMessage', async (request: any) => {
        handled.push({ method: 'sampling/createMessage', params: request.params });
        return sampleReply(request.params);
      });
      client.setRequestHandler('elicitation/create', async (request: any) => {
        handled.push({ method: 'elicitation/create', params: request.params });
        return elicitReply(request.params);
      });
      let stderr = (): string => '';
      let transport: ModernStdioTransport | ModernHttpTransport;
      if (transportKind === 'stdio') {
        const stdio = new ModernStdioTransport({
          command: process.execPath,
          args: serveScript(['--stdio', ...deployment.stdioArgs], deployment.fixtures),
          env: deployment.env,
          cwd: REPO_ROOT,
          stderr: 'pipe',
        });
        stderr = collect(stdio.stderr as Readable | null);
        transport = stdio;
      } else {
        transport = new ModernHttpTransport(new URL(deployment.httpUrl()));
      }
      tapTransport(transport, wire);
      try {
        await client.connect(transport);
      } catch (error) {
        throw new Error(`connect failed: ${(error as Error).message}\n${tail(stderr())}`);
      }
      return {
        name: `${transportKind} · modern ${MODERN}`,
        transport: transportKind,
        era: 'modern',
        protocolVersion: client.getNegotiatedProtocolVersion() ?? MODERN,
        wire,
        handled,
        // 'refresh': always ask the server (the result is still cached for callTool's checks).
        listTools: (cursor) =>
          client.listTools(cursor === undefined ? undefined : { cursor }, {
            cacheMode: 'refresh',
          }) as any,
        callTool: (name, args = {}, options = {}) =>
          client.callTool(
            { name, arguments: args },
            { signal: options.signal, onprogress: options.onprogress, timeout: options.timeoutMs },
          ) as any,
        ping: () => client.ping(),
        setLogLevel: (level) => client.setLoggingLevel(level as any),
        discover: () => client.discover() as any,
        onNotification(method, handler) {
          client.setNotificationHandler(method, (n: any) => handler(n.params));
        },
        async watchToolList() {
          const subscription = await client.listen({ toolsListChanged: true });
          return () => subscription.close();
        },
        stderr,
        close: () => client.close(),
      };
    },
  };
}

/** The connector matrix every scenario runs over. */
export const CONNECTORS: readonly Connector[] = [
  legacyConnector('stdio', LATEST_LEGACY),
  modernConnector('stdio'),
  legacyConnector('http', LATEST_LEGACY),
  legacyConnector('http', '2025-06-18'),
  legacyConnector('http', '2025-03-26'),
  modernConnector('http'),
];
