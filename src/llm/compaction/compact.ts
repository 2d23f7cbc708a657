// compactMessages: a chat history that no longer fits `max_tokens` made to fit, keeping what the
// model cannot do without. Steps:
//   1. Group the messages into units: a tool call and its result(s) are one unit, kept or dropped
//      together (a result without its call, or a call without its result, breaks every
//      provider's API).
//   2. Classify each message (classify.ts); a unit takes its best member's class.
//   3. If the whole history fits, return it unchanged.
//   4. Otherwise take units in order of priority while they fit: the last message (the current
//      turn), anchors (when keep_anchors), the recent window, the most recent
//      min_important_messages important units, the other important, contextual and routine
//      units, newest first within each. Transient units outside the recent window never stay.
//      Long tool results outside the recent window, and any unit that does not fit whole, are
//      shortened (shrink.ts) rather than dropped.
//   5. Each run of dropped messages becomes one summary message in its place (when
//      enable_summarization); if the summaries push the total over the budget, the least
//      valuable kept unit goes too, until it fits.
import { AppError, ErrorCodes } from '../../core/errors.js';
import { cacheKey, round, type CompactionAnalytics, type CompactionCache } from './cache.js';
import { classifyMessage, type Classification } from './classify.js';
import { messageText, roleOf, toolCallsOf, toolResultsOf } from './message-parts.js';
import { shrinkMessage } from './shrink.js';
import { summarize, summaryFeatures, type SummaryFeatures } from './summarize.js';
import { countTextTokens, messageTokens } from './tokens.js';
import {
  COMPACTION_DEFAULTS,
  MESSAGE_CLASSES,
  TOKEN_COUNTER_TYPES,
  type ChatMessage,
  type CompactRequest,
  type CompactResponse,
  type MessageClass,
  type TokenCounterType,
} from './types.js';

export interface CompactOptions {
  /** Used when the request sets enable_caching. */
  cache?: CompactionCache;
  /** Fed on every compaction; its snapshot is returned when the request sets enable_analytics. */
  analytics?: CompactionAnalytics;
  /** Who asks (cache answers are never shared across callers). */
  scope?: string;
}

export const COMPACTION_LIMITS = Object.freeze({
  maxMessages: 10_000,
  maxTokens: 10_000_000,
  maxWindow: 10_000,
});

/** Tool results outside the recent window longer than this many tokens are shortened. */
const LONG_RESULT_TOKENS = 1_000;
/** What a shortened string keeps, in characters. */
const SHRINK_CHARS = 2_000;

