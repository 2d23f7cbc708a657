// Chat history compaction (POST /api/chat/compact, and the chat loop when a conversation nears
// the model's context). Pure logic: no database, no network. See docs/chat.md#compaction.
export { compactMessages, type CompactOptions } from './compact.js';
export { COMPACTION_LIMITS } from './settings.js';
export { estimateTokens, countTextTokens, messageTokens } from './tokens.js';
export { classifyMessage, type Classification, type ClassifyOptions } from './classify.js';
export {
  cacheKey,
  createCompactionAnalytics,
  createCompactionCache,
  DEFAULT_CACHE_LIMITS,
  type CacheLimits,
  type CompactionAnalytics,
  type CompactionCache,
} from './cache.js';
export {
  COMPACTION_DEFAULTS,
  MESSAGE_CLASSES,
  TOKEN_COUNTER_TYPES,
  type AnalyticsSnapshot,
  type ChatMessage,
  type CompactionInfo,
  type CompactOptionsWire,
  type CompactRequest,
  type CompactResponse,
  type CompactSummary,
  type MessageClass,
  type TokenCounterType,
} from './types.js';
