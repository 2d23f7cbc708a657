// The wire shapes of POST /api/chat/compact (pgEdge-compatible), used as they are by compactMessages so
// the route only validates and forwards. Field names are the pgEdge agent's (snake_case).

export type TokenCounterType = 'generic' | 'openai' | 'anthropic' | 'ollama';
export const TOKEN_COUNTER_TYPES: readonly TokenCounterType[] = [
  'generic',
  'openai',
  'anthropic',
  'ollama',
];

/** One chat message: `content` a string or parts (text, tool calls, tool results), or UI `parts`. */
export interface ChatMessage {
  role: string;
  content?: unknown;
  [field: string]: unknown;
}

export interface CompactOptionsWire {
  preserve_tool_results?: boolean;
  preserve_schema_info?: boolean;
  enable_summarization?: boolean;
  min_important_messages?: number;
  token_counter_type?: TokenCounterType;
  enable_llm_summarization?: boolean;
  enable_caching?: boolean;
  enable_analytics?: boolean;
}

export interface CompactRequest {
  messages: ChatMessage[];
  max_tokens?: number;
  recent_window?: number;
  keep_anchors?: boolean;
  options?: CompactOptionsWire;
}

export interface CompactSummary {
  topics: string[];
  tables: string[];
  tools: string[];
  description: string;
}

export interface CompactionInfo {
  original_count: number;
  compacted_count: number;
  dropped_count: number;
  anchor_count: number;
  tokens_saved: number;
  compression_ratio: number;
  /** Only when enable_caching: whether the answer came from the cache. */
  cache_hit?: boolean;
}

export interface CompactResponse {
  messages: ChatMessage[];
  summary: CompactSummary;
  token_estimate: number;
  compaction_info: CompactionInfo;
  /** Only when enable_analytics: this process's running totals. */
  analytics?: AnalyticsSnapshot;
}

export interface AnalyticsSnapshot {
  compactions: number;
  cache_hits: number;
  messages_in: number;
  messages_out: number;
  tokens_in: number;
  tokens_out: number;
  tokens_saved: number;
  average_compression_ratio: number;
  /** How many messages of each class were seen. */
  classes: Record<MessageClass, number>;
}

/** The five classes, most valuable first. */
export type MessageClass = 'anchor' | 'important' | 'contextual' | 'routine' | 'transient';
export const MESSAGE_CLASSES: readonly MessageClass[] = [
  'anchor',
  'important',
  'contextual',
  'routine',
  'transient',
];

/** The pgEdge agent's defaults. */
export const COMPACTION_DEFAULTS = Object.freeze({
  maxTokens: 100_000,
  recentWindow: 10,
  keepAnchors: true,
  preserveToolResults: true,
  preserveSchemaInfo: true,
  enableSummarization: true,
  minImportantMessages: 3,
  tokenCounterType: 'generic' as TokenCounterType,
});
