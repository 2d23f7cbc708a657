// compactMessages: a chat history that no longer fits `max_tokens` made to fit, keeping what the
// model cannot do without. Steps:
//   1. Group the messages into units: a tool call and its result(s) are one unit, kept or dropped
//      together (a result without its call, or a call without its result, breaks every
//      provider's API).
//   2. Classify each message (classify.ts); a unit takes its best member's class.
//   3. If the whole history fits, return it unchanged.
//   4. Otherwise take units in order of priority while they fit: the last message (the current
//      turn), anchors (when keep_anchors), the most recent min_important_messages important
//      units, the recent window, the other important units, then whole turns (contextual before
//      routine), newest first within each. Transient units outside the recent window never stay.
//      Long tool results outside the recent window, and any unit that does not fit whole, are
//      shortened (shrink.ts) rather than dropped.
//   5. Each run of dropped messages becomes one summary message in its place (when
//      enable_summarization); if the summaries push the total over the budget, the least
//      valuable kept unit goes too, until it fits.
import { cacheKey, round, type CompactionAnalytics, type CompactionCache } from './cache.js';
import { classifyView, type Classification } from './classify.js';
import { roleOf, viewOf, type MessageView } from './message-parts.js';
import { settingsOf, type Settings } from './settings.js';
import { shrinkMessage } from './shrink.js';
import { summarize, summaryFeatures, type SummaryFeatures } from './summarize.js';
import { countTextTokens, messageTokens, viewTokens } from './tokens.js';
import {
  MESSAGE_CLASSES,
  type ChatMessage,
  type CompactRequest,
  type CompactResponse,
  type MessageClass,
} from './types.js';

export interface CompactOptions {
  /** Used when the request sets enable_caching. */
  cache?: CompactionCache;
  /** Fed on every compaction; its snapshot is returned when the request sets enable_analytics. */
  analytics?: CompactionAnalytics;
  /** Who asks (cache answers are never shared across callers). */
  scope?: string;
}

/** Tool results outside the recent window longer than this many tokens are shortened. */
const LONG_RESULT_TOKENS = 1_000;
/** What a shortened string keeps, in characters. */
const SHRINK_CHARS = 2_000;

interface Unit {
  members: number[];
  class: MessageClass;
  recent: boolean;
}

/** Message indices grouped so that each tool call sits in one unit with its results. */
function groupUnits(views: readonly MessageView[]): number[][] {
  const units: number[][] = [];
  const openCall = new Map<string, number[]>();
  let lastWithCalls: number[] | null = null;
  views.forEach((view, index) => {
    const { results, calls } = view;
    // Results in a message of their own (model messages, OpenAI's tool role) join their call.
    const answered = new Set<string>(results.map((r) => r.id).filter((id) => id !== null));
    const ownCalls = new Set(calls.map((c) => c.id).filter((id) => id !== null));
    let home: number[] | null = null;
    for (const result of results) {
      if (result.id !== null && !ownCalls.has(result.id)) home ??= openCall.get(result.id) ?? null;
    }
    if (!home && view.role === 'tool' && results.every((r) => r.id === null)) {
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

const noSummary = (): CompactResponse['summary'] => ({
  topics: [],
  tables: [],
  tools: [],
  description: '',
});

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
  const views = messages.map(viewOf);
  const firstRequest = views.findIndex((v) => v.role === 'user' && v.text.trim() !== '');
  const classes = views.map((v, i) => classifyView(v, i === firstRequest, settings));
  const tokens = views.map((v) => viewTokens(v, settings.counter));
  const original = tokens.reduce((a, b) => a + b, 0);
  const anchors = (kept: Iterable<number>): number =>
    [...kept].filter((i) => classes[i]!.class === 'anchor').length;

  if (original <= settings.maxTokens) {
    const all = new Set(messages.keys());
    return {
      classes,
      result: {
        messages: [...messages],
        summary: noSummary(),
        token_estimate: original,
        compaction_info: info(n, n, 0, anchors(all), original, original),
      },
    };
  }

  const windowStart = n - settings.recentWindow;
  const units: Unit[] = groupUnits(views).map((members) => ({
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
  // The most recent important units come before the window: however wide the window, that
  // many errors and results survive.
  const important = newestFirst.filter((u) => u.class === 'important');
  each(important.slice(0, settings.minImportant));
  each(newestFirst.filter((u) => u.recent));
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
      if (tokens[i]! > LONG_RESULT_TOKENS && views[i]!.results.length > 0) shorten(i);
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
  const featuresOf = (i: number): SummaryFeatures => (features[i] ??= summaryFeatures(views[i]!));

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
          dropped.length > 0 ? summarize(dropped.map(featuresOf), settings.enhanced) : noSummary(),
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