interface Settings {
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

function settingsOf(request: CompactRequest): Settings {
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

interface Unit {
  members: number[];
  class: MessageClass;
  recent: boolean;
}

/** Message indices grouped so that each tool call sits in one unit with its results. */
function groupUnits(messages: readonly ChatMessage[]): number[][] {
  const units: number[][] = [];
  const openCall = new Map<string, number[]>();
  let lastWithCalls: number[] | null = null;
  messages.forEach((message, index) => {
    const results = toolResultsOf(message);
    const calls = toolCallsOf(message);
    // Results in a message of their own (model messages, OpenAI's tool role) join their call.
    const answered = new Set<string>(results.map((r) => r.id).filter((id) => id !== null));
    const ownCalls = new Set(calls.map((c) => c.id).filter((id) => id !== null));
    let home: number[] | null = null;
    for (const result of results) {
      if (result.id !== null && !ownCalls.has(result.id)) home ??= openCall.get(result.id) ?? null;
    }
    if (!home && roleOf(message) === 'tool' && results.every((r) => r.id === null)) {
      home = lastWithCalls; // results without ids follow the calls they answer
    }
    const unit = home ?? [];
    unit.push(index);
    if (!home) units.push(unit);
    for (const call of calls) {
      if (call.id !== null && !answered.has(call.id)) openCall.set(call.id, unit);
    }
    if (calls.length > 0) lastWithCalls = unit;
  });
  return units;
}

const NO_SUMMARY = Object.freeze({ topics: [], tables: [], tools: [], description: '' });

/** Units grouped into turns: each starts at a unit that opens with a person's message. */
function turnsOf(units: readonly Unit[], messages: readonly ChatMessage[]): Unit[][] {
  const turns: Unit[][] = [];
  for (const unit of units) {
    const opensTurn = roleOf(messages[unit.members[0]!]) === 'user';
    if (opensTurn || turns.length === 0) turns.push([unit]);
    else turns[turns.length - 1]!.push(unit);
  }
  return turns;
}

const rank = (c: MessageClass): number => MESSAGE_CLASSES.indexOf(c);

/** Compacts `request.messages` to fit `request.max_tokens` (see the file's opening comment). */
export function compactMessages(
  request: CompactRequest,
  options: CompactOptions = {},
): CompactResponse {
  const settings = settingsOf(request);
  const key = settings.caching && options.cache ? cacheKey(request, options.scope ?? '') : null;
  if (key !== null) {
    const hit = options.cache!.get(key);
    if (hit) {
      hit.compaction_info.cache_hit = true;
      return finish(hit, settings, options, true, null);
    }
  }
  const { result, classes } = compute(request.messages, settings);
  if (key !== null) {
    result.compaction_info.cache_hit = false;
    options.cache!.set(key, result);
  }
  return finish(result, settings, options, false, classes);
}

function finish(
  result: CompactResponse,
  settings: Settings,
  options: CompactOptions,
  cacheHit: boolean,
  classes: Classification[] | null,
): CompactResponse {
  if (options.analytics) {
    const counts: Partial<Record<MessageClass, number>> = {};
    for (const c of classes ?? []) counts[c.class] = (counts[c.class] ?? 0) + 1;
    const info = result.compaction_info;
    options.analytics.record({
      cacheHit,
      messagesIn: info.original_count,
      messagesOut: info.compacted_count,
      tokensIn: result.token_estimate + info.tokens_saved,
      tokensOut: result.token_estimate,
      classes: counts,
    });
    if (settings.analytics) result.analytics = options.analytics.snapshot();
  }
  return result;
}

function compute(
  messages: readonly ChatMessage[],
  settings: Settings,
): { result: CompactResponse; classes: Classification[] } {
  const n = messages.length;
  const firstRequest = messages.findIndex(
    (m) => roleOf(m) === 'user' && messageText(m).trim() !== '',
  );
  const classes = messages.map((m, i) => classifyMessage(m, i === firstRequest, settings));
  const tokens = messages.map((m) => messageTokens(m, settings.counter));
  const original = tokens.reduce((a, b) => a + b, 0);
  const anchors = (kept: Iterable<number>): number =>
    [...kept].filter((i) => classes[i]!.class === 'anchor').length;

  if (original <= settings.maxTokens) {
    const all = new Set(messages.keys());
    return {
      classes,
      result: {
        messages: [...messages],
        summary: { ...NO_SUMMARY },
        token_estimate: original,
        compaction_info: info(n, n, 0, anchors(all), original, original),
      },
    };
  }

  const windowStart = n - settings.recentWindow;
  const units: Unit[] = groupUnits(messages).map((members) => ({
    members,
    class: members.reduce<MessageClass>(
      (best, i) => (rank(classes[i]!.class) < rank(best) ? classes[i]!.class : best),
      'transient',
    ),
    recent: members.some((i) => i >= windowStart),
  }));
  const lastUnit = units.find((u) => u.members.includes(n - 1))!;

  // Priority order (step 4), as blocks kept or dropped whole. The less valuable rest of the
  // history goes by turns (a person's message and what answered it, newest first), so a
  // question is not kept without its answer and what stays is one stretch, not a comb of
  // fragments each needing its own summary.
  const newestFirst = [...units].reverse();
  const blocks: Unit[][] = [[lastUnit]];
  const placed = new Set<Unit>([lastUnit]);
  const each = (list: Unit[]): void => {
    for (const unit of list) {
      if (placed.has(unit)) continue;
      placed.add(unit);
      blocks.push([unit]);
    }
  };
  if (settings.keepAnchors) each(units.filter((u) => u.class === 'anchor'));
  each(newestFirst.filter((u) => u.recent));
  const important = newestFirst.filter((u) => u.class === 'important');
  each(important.slice(0, settings.minImportant));
  each(important);
  const turns = turnsOf(units, messages).reverse();
  for (const wanted of ['contextual', 'routine'] as const) {
    for (const turn of turns) {
      const rest = turn.filter((u) => !placed.has(u) && u.class !== 'transient');
      const best = rest.some((u) => rank(u.class) <= rank('contextual')) ? 'contextual' : 'routine';
      if (rest.length === 0 || best !== wanted) continue;
      for (const unit of rest) placed.add(unit);
      blocks.push(rest);
    }
  }

  // The form each message would be kept in, shortened where step 4 says so.
  const form: ChatMessage[] = [...messages];
  const cost: number[] = [...tokens];
  const shorten = (i: number): void => {
    if (form[i] !== messages[i]) return;
    form[i] = shrinkMessage(messages[i]!, SHRINK_CHARS);
    cost[i] = messageTokens(form[i], settings.counter);
  };
  for (const unit of units) {
    if (unit.recent) continue;
    for (const i of unit.members) {
      if (tokens[i]! > LONG_RESULT_TOKENS && toolResultsOf(messages[i]).length > 0) shorten(i);
    }
  }
  const unitCost = (unit: Unit): number => unit.members.reduce((sum, i) => sum + cost[i]!, 0);

  const taken: Unit[][] = [];
  let used = 0;
  for (const block of blocks) {
    let price = block.reduce((sum, unit) => sum + unitCost(unit), 0);
    if (used + price > settings.maxTokens) {
      for (const unit of block) unit.members.forEach(shorten);
      price = block.reduce((sum, unit) => sum + unitCost(unit), 0);
    }
    if (used + price <= settings.maxTokens || block[0] === lastUnit) {
      taken.push(block);
      used += price;
    }
  }

  const features: (SummaryFeatures | undefined)[] = new Array<SummaryFeatures | undefined>(n);
  const featuresOf = (i: number): SummaryFeatures => (features[i] ??= summaryFeatures(messages[i]));

  // Step 5: summaries in place of dropped runs; drop the least valuable kept unit while over.
  for (;;) {
    const kept = new Set(taken.flat().flatMap((u) => u.members));
    const out: ChatMessage[] = [];
    let outTokens = 0;
    let run: number[] = [];
    const flush = (): void => {
      // Acknowledgements alone are not worth a summary that would cost more than they did.
      const worth = run.some((i) => classes[i]!.class !== 'transient');
      if (run.length === 0 || !settings.summarization || !worth) return void (run = []);
      const text = summarize(run.map(featuresOf), settings.enhanced).description;
      out.push({ role: 'assistant', content: text });
      outTokens +=
        countTextTokens(text, settings.counter) +
        messageTokens({ role: 'assistant' }, settings.counter);
      run = [];
    };
    for (let i = 0; i < n; i++) {
      if (!kept.has(i)) {
        run.push(i);
        continue;
      }
      flush();
      out.push(form[i]!);
      outTokens += cost[i]!;
    }
    flush();
    if (outTokens > settings.maxTokens && taken.length > 1) {
      taken.pop();
      continue;
    }
    const dropped = [...messages.keys()].filter((i) => !kept.has(i));
    return {
      classes,
      result: {
        messages: out,
        summary:
          dropped.length > 0 ? summarize(dropped.map(featuresOf), settings.enhanced) : NO_SUMMARY,
        token_estimate: outTokens,
        compaction_info: info(n, out.length, dropped.length, anchors(kept), original, outTokens),
      },
    };
  }
}

function info(
  originalCount: number,
  compactedCount: number,
  droppedCount: number,
  anchorCount: number,
  originalTokens: number,
  tokens: number,
): CompactResponse['compaction_info'] {
  return {
    original_count: originalCount,
    compacted_count: compactedCount,
    dropped_count: droppedCount,
    anchor_count: anchorCount,
    tokens_saved: Math.max(0, originalTokens - tokens),
    compression_ratio: originalTokens > 0 ? round(tokens / originalTokens) : 1,
  };
}
