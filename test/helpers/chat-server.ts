// An in-process pgmcp HTTP server composed the way `pgmcp serve --http` composes it (createApp,
// openAuth, the audit of tool calls, createHttpServer with the /api routes and the LLM side),
// listening on port 0, for the chat suites; and a client that talks to /api/chat the way useChat
// does (the AI SDK's DefaultChatTransport and readUIMessageStream).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import pino from 'pino';
import YAML from 'yaml';
import { openAuth, type Authenticator } from '../../src/auth/index.js';
import { createApp, type App } from '../../src/cli/app.js';
import { auditToolCalls } from '../../src/cli/audit-tool-calls.js';
import { llmDeps } from '../../src/cli/llm.js';
import { loadConfig } from '../../src/config/index.js';
import { NO_EDGE } from '../../src/http/edge.js';
import { createHttpServer, type HttpServer } from '../../src/http/server.js';

export interface ChatServerOptions {
  /** Config file content (YAML as an object): databases, llm, auth … */
  config: Record<string, unknown>;
  /** A postgres:// URL for `--database`; absent: what the config says (or the embedded one). */
  database?: string;
  /** The environment the LLM side reads (OPENAI_API_KEY, OPENAI_BASE_URL …). */
  env?: Record<string, string>;
  /** Require a bearer token (auth on). */
  requireAuth?: boolean;
}

export interface ChatServer {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  readonly app: App;
  readonly auth: Authenticator;
  readonly http: HttpServer;
  /** A new API token, optionally with roles. */
  token(name: string, roles?: string[]): Promise<string>;
  /** Everything the server logged, as text (for checks that no secret was logged). */
  logText(): string;
  close(): Promise<void>;
}

export async function startChatServer(options: ChatServerOptions): Promise<ChatServer> {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-chat-'));
  const configFile = join(dir, 'pgmcp.yaml');
  const embeddedDir = join(dir, 'embedded');
  mkdirSync(embeddedDir);
  const file = {
    ...options.config,
    embedded: { dataDir: embeddedDir, ...(options.config['embedded'] as object | undefined) },
  };
  writeFileSync(configFile, YAML.stringify(file));
  const config = loadConfig({
    flags: {
      config: configFile,
      http: '127.0.0.1:0',
      ...(options.database ? { database: options.database } : {}),
    },
    env: {},
    cwd: dir,
  });
  let logged = '';
  const logger = pino({ level: 'debug' }, { write: (line: string) => void (logged += line) });
  const app = await createApp(config, logger);
  const auth = await openAuth(config, {
    logger,
    ...(config.state.url === null && app.embeddedDb ? { via: app.embeddedDb } : {}),
  });
  auditToolCalls(app, auth.audit);
  const http = createHttpServer({
    options: { ...config.http },
    dispatcher: app.dispatcher,
    logger,
    auth: {
      required: options.requireAuth ?? false,
      verifier: auth,
      trustedProxies: [],
      proxyHeaders: config.auth.proxyHeaders,
    },
    api: {
      auth,
      databases: app.directory,
      version: 'test',
      llm: llmDeps(config, app, logger, options.env ?? {}, auth),
    },
    health: () => app.health(),
    // The configured rate limits (rateLimit:), as serve applies them.
    edge: { ...NO_EDGE, rateLimit: config.rateLimit },
  });
  const { port } = await http.listen();
  return {
    origin: `http://127.0.0.1:${port}`,
    app,
    auth,
    http,
    async token(name, roles = []) {
      const created = await auth.tokens.create({ name, expiresInSeconds: 3600, roles });
      return created.token;
    },
    logText: () => logged,
    async close() {
      app.shutdown.abort();
      await http.close();
      await auth.close();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let ids = 0;
export const userMessage = (text: string): UIMessage => ({
  id: `u${++ids}`,
  role: 'user',
  parts: [{ type: 'text', text }],
});

export interface ChatTurn {
  chunks: UIMessageChunk[];
  /** The assistant message as useChat would hold it when the stream ended. */
  message: UIMessage;
}

/** One POST /api/chat the way useChat sends it; resolves when the stream ends. */
export async function sendChat(
  origin: string,
  messages: UIMessage[],
  options: {
    id?: string;
    token?: string;
    body?: Record<string, unknown>;
    signal?: AbortSignal;
    /** The AI SDK's trigger (default submit-message) and, for a regeneration, messageId. */
    trigger?: 'submit-message' | 'regenerate-message';
    messageId?: string;
    /** Called with each chunk as it arrives. */
    onChunk?: (chunk: UIMessageChunk) => void;
    /** More request headers (a traceparent). */
    headers?: Record<string, string>;
  } = {},
): Promise<ChatTurn> {
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${origin}/api/chat`,
    headers: {
      ...options.headers,
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    ...(options.body ? { body: options.body } : {}),
  });
  const last = messages.at(-1);
  const stream = await transport.sendMessages({
    trigger: options.trigger ?? 'submit-message',
    chatId: options.id ?? `chat-${++ids}`,
    messageId: options.messageId,
    messages,
    abortSignal: options.signal,
  });
  const chunks: UIMessageChunk[] = [];
  const recorded = stream.pipeThrough(
    new TransformStream<UIMessageChunk, UIMessageChunk>({
      transform(chunk, controller) {
        chunks.push(chunk);
        options.onChunk?.(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
  // A continuation (after an approval) extends the last assistant message, as useChat does.
  let message: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream<UIMessage>({
    stream: recorded,
    ...(last?.role === 'assistant' ? { message: last } : {}),
    terminateOnError: false,
  })) {
    message = snapshot;
  }
  return { chunks, message: message ?? { id: 'none', role: 'assistant', parts: [] } };
}

/** The tool parts of a message, as the contract describes them. */
export function toolParts(message: UIMessage): {
  type: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: { isError: boolean; text: string; structuredContent?: Record<string, unknown> };
  approval?: { id: string; approved?: boolean };
  errorText?: string;
}[] {
  return message.parts.filter((p) => p.type.startsWith('tool-')) as never;
}

export const textOf = (message: UIMessage): string =>
  message.parts
    .filter((p) => p.type === 'text')
    .map((p) => (p as { text: string }).text)
    .join('');
