// The optional cache (enable_caching) and running analytics (enable_analytics) of compaction.
// The cache key is the SHA-256 of the request's canonical JSON (keys sorted, the caching and
// analytics switches left out, the caller's scope included), so the same history compacted the
// same way is answered without redoing the work. Entries are bounded in number, in total size
// and in age; a hit returns a copy, so no caller can alter another's answer.
import { createHash } from 'node:crypto';
import {
  MESSAGE_CLASSES,
  type AnalyticsSnapshot,
  type CompactRequest,
  type CompactResponse,
  type MessageClass,
} from './types.js';

export interface CompactionCache {
  get(key: string): CompactResponse | undefined;
  set(key: string, value: CompactResponse): void;
  readonly size: number;
}

export interface CacheLimits {
  maxEntries: number;
  maxBytes: number;
  ttlMs: number;
}

export const DEFAULT_CACHE_LIMITS: CacheLimits = {
  maxEntries: 256,
  maxBytes: 32 * 1024 * 1024,
  ttlMs: 10 * 60_000,
};

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, canonical(v)]));
}

/** The cache key of `request` for `scope` (who asked: answers are never shared across callers). */
export function cacheKey(request: CompactRequest, scope: string): string {
  const {
    enable_caching: _caching,
    enable_analytics: _analytics,
    ...options
  } = request.options ?? {};
  const material = JSON.stringify(canonical({ ...request, options, scope }));
  return createHash('sha256').update(material).digest('hex');
}

export function createCompactionCache(limits: CacheLimits = DEFAULT_CACHE_LIMITS): CompactionCache {
  const entries = new Map<string, { text: string; bytes: number; until: number }>();
  let bytes = 0;
  const drop = (key: string): void => {
    const entry = entries.get(key);
    if (!entry) return;
    bytes -= entry.bytes;
    entries.delete(key);
  };
  return {
    get size() {
      return entries.size;
    },
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.until <= Date.now()) {
        drop(key);
        return undefined;
      }
      // Most recently used last: Map order is the eviction order.
      entries.delete(key);
      entries.set(key, entry);
      return JSON.parse(entry.text) as CompactResponse;
    },
    set(key, value) {
      const text = JSON.stringify(value);
      const size = text.length * 2;
      drop(key);
      if (size > limits.maxBytes) return;
      for (const oldest of entries.keys()) {
        if (entries.size < limits.maxEntries && bytes + size <= limits.maxBytes) break;
        drop(oldest);
      }
      entries.set(key, { text, bytes: size, until: Date.now() + limits.ttlMs });
      bytes += size;
    },
  };
}

export interface CompactionAnalytics {
  record(entry: {
    cacheHit: boolean;
    messagesIn: number;
    messagesOut: number;
    tokensIn: number;
    tokensOut: number;
    classes: Partial<Record<MessageClass, number>>;
  }): void;
  snapshot(): AnalyticsSnapshot;
}

export function createCompactionAnalytics(): CompactionAnalytics {
  const totals = {
    compactions: 0,
    cache_hits: 0,
    messages_in: 0,
    messages_out: 0,
    tokens_in: 0,
    tokens_out: 0,
    ratioSum: 0,
  };
  const classes = Object.fromEntries(MESSAGE_CLASSES.map((c) => [c, 0])) as Record<
    MessageClass,
    number
  >;
  return {
    record(entry) {
      totals.compactions++;
      if (entry.cacheHit) totals.cache_hits++;
      totals.messages_in += entry.messagesIn;
      totals.messages_out += entry.messagesOut;
      totals.tokens_in += entry.tokensIn;
      totals.tokens_out += entry.tokensOut;
      totals.ratioSum += entry.tokensIn > 0 ? entry.tokensOut / entry.tokensIn : 1;
      for (const c of MESSAGE_CLASSES) classes[c] += entry.classes[c] ?? 0;
    },
    snapshot() {
      const { ratioSum, ...rest } = totals;
      return {
        ...rest,
        tokens_saved: totals.tokens_in - totals.tokens_out,
        average_compression_ratio:
          totals.compactions > 0 ? round(ratioSum / totals.compactions) : 1,
        classes: { ...classes },
      };
    },
  };
}

export const round = (n: number): number => Math.round(n * 1000) / 1000;
