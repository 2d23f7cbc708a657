// /api/conversations (pgEdge-compatible): each signed-in caller's saved chats. The store keeps every
// owner's conversations apart (state/conversation-store.ts); here requests and answers are shaped.
// Conversations need a signed-in caller: the routes are marked auth 'required', so an anonymous
// caller (no token, or a server with authentication off and no token sent) gets 401 before
// anything is read. Another caller's id is a 404, exactly like an id that never existed.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  CONVERSATION_LIMITS,
  type ConversationRecord,
  type ConversationStore,
  type ConversationSummary,
} from '../state/index.js';
import type { Principal } from '../core/principal.js';
import { ApiError } from './errors.js';
import { signedIn } from './guard.js';

const SIGNED_IN = {
  config: { auth: 'required' },
  preValidation: async (request: FastifyRequest): Promise<void> => {
    signedIn(request);
  },
} as const;

const ID = {
  type: 'string',
  pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$',
  description: 'The conversation id (`conv_…` for ids made by POST).',
} as const;
const ID_PARAMS = { type: 'object', required: ['id'], properties: { id: ID } } as const;

const SETTING = {
  anyOf: [{ type: 'string', maxLength: CONVERSATION_LIMITS.maxSettingLength }, { type: 'null' }],
} as const;
const TITLE = {
  type: 'string',
  minLength: 1,
  maxLength: CONVERSATION_LIMITS.maxTitleLength,
  pattern: '\\S',
} as const;

// The pgEdge agent's {role, content} or the AI SDK's UI message {id, role, parts, metadata}: the role
// is checked, the rest is kept as sent.
const MESSAGE = {
  type: 'object',
  required: ['role'],
  properties: {
    role: { type: 'string', enum: ['system', 'user', 'assistant', 'tool'] },
    content: { anyOf: [{ type: 'string' }, { type: 'array' }] },
    parts: { type: 'array' },
  },
} as const;
const MESSAGES = {
  type: 'array',
  maxItems: CONVERSATION_LIMITS.maxMessages,
  items: MESSAGE,
} as const;

const CREATE_BODY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    provider: SETTING,
    model: SETTING,
    connection: SETTING,
    messages: MESSAGES,
    title: TITLE,
  },
} as const;
const REPLACE_BODY = { ...CREATE_BODY, required: ['messages'] } as const;
const RENAME_BODY = {
  type: 'object',
  required: ['title'],
  additionalProperties: false,
  properties: { title: TITLE },
} as const;

const COUNT = '^[0-9]{1,7}$';
const LIST_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      type: 'string',
      pattern: COUNT,
      description: `At most this many (default ${CONVERSATION_LIMITS.defaultListLimit}, at most ${CONVERSATION_LIMITS.maxListLimit}).`,
    },
    offset: { type: 'string', pattern: COUNT, description: 'Skip this many (default 0).' },
  },
} as const;
const DELETE_ALL_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: { all: { type: 'string', enum: ['true'] } },
} as const;

const STAMP = { type: 'string', format: 'date-time' } as const;
const NULLABLE = { type: ['string', 'null'] } as const;
const SUMMARY_VIEW = {
  type: 'object',
  required: ['id', 'title', 'connection', 'created_at', 'updated_at', 'preview'],
  properties: {
    id: { type: 'string' },
    title: { type: 'string' },
    connection: NULLABLE,
    created_at: STAMP,
    updated_at: STAMP,
    preview: { type: 'string' },
  },
} as const;
const FULL_VIEW = {
  type: 'object',
  required: ['id', 'username', 'title', 'provider', 'model', 'connection', 'messages'],
  properties: {
    id: { type: 'string' },
    username: { type: 'string' },
    title: { type: 'string' },
    provider: NULLABLE,
    model: NULLABLE,
    connection: NULLABLE,
    messages: { type: 'array', items: {} },
    usage: {
      type: 'object',
      properties: {
        input_tokens: { type: 'integer' },
        output_tokens: { type: 'integer' },
        total_tokens: { type: 'integer' },
      },
    },
    created_at: STAMP,
    updated_at: STAMP,
  },
} as const;
const SUCCESS = {
  type: 'object',
  required: ['success'],
  properties: { success: { type: 'boolean' } },
} as const;
const DELETED = {
  type: 'object',
  required: ['success', 'deleted'],
  properties: { success: { type: 'boolean' }, deleted: { type: 'integer' } },
} as const;

