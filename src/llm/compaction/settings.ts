// The request's knobs with the pgEdge agent's defaults, checked: a wrong type or an out-of-range number
// is COMPACTION_INVALID naming the field (the route's schema refuses them first; this guards
// in-process callers such as the chat loop).
import { AppError, ErrorCodes } from '../../core/errors.js';
import { roleOf } from './message-parts.js';
import {
  COMPACTION_DEFAULTS,
  TOKEN_COUNTER_TYPES,
  type CompactRequest,
  type TokenCounterType,
} from './types.js';

export const COMPACTION_LIMITS = Object.freeze({
  maxMessages: 10_000,
  maxTokens: 10_000_000,
  maxWindow: 10_000,
});

export interface Settings {
  maxTokens: number;
  recentWindow: number;
  keepAnchors: boolean;
  preserveToolResults: boolean;
  preserveSchemaInfo: boolean;
  summarization: boolean;
  minImportant: number;
  counter: TokenCounterType;
  enhanced: boolean;
  caching: boolean;
  analytics: boolean;
}

const invalid = (message: string): AppError =>
  new AppError(ErrorCodes.COMPACTION_INVALID, message, { category: 'input' });

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${name} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

function flag(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw invalid(`${name} must be true or false.`);
  return value;
}

export function settingsOf(request: CompactRequest): Settings {
  if (typeof request !== 'object' || request === null) throw invalid('The body must be an object.');
  const { messages } = request;
  if (!Array.isArray(messages)) throw invalid('messages must be an array of chat messages.');
  if (messages.length > COMPACTION_LIMITS.maxMessages) {
    throw invalid(`messages holds at most ${COMPACTION_LIMITS.maxMessages} messages.`);
  }
  messages.forEach((message, i) => {
    if (roleOf(message) === '') throw invalid(`messages[${i}] must be an object with a role.`);
  });
  const options = request.options ?? {};
  if (typeof options !== 'object' || options === null) throw invalid('options must be an object.');
  const counter = options.token_counter_type ?? COMPACTION_DEFAULTS.tokenCounterType;
  if (!TOKEN_COUNTER_TYPES.includes(counter)) {
    throw invalid(`options.token_counter_type must be one of ${TOKEN_COUNTER_TYPES.join(', ')}.`);
  }
  const d = COMPACTION_DEFAULTS;
  const { maxTokens, maxWindow } = COMPACTION_LIMITS;
  return {
    maxTokens: integer('max_tokens', request.max_tokens, d.maxTokens, 1, maxTokens),
    recentWindow: integer('recent_window', request.recent_window, d.recentWindow, 0, maxWindow),
    keepAnchors: flag('keep_anchors', request.keep_anchors, d.keepAnchors),
    preserveToolResults: flag(
      'options.preserve_tool_results',
      options.preserve_tool_results,
      d.preserveToolResults,
    ),
    preserveSchemaInfo: flag(
      'options.preserve_schema_info',
      options.preserve_schema_info,
      d.preserveSchemaInfo,
    ),
    summarization: flag(
      'options.enable_summarization',
      options.enable_summarization,
      d.enableSummarization,
    ),
    minImportant: integer(
      'options.min_important_messages',
      options.min_important_messages,
      d.minImportantMessages,
      0,
      maxWindow,
    ),
    counter,
    enhanced: flag('options.enable_llm_summarization', options.enable_llm_summarization, false),
    caching: flag('options.enable_caching', options.enable_caching, false),
    analytics: flag('options.enable_analytics', options.enable_analytics, false),
  };
}
