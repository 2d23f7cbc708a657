import { describe, expect, it } from 'vitest';
import { classifyMessage } from './classify.js';

const opts = { preserveToolResults: true, preserveSchemaInfo: true };
const classOf = (message: unknown, first = false, options = opts): string =>
  classifyMessage(message, first, options).class;

const call = (name: string, input: unknown) => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: 'c1', toolName: name, input }],
});
const result = (name: string, text: string, isError = false) => ({
  role: 'tool',
  content: [
    {
      type: 'tool-result',
      toolCallId: 'c1',
      toolName: name,
      output: isError ? { type: 'error-text', value: text } : { type: 'text', value: text },
    },
  ],
});

describe('classifyMessage', () => {
  it('anchors: the first request, system text, corrections, standing instructions, DDL, schema', () => {
    expect(classOf({ role: 'user', content: 'Show me the users table' }, true)).toBe('anchor');
    expect(classOf({ role: 'system', content: 'You answer in French.' })).toBe('anchor');
    expect(classOf({ role: 'user', content: 'No, I meant the orders table' })).toBe('anchor');
    expect(classOf({ role: 'user', content: 'Actually, use the archive schema' })).toBe('anchor');
    expect(classOf({ role: 'user', content: 'From now on always limit to 10 rows' })).toBe(
      'anchor',
    );
    expect(
      classOf({ role: 'assistant', content: 'I ran ALTER TABLE users ADD COLUMN age int.' }),
    ).toBe('anchor');
    expect(classOf(result('get_schema_info', 'schema\ttable\tcolumn\tdata_type'))).toBe('anchor');
    expect(classOf(call('get_schema_info', { schema_name: 'public' }))).toBe('anchor');
  });

  it('schema facts are important, not anchors, without preserve_schema_info', () => {
    const options = { preserveToolResults: true, preserveSchemaInfo: false };
    expect(classOf(result('get_schema_info', 'schema\ttable\tcolumn'), false, options)).toBe(
      'important',
    );
  });

  it('important: errors, plans, tool steps (when tool results are preserved)', () => {
    const error = classifyMessage(
      result('query_database', 'relation "userz" does not exist', true),
      false,
      opts,
    );
    expect(error.class).toBe('important');
    expect(error.hasError).toBe(true);
    expect(error.reasons).toContain('error');
    expect(classOf(result('execute_explain', 'Seq Scan on users  (cost=0.00..1.10 rows=10)'))).toBe(
      'important',
    );
    expect(classOf(call('query_database', { query: 'SELECT count(*) FROM users' }))).toBe(
      'important',
    );
    const plain = { preserveToolResults: false, preserveSchemaInfo: true };
    expect(classOf(call('query_database', { query: 'SELECT 1' }), false, plain)).toBe('routine');
    // An error stays important whatever preserve_tool_results says.
    expect(
      classOf(result('query_database', 'permission denied for table x', true), false, plain),
    ).toBe('important');
  });

  it('contextual questions and explanations, routine replies, transient acknowledgements', () => {
    expect(classOf({ role: 'user', content: 'How many orders were placed in May?' })).toBe(
      'contextual',
    );
    expect(classOf({ role: 'assistant', content: 'word '.repeat(100) })).toBe('contextual');
    expect(classOf({ role: 'assistant', content: 'There are 42 orders.' })).toBe('routine');
    for (const ack of ['ok', 'Thanks!', 'thank you', 'got it.', 'great', '👍']) {
      expect(classOf({ role: 'user', content: ack }), ack).toBe('transient');
    }
    expect(classOf({ role: 'assistant', content: '' })).toBe('transient');
  });

  it('reads UI messages (tool parts carry call and result) and odd shapes without throwing', () => {
    const ui = {
      id: 'a1',
      role: 'assistant',
      parts: [
        {
          type: 'tool-query_database',
          toolCallId: 't1',
          state: 'output-available',
          input: { query: 'SELECT * FROM orderz' },
          output: { isError: true, text: 'relation "orderz" does not exist' },
        },
      ],
    };
    const verdict = classifyMessage(ui, false, opts);
    expect(verdict.class).toBe('important');
    expect(verdict.hasError).toBe(true);
    expect(classOf({ role: 'user', content: [{ type: 'image' }, 7, null] })).toBe('transient');
    expect(classOf(null)).toBe('transient');
  });
});
