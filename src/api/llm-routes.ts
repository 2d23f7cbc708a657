// GET /api/llm/providers, GET /api/llm/models and POST /api/llm/chat (the pgEdge-compatible LLM proxy),
// and POST /api/chat, the agent loop (llm/chat-loop.ts) streamed as the AI SDK UI message
// stream. Keys never leave the server: views name providers, types and models only.
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { createUIMessageStreamResponse } from 'ai';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCodes } from '../core/errors.js';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import {
  createProxy,
  listModels,
  startChat,
  type ChatBody,
  type ChatDeps,
  type ProxyRequest,
} from '../llm/index.js';

/** What the LLM routes need from the composition root. */
export type ApiLlmDeps = Omit<ChatDeps, 'logger'>;

const PROVIDER_VIEW = {
  type: 'object',
  required: ['name', 'type', 'defaultModel', 'isDefault'],
  properties: {
    name: { type: 'string' },
    type: { type: 'string', enum: ['openai', 'openaiCompatible', 'anthropic', 'google', 'ollama'] },
    defaultModel: { type: 'string' },
    isDefault: { type: 'boolean' },
  },
} as const;

const USAGE = {
  type: 'object',
  properties: {
    inputTokens: { type: 'integer' },
    outputTokens: { type: 'integer' },
    totalTokens: { type: 'integer' },
  },
} as const;

const NAME = { type: 'string', minLength: 1, maxLength: 200 } as const;

const PROXY_BODY = {
  type: 'object',
  required: ['messages'],
  additionalProperties: false,
  properties: {
    provider: { ...NAME, description: 'A configured provider; default: the default one.' },
    model: { ...NAME, description: "A model of that provider; default: the provider's." },
    messages: {
      type: 'array',
      minItems: 1,
      maxItems: 2000,
      description: 'AI SDK model messages ({role, content}).',
      items: { type: 'object' },
    },
    tools: {
      type: 'array',
      maxItems: 256,
      description: 'Tool definitions; the model may call them, the proxy never runs them.',
      items: {
        type: 'object',
        required: ['name'],
        properties: {
          name: { type: 'string' },
          description: { type: 'string' },
          inputSchema: { type: 'object' },
          parameters: { type: 'object', description: 'Same as inputSchema.' },
        },
      },
    },
    system: { type: 'string', description: 'The system prompt.' },
    stream: {
      type: 'boolean',
      description: 'Answer with the AI SDK UI message stream (SSE) instead of one JSON body.',
    },
  },
} as const;

const PROXY_ANSWER = {
  type: 'object',
  required: ['message', 'toolCalls', 'usage', 'finishReason'],
  properties: {
    message: {
      type: 'object',
      description: "The model's message (AI SDK assistant model message).",
      additionalProperties: true,
    },
    toolCalls: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          toolCallId: { type: 'string' },
          toolName: { type: 'string' },
          input: {},
        },
      },
    },
    usage: USAGE,
    finishReason: { type: 'string' },
  },
} as const;

const CHAT_BODY = {
  type: 'object',
  required: ['messages'],
  description:
    'The AI SDK useChat body: id (the conversation id), messages (UI messages), trigger, messageId; plus provider, model and database.',
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 128, description: 'The conversation id.' },
    messages: { type: 'array', minItems: 1, maxItems: 2000, items: { type: 'object' } },
    trigger: {
      type: 'string',
      description:
        'submit-message, or regenerate-message: the stored history is cut back to before the answer regenerated.',
    },
    messageId: {
      type: 'string',
      description: 'With regenerate-message: the message answered again.',
    },
    provider: NAME,
    model: NAME,
    database: { type: 'string', minLength: 1, maxLength: 64 },
  },
} as const;

/** The 409 of POST /api/chat: the messages sent disagree with the stored conversation. */
const HISTORY_CONFLICT = {
  description:
    'The messages sent disagree with the stored conversation (code PGMCP814): an earlier message differs, is missing or was added, an assistant message follows the stored ones, or an answered message was sent again. Nothing ran; the stored conversation is unchanged.',
  type: 'object',
  required: ['error', 'code'],
  properties: {
    error: { type: 'string' },
    code: { type: 'string', enum: [ErrorCodes.CONVERSATION_HISTORY_CONFLICT] },
  },
} as const;

