// The compaction test set: conversations with anchors, errors, schema dumps, long tool results
// and tool call/result pairs at the window's edge, and exactly what survives each.
import { describe, expect, it } from 'vitest';
import { ErrorCodes, isAppError } from '../../core/errors.js';
import { createCompactionAnalytics, createCompactionCache } from './cache.js';
import { compactMessages } from './compact.js';
import { fullText, toolCallsOf, toolResultsOf } from './message-parts.js';
import { estimateTokens } from './tokens.js';
import type { ChatMessage, CompactRequest, CompactResponse, TokenCounterType } from './types.js';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });
const call = (id: string, toolName: string, input: unknown): ChatMessage => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: id, toolName, input }],
});
const result = (id: string, toolName: string, text: string, isError = false): ChatMessage => ({
  role: 'tool',
  content: [
    {
      type: 'tool-result',
      toolCallId: id,
      toolName,
      output: isError ? { type: 'error-text', value: text } : { type: 'text', value: text },
    },
  ],
});

/** k question/answer pairs of ordinary chatter (~100 tokens each). */
function chatter(k: number, tag = 'q'): ChatMessage[] {
  return Array.from({ length: k }, (_, i) => [
    user(`What is the count for region ${tag}${i} in the last quarter of the year?`),
    assistant(`Region ${tag}${i} had ${100 + i} sales. `.repeat(12)),
  ]).flat();
}

const texts = (response: CompactResponse): string[] => response.messages.map((m) => fullText(m));
const has = (response: CompactResponse, needle: string): boolean =>
  texts(response).some((t) => t.includes(needle));

/** Every kept tool result has its call kept, and every kept call its result. */
function expectPairsIntact(response: CompactResponse): void {
  const calls = new Set(response.messages.flatMap((m) => toolCallsOf(m).map((c) => c.id)));
  const results = new Set(response.messages.flatMap((m) => toolResultsOf(m).map((r) => r.id)));
  for (const id of results) expect(calls.has(id), `result ${id} without its call`).toBe(true);
  for (const id of calls) expect(results.has(id), `call ${id} without its result`).toBe(true);
}

function expectBudget(response: CompactResponse, request: CompactRequest): void {
  const counter: TokenCounterType = request.options?.token_counter_type ?? 'generic';
  expect(response.token_estimate).toBe(estimateTokens(response.messages, counter));
  expect(response.token_estimate).toBeLessThanOrEqual(request.max_tokens ?? 100_000);
  const info = response.compaction_info;
  expect(info.compacted_count).toBe(response.messages.length);
  expect(info.tokens_saved).toBe(
    estimateTokens(request.messages, counter) - response.token_estimate,
  );
}