interface Body {
  provider?: string | null;
  model?: string | null;
  connection?: string | null;
  messages?: unknown[];
  title?: string;
}

function summaryView(c: ConversationSummary) {
  return {
    id: c.id,
    title: c.title,
    connection: c.connection,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
    preview: c.preview,
  };
}

function fullView(c: ConversationRecord) {
  return {
    id: c.id,
    username: c.username,
    title: c.title,
    provider: c.provider,
    model: c.model,
    connection: c.connection,
    messages: c.messages,
    usage: {
      input_tokens: c.usage.inputTokens,
      output_tokens: c.usage.outputTokens,
      total_tokens: c.usage.totalTokens,
    },
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

const count = (name: string, text: string | undefined, fallback: number, max: number): number => {
  const value = text === undefined ? fallback : Number(text);
  if (value > max || (name === 'limit' && value < 1)) {
    throw new ApiError(
      400,
      `invalid request: ${name} must be from ${name === 'limit' ? 1 : 0} to ${max}`,
    );
  }
  return value;
};

export function registerConversationRoutes(scope: FastifyInstance, store: ConversationStore): void {
  const who = (request: FastifyRequest): Principal => signedIn(request);

  scope.get<{ Querystring: { limit?: string; offset?: string } }>(
    '/conversations',
    {
      ...SIGNED_IN,
      schema: {
        querystring: LIST_QUERY,
        response: {
          200: {
            type: 'object',
            properties: { conversations: { type: 'array', items: SUMMARY_VIEW } },
          },
        },
      },
    },
    async (request) => {
      const limit = count(
        'limit',
        request.query.limit,
        CONVERSATION_LIMITS.defaultListLimit,
        CONVERSATION_LIMITS.maxListLimit,
      );
      const offset = count('offset', request.query.offset, 0, 1_000_000);
      const list = await store.list(who(request), { limit, offset });
      return { conversations: list.map(summaryView) };
    },
  );

  scope.post<{ Body: Body | undefined }>(
    '/conversations',
    { ...SIGNED_IN, schema: { body: CREATE_BODY, response: { 201: FULL_VIEW } } },
    async (request, reply) => {
      const created = await store.create(who(request), request.body ?? {});
      reply.code(201);
      return fullView(created);
    },
  );

  scope.get<{ Params: { id: string } }>(
    '/conversations/:id',
    { ...SIGNED_IN, schema: { params: ID_PARAMS, response: { 200: FULL_VIEW } } },
    async (request) => fullView(await store.get(who(request), request.params.id)),
  );

  scope.put<{ Params: { id: string }; Body: Body }>(
    '/conversations/:id',
    {
      ...SIGNED_IN,
      schema: { params: ID_PARAMS, body: REPLACE_BODY, response: { 200: FULL_VIEW } },
    },
    async (request) => fullView(await store.replace(who(request), request.params.id, request.body)),
  );

  scope.patch<{ Params: { id: string }; Body: { title: string } }>(
    '/conversations/:id',
    { ...SIGNED_IN, schema: { params: ID_PARAMS, body: RENAME_BODY, response: { 200: SUCCESS } } },
    async (request) => {
      await store.rename(who(request), request.params.id, request.body.title);
      return { success: true };
    },
  );

  scope.delete<{ Params: { id: string } }>(
    '/conversations/:id',
    { ...SIGNED_IN, schema: { params: ID_PARAMS, response: { 200: SUCCESS } } },
    async (request) => {
      await store.remove(who(request), request.params.id);
      return { success: true };
    },
  );

  scope.delete<{ Querystring: { all?: 'true' } }>(
    '/conversations',
    { ...SIGNED_IN, schema: { querystring: DELETE_ALL_QUERY, response: { 200: DELETED } } },
    async (request) => {
      if (request.query.all !== 'true') {
        throw new ApiError(
          400,
          'to delete every conversation, send DELETE /api/conversations?all=true',
        );
      }
      return { success: true, deleted: await store.removeAll(who(request)) };
    },
  );
}