const STREAM_DESCRIPTION =
  'The AI SDK UI message stream: server-sent events, header x-vercel-ai-ui-message-stream: v1.';

const principalOf = (request: FastifyRequest): Principal => request.principal ?? ANONYMOUS;

/** Aborted when the client goes away before the answer is complete. */
function disconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('the client went away'));
  });
  return controller.signal;
}

/** Sends a web Response (an AI SDK stream) through Fastify, so its hooks' headers apply. */
function sendResponse(reply: FastifyReply, response: Response): FastifyReply {
  reply.code(response.status);
  response.headers.forEach((value, key) => {
    if (key !== 'connection') reply.header(key, value);
  });
  const body = response.body
    ? Readable.fromWeb(response.body as unknown as NodeReadableStream<Uint8Array>)
    : '';
  return reply.send(body);
}

export function registerLlmRoutes(
  scope: FastifyInstance,
  deps: ApiLlmDeps,
  logger: ChatDeps['logger'],
): void {
  const proxy = createProxy(deps.providers, deps.llm);

  scope.get(
    '/llm/providers',
    {
      schema: {
        summary: 'The configured LLM providers (never their keys).',
        response: {
          200: {
            type: 'object',
            required: ['providers', 'default'],
            properties: {
              providers: { type: 'array', items: PROVIDER_VIEW },
              default: { type: ['string', 'null'] },
            },
          },
        },
      },
    },
    async () => {
      const providers = deps.providers.list();
      return { providers, default: providers.find((p) => p.isDefault)?.name ?? null };
    },
  );

  scope.get<{ Querystring: { provider?: string } }>(
    '/llm/models',
    {
      schema: {
        summary: "A provider's models: from its API where it lists them, plus the configured ones.",
        querystring: {
          type: 'object',
          properties: { provider: NAME },
        },
        response: {
          200: {
            type: 'object',
            required: ['provider', 'models'],
            properties: {
              provider: { type: 'string' },
              models: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['name', 'source'],
                  properties: {
                    name: { type: 'string' },
                    source: { type: 'string', enum: ['provider', 'config'] },
                  },
                },
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const provider = deps.providers.get(request.query.provider ?? null);
      const models = await listModels(provider, deps.providers.secrets(), disconnectSignal(reply));
      return { provider: provider.name, models };
    },
  );

  scope.post<{ Body: ProxyRequest }>(
    '/llm/chat',
    {
      schema: {
        summary:
          "The pgEdge-compatible proxy: messages and tool definitions to a provider, the model's message and tool calls back.",
        body: PROXY_BODY,
        response: {
          200: { description: `JSON, or with stream: true ${STREAM_DESCRIPTION}`, ...PROXY_ANSWER },
        },
      },
    },
    async (request, reply) => {
      const answer = await proxy.run(request.body, disconnectSignal(reply));
      if (answer instanceof Response) return sendResponse(reply, answer);
      return answer;
    },
  );

  scope.post<{ Body: ChatBody }>(
    '/chat',
    {
      schema: {
        summary:
          "The agent loop: the model answers with pgmcp's tools, run as the caller on the chat's database.",
        description: `${STREAM_DESCRIPTION} With the id of a conversation the caller has stored, the history is the stored one: the messages sent must begin with it (equal by role and content), followed by the new user messages (stored as sent), or the stored last assistant message may come back with tool approvals answered; the new user message alone is accepted too. With trigger regenerate-message the stored history is cut back to before the regenerated answer (messageId). Anything else is a 409.`,
        body: CHAT_BODY,
        response: { 409: HISTORY_CONFLICT },
      },
    },
    async (request, reply) => {
      const signal = disconnectSignal(reply);
      const stream = await startChat(
        { ...deps, logger },
        principalOf(request),
        request.body,
        signal,
      );
      return sendResponse(reply, createUIMessageStreamResponse({ stream }));
    },
  );
}