describe('compactMessages', () => {
  it('returns a history that fits unchanged', () => {
    const messages = [user('Show me the users table'), assistant('Here it is.')];
    const response = compactMessages({ messages });
    expect(response.messages).toEqual(messages);
    expect(response.compaction_info).toMatchObject({
      original_count: 2,
      compacted_count: 2,
      dropped_count: 0,
      anchor_count: 1,
      tokens_saved: 0,
      compression_ratio: 1,
    });
    expect(response.summary).toEqual({ topics: [], tables: [], tools: [], description: '' });
  });

  it('keeps anchors and the recent window, drops chatter and summarizes it in its place', () => {
    const messages = [
      { role: 'system', content: 'Answer about the sales database only.' },
      user('Show me the users table'),
      ...chatter(10, 'a'),
      user('No, I meant the customers table, not users'),
      assistant('Understood: the customers table.'),
      ...chatter(10, 'b'),
      user('ok'),
      ...chatter(2, 'c'),
    ];
    const request: CompactRequest = { messages, max_tokens: 1200, recent_window: 4 };
    const response = compactMessages(request);
    expectBudget(response, request);
    const out = texts(response);
    // Anchors survive, in their original order, before the recent window.
    expect(out[0]).toBe('Answer about the sales database only.');
    expect(out[1]).toBe('Show me the users table');
    expect(has(response, 'No, I meant the customers table')).toBe(true);
    // The recent window is the last four messages, whole.
    expect(response.messages.slice(-4)).toEqual(messages.slice(-4));
    // The transient "ok" never stays outside the window.
    expect(out).not.toContain('ok');
    // Dropped runs are replaced by summaries.
    const summaries = out.filter((t) => t.startsWith('[Compressed context:'));
    expect(summaries.length).toBeGreaterThan(0);
    expect(response.summary.description).toMatch(/^\[Compressed context: .*messages compressed\]$/);
    expect(response.summary.topics).toContain('database queries');
    const info = response.compaction_info;
    expect(info.original_count).toBe(messages.length);
    expect(info.anchor_count).toBe(3);
    expect(info.dropped_count).toBe(
      messages.length - (response.messages.length - summaries.length),
    );
    const original = estimateTokens(messages, 'generic');
    expect(info.compression_ratio).toBeCloseTo(response.token_estimate / original, 3);
    expect(info.compression_ratio).toBeLessThan(0.6);
  });

  it('keeps old errors (important) over routine chatter', () => {
    const messages = [
      user('List the orders'),
      call('c1', 'query_database', { query: 'SELECT * FROM orderz' }),
      result(
        'c1',
        'query_database',
        'ERROR: relation "orderz" does not exist (SQLSTATE 42P01)',
        true,
      ),
      assistant('The table is called orders; retrying.'),
      ...chatter(12),
    ];
    const request: CompactRequest = {
      messages,
      max_tokens: 700,
      recent_window: 2,
      options: { preserve_tool_results: false },
    };
    const response = compactMessages(request);
    expectBudget(response, request);
    expectPairsIntact(response);
    expect(has(response, 'relation "orderz" does not exist')).toBe(true);
    expect(has(response, 'SELECT * FROM orderz')).toBe(true);
    expect(response.summary.topics).toContain('database queries');
  });

  it('keeps a schema dump and a schema change as anchors, shortening a long dump', () => {
    const columns = Array.from(
      { length: 400 },
      (_, i) => `public\tcustomers\tcolumn_${i}\tinteger\tNOT NULL`,
    ).join('\n');
    const messages = [
      user('What does the customers table look like?'),
      call('s1', 'get_schema_info', { schema_name: 'public', table_name: 'customers' }),
      result('s1', 'get_schema_info', `schema\ttable\tcolumn\tdata_type\tnullable\n${columns}`),
      assistant('It has 400 integer columns.'),
      ...chatter(8),
      assistant('I ran ALTER TABLE customers ADD COLUMN vip boolean for you.'),
      ...chatter(8, 'z'),
    ];
    const request: CompactRequest = { messages, max_tokens: 2500, recent_window: 2 };
    const response = compactMessages(request);
    expectBudget(response, request);
    expectPairsIntact(response);
    expect(has(response, 'schema\ttable\tcolumn\tdata_type')).toBe(true);
    expect(has(response, 'characters left out by compaction')).toBe(true);
    expect(has(response, 'ALTER TABLE customers ADD COLUMN vip')).toBe(true);
    // Dropped chatter only: the anchors are all there.
    expect(response.compaction_info.anchor_count).toBe(4);
  });

  it('shortens a long tool result outside the window and keeps it with its call', () => {
    const rows = Array.from({ length: 3000 }, (_, i) => `${i}\tname ${i}\tperson${i}@example.com`);
    const messages = [
      user('Dump every customer'),
      call('d1', 'query_database', { query: 'SELECT id, name, email FROM customers' }),
      result('d1', 'query_database', `id\tname\temail\n${rows.join('\n')}`),
      assistant('That is 3000 customers.'),
      ...chatter(3),
    ];
    const request: CompactRequest = { messages, max_tokens: 3000, recent_window: 4 };
    const response = compactMessages(request);
    expectBudget(response, request);
    expectPairsIntact(response);
    const dump = texts(response).find((t) => t.startsWith('id\tname\temail'));
    expect(dump).toBeDefined();
    expect(dump!.length).toBeLessThan(3_000);
    expect(dump).toContain('characters left out by compaction');
    // Its tail survives too (the last rows).
    expect(dump).toContain('person2999@example.com');
  });

  it('keeps min_important_messages important units even when the window fills the budget', () => {
    const messages = [
      user('Start'),
      call('m1', 'query_database', { query: 'SELECT * FROM orderz' }),
      result('m1', 'query_database', 'relation "orderz" does not exist', true),
      ...chatter(10),
    ];
    const base: CompactRequest = {
      messages,
      max_tokens: 600,
      recent_window: 20,
      keep_anchors: false,
    };
    const withOne = compactMessages({ ...base, options: { min_important_messages: 1 } });
    const withNone = compactMessages({ ...base, options: { min_important_messages: 0 } });
    expectBudget(withOne, base);
    expectPairsIntact(withOne);
    expect(has(withOne, 'relation "orderz" does not exist')).toBe(true);
    expect(has(withNone, 'relation "orderz" does not exist')).toBe(false);
  });

  it('never splits a tool call from its result at the window edge', () => {
    const messages = [
      user('How many users?'),
      ...chatter(10),
      call('e1', 'query_database', { query: 'SELECT count(*) FROM users' }),
      result('e1', 'query_database', 'count\n42'),
      assistant('There are 42 users.'),
    ];
    // The window (2) starts at the result: the call comes with it.
    const request: CompactRequest = {
      messages,
      max_tokens: 400,
      recent_window: 2,
      options: { preserve_tool_results: false },
    };
    const response = compactMessages(request);
    expectBudget(response, request);
    expectPairsIntact(response);
    expect(response.messages.slice(-3)).toEqual(messages.slice(-3));

    // Pairs in OpenAI's form (tool_calls / tool_call_id) are kept together too.
    const openai = [
      user('How many users?'),
      ...chatter(10),
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'o1',
            type: 'function',
            function: { name: 'query_database', arguments: '{"query":"SELECT 1"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'o1', content: '1' },
      assistant('Done.'),
    ] as ChatMessage[];
    const second = compactMessages({ messages: openai, max_tokens: 400, recent_window: 2 });
    expect(second.messages.slice(-3)).toEqual(openai.slice(-3));
  });

  it('always keeps the current turn, shortened if it alone is over the budget', () => {
    const messages = [...chatter(3), user(`Explain this: ${'lorem ipsum '.repeat(2000)}`)];
    const response = compactMessages({ messages, max_tokens: 200, recent_window: 0 });
    expect(response.messages.at(-1)!.role).toBe('user');
    expect(fullText(response.messages.at(-1))).toContain('characters left out by compaction');
  });

  it('drops the first request too when keep_anchors is false', () => {
    const messages = [user('Show me the users table'), ...chatter(10)];
    const kept = compactMessages({ messages, max_tokens: 500, recent_window: 2 });
    const dropped = compactMessages({
      messages,
      max_tokens: 500,
      recent_window: 2,
      keep_anchors: false,
    });
    expect(has(kept, 'Show me the users table')).toBe(true);
    expect(has(dropped, 'Show me the users table')).toBe(false);
  });

  it('leaves summaries out without enable_summarization, and enhances them on request', () => {
    const messages = [
      user('Start'),
      call('x1', 'query_database', { query: 'SELECT * FROM invoices' }),
      result('x1', 'query_database', 'permission denied for table invoices', true),
      ...chatter(10),
    ];
    const plain = compactMessages({
      messages,
      max_tokens: 100,
      recent_window: 1,
      keep_anchors: false,
      options: {
        enable_summarization: false,
        min_important_messages: 0,
        preserve_tool_results: false,
      },
    });
    expect(texts(plain).some((t) => t.startsWith('[Compressed context'))).toBe(false);
    expect(plain.summary.tools).toContain('query_database');
    const enhanced = compactMessages({
      messages,
      max_tokens: 100,
      recent_window: 1,
      keep_anchors: false,
      options: { enable_llm_summarization: true, min_important_messages: 0 },
    });
    expect(enhanced.summary.description).toMatch(/Requests: "Start"/);
    expect(enhanced.summary.description).toMatch(/Actions: ran 1 query/);
    expect(enhanced.summary.description).toMatch(/Errors: permission denied for table invoices/);
    expect(enhanced.summary.tables).toContain('invoices');
  });

  it('meets the budget with the openai BPE counter', () => {
    const messages = [user('Show me the users table'), ...chatter(20)];
    const request: CompactRequest = {
      messages,
      max_tokens: 800,
      options: { token_counter_type: 'openai' },
    };
    expectBudget(compactMessages(request), request);
  });

  it('answers a repeated request from the cache (per caller) and reports analytics', () => {
    const cache = createCompactionCache();
    const analytics = createCompactionAnalytics();
    const request: CompactRequest = {
      messages: [user('Show me the users table'), ...chatter(10)],
      max_tokens: 500,
      options: { enable_caching: true, enable_analytics: true },
    };
    const first = compactMessages(request, { cache, analytics, scope: 'alice' });
    const second = compactMessages(request, { cache, analytics, scope: 'alice' });
    const other = compactMessages(request, { cache, analytics, scope: 'bob' });
    expect(first.compaction_info.cache_hit).toBe(false);
    expect(second.compaction_info.cache_hit).toBe(true);
    expect(other.compaction_info.cache_hit).toBe(false);
    expect(second.messages).toEqual(first.messages);
    expect(cache.size).toBe(2);
    expect(second.analytics).toMatchObject({ compactions: 2, cache_hits: 1 });
    expect(other.analytics!.compactions).toBe(3);
    expect(other.analytics!.tokens_saved).toBeGreaterThan(0);
    // Without enable_caching nothing is looked up or stored.
    const plain = compactMessages({ ...request, options: {} }, { cache, scope: 'alice' });
    expect(plain.compaction_info.cache_hit).toBeUndefined();
    expect(plain.analytics).toBeUndefined();
  });

  it('refuses bad requests with COMPACTION_INVALID', () => {
    const bad: unknown[] = [
      { messages: 'nope' },
      { messages: [{ content: 'no role' }] },
      { messages: [], max_tokens: 0 },
      { messages: [], recent_window: 1.5 },
      { messages: [], options: { token_counter_type: 'bpe' } },
      { messages: [], keep_anchors: 'yes' },
    ];
    for (const request of bad) {
      let error: unknown;
      try {
        compactMessages(request as CompactRequest);
      } catch (e) {
        error = e;
      }
      expect(isAppError(error) && error.code, JSON.stringify(request)).toBe(
        ErrorCodes.COMPACTION_INVALID,
      );
    }
  });
});
