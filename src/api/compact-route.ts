// POST /api/chat/compact (pgEdge-compatible): a chat history made to fit a token budget. The work is
// llm/compaction's; this route validates the pgEdge agent's request, keeps the process's cache and
// analytics, and answers its response.
import type { FastifyInstance } from 'fastify';
import {
  COMPACTION_LIMITS,
  compactMessages,
  createCompactionAnalytics,
  createCompactionCache,
  TOKEN_COUNTER_TYPES,
  type CompactRequest,
} from '../llm/compaction/index.js';

const MESSAGE = {
  type: 'object',
  required: ['role'],
  properties: {
    role: { type: 'string', minLength: 1, maxLength: 32 },
    content: {
      description: 'A string, or the AI SDK parts (text, tool-call, tool-result).',
      anyOf: [{ type: 'string' }, { type: 'array' }, { type: 'null' }],
    },
  },
} as const;

const BODY = {
  type: 'object',
  required: ['messages'],
  additionalProperties: false,
  properties: {
    messages: { type: 'array', maxItems: COMPACTION_LIMITS.maxMessages, items: MESSAGE },
    max_tokens: { type: 'integer', minimum: 1, maximum: COMPACTION_LIMITS.maxTokens },
    recent_window: { type: 'integer', minimum: 0, maximum: COMPACTION_LIMITS.maxWindow },
    keep_anchors: { type: 'boolean' },
    options: {
      type: 'object',
      additionalProperties: false,
      properties: {
        preserve_tool_results: { type: 'boolean' },
        preserve_schema_info: { type: 'boolean' },
        enable_summarization: { type: 'boolean' },
        min_important_messages: {
          type: 'integer',
          minimum: 0,
          maximum: COMPACTION_LIMITS.maxWindow,
        },
        token_counter_type: { type: 'string', enum: [...TOKEN_COUNTER_TYPES] },
        enable_llm_summarization: { type: 'boolean' },
        enable_caching: { type: 'boolean' },
        enable_analytics: { type: 'boolean' },
      },
    },
  },
} as const;

const STRINGS = { type: 'array', items: { type: 'string' } } as const;
const ANSWER = {
  type: 'object',
  required: ['messages', 'summary', 'token_estimate', 'compaction_info'],
  properties: {
    messages: { type: 'array', items: {} },
    summary: {
      type: 'object',
      properties: {
        topics: STRINGS,
        tables: STRINGS,
        tools: STRINGS,
        description: { type: 'string' },
      },
    },
    token_estimate: { type: 'integer' },
    compaction_info: {
      type: 'object',
      properties: {
        original_count: { type: 'integer' },
        compacted_count: { type: 'integer' },
        dropped_count: { type: 'integer' },
        anchor_count: { type: 'integer' },
        tokens_saved: { type: 'integer' },
        compression_ratio: { type: 'number' },
        cache_hit: { type: 'boolean' },
      },
    },
    analytics: { type: 'object', additionalProperties: true },
  },
} as const;

export function registerCompactRoute(scope: FastifyInstance): void {
  const cache = createCompactionCache();
  const analytics = createCompactionAnalytics();
  scope.post<{ Body: CompactRequest }>(
    '/chat/compact',
    { schema: { body: BODY, response: { 200: ANSWER } } },
    async (request) => {
      const principal = request.principal;
      const scopeKey = principal
        ? `${principal.kind}:${principal.tenantId ?? ''}:${principal.userId ?? ''}`
        : '';
      return compactMessages(request.body, { cache, analytics, scope: scopeKey });
    },
  );
}
