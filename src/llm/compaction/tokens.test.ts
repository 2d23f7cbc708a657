import { describe, expect, it } from 'vitest';
import { countTextTokens, estimateTokens, messageTokens } from './tokens.js';

describe('token counting', () => {
  it('counts openai tokens with the real o200k_base BPE', () => {
    // Known o200k_base counts: "hello world" is 2 tokens; a SQL statement splits finer.
    expect(countTextTokens('hello world', 'openai')).toBe(2);
    expect(countTextTokens('', 'openai')).toBe(0);
    const sql = "SELECT id, name, email FROM users WHERE created_at > now() - interval '1 day'";
    const bpe = countTextTokens(sql, 'openai');
    expect(bpe).toBeGreaterThan(10);
    expect(bpe).toBeLessThan(sql.length);
  });

  it('estimates the others from the length, each with its documented ratio', () => {
    const text = 'x'.repeat(700);
    expect(countTextTokens(text, 'generic')).toBe(175);
    expect(countTextTokens(text, 'anthropic')).toBe(200);
    expect(countTextTokens(text, 'ollama')).toBe(185);
  });

  it('adds a per-message overhead and counts tool calls and results', () => {
    expect(messageTokens({ role: 'user', content: '' }, 'generic')).toBe(4);
    expect(messageTokens({ role: 'user', content: '' }, 'anthropic')).toBe(5);
    const call = {
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'c1',
          toolName: 'query_database',
          input: { query: 'SELECT 1' },
        },
      ],
    };
    const result = {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'query_database',
          output: { type: 'text', value: 'a'.repeat(400) },
        },
      ],
    };
    expect(messageTokens(call, 'generic')).toBeGreaterThan(8);
    expect(messageTokens(result, 'generic')).toBe(104);
    expect(estimateTokens([call, result], 'generic')).toBe(
      messageTokens(call, 'generic') + messageTokens(result, 'generic'),
    );
  });

  it('counts UI messages (parts) and ignores what is not a message', () => {
    const ui = { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'abcd'.repeat(10) }] };
    expect(messageTokens(ui, 'generic')).toBe(14);
    expect(estimateTokens([null, 42, 'text'], 'generic')).toBe(12);
  });

  it('stays bounded on a huge text (the BPE reads a prefix and scales)', () => {
    const huge = 'SELECT a FROM b; '.repeat(40_000);
    const started = performance.now();
    const count = countTextTokens(huge, 'openai');
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(count).toBeGreaterThan(huge.length / 8);
    expect(count).toBeLessThan(huge.length);
  });
});
