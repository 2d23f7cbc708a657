import { describe, expect, it } from 'vitest';
import { cacheKey, createCompactionAnalytics, createCompactionCache } from './cache.js';
import type { CompactResponse } from './types.js';

const answer = (text: string): CompactResponse => ({
  messages: [{ role: 'user', content: text }],
  summary: { topics: [], tables: [], tools: [], description: '' },
  token_estimate: 1,
  compaction_info: {
    original_count: 1,
    compacted_count: 1,
    dropped_count: 0,
    anchor_count: 0,
    tokens_saved: 0,
    compression_ratio: 1,
  },
});

describe('compaction cache', () => {
  it('keys by content: key order and the caching switches do not matter, the scope does', () => {
    const messages = [{ role: 'user', content: 'hi' }];
    const a = cacheKey({ messages, max_tokens: 10, options: { enable_caching: true } }, 's');
    const b = cacheKey({ max_tokens: 10, messages, options: { enable_analytics: true } }, 's');
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(cacheKey({ messages, max_tokens: 11 }, 's')).not.toBe(a);
    expect(cacheKey({ messages, max_tokens: 10 }, 't')).not.toBe(a);
  });

  it('hands out copies, evicts the least recently used, and bounds entries, bytes and age', () => {
    const cache = createCompactionCache({ maxEntries: 2, maxBytes: 10_000, ttlMs: 60_000 });
    cache.set('a', answer('a'));
    cache.set('b', answer('b'));
    const copy = cache.get('a')!;
    copy.messages.length = 0;
    expect(cache.get('a')!.messages).toHaveLength(1);
    cache.set('c', answer('c')); // 'b' was used least recently
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.size).toBe(2);
    cache.set('big', answer('x'.repeat(20_000))); // larger than the whole cache: not kept
    expect(cache.get('big')).toBeUndefined();
    const small = createCompactionCache({ maxEntries: 10, maxBytes: 1_000, ttlMs: 60_000 });
    small.set('a', answer('a'.repeat(200)));
    small.set('b', answer('b'.repeat(200)));
    expect(small.size).toBe(1);
    const expired = createCompactionCache({ maxEntries: 10, maxBytes: 10_000, ttlMs: 0 });
    expired.set('a', answer('a'));
    expect(expired.get('a')).toBeUndefined();
    expect(expired.size).toBe(0);
  });

  it('analytics add up', () => {
    const analytics = createCompactionAnalytics();
    expect(analytics.snapshot().average_compression_ratio).toBe(1);
    analytics.record({
      cacheHit: false,
      messagesIn: 10,
      messagesOut: 4,
      tokensIn: 1000,
      tokensOut: 250,
      classes: { anchor: 1, routine: 9 },
    });
    analytics.record({
      cacheHit: true,
      messagesIn: 10,
      messagesOut: 4,
      tokensIn: 1000,
      tokensOut: 750,
      classes: {},
    });
    expect(analytics.snapshot()).toEqual({
      compactions: 2,
      cache_hits: 1,
      messages_in: 20,
      messages_out: 8,
      tokens_in: 2000,
      tokens_out: 1000,
      tokens_saved: 1000,
      average_compression_ratio: 0.5,
      classes: { anchor: 1, important: 0, contextual: 0, routine: 9, transient: 0 },
    });
  });
});
