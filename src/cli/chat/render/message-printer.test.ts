import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { createMessagePrinter } from './message-printer.js';
import { createStyle } from './style.js';

const printer = () => {
  let out = '';
  const p = createMessagePrinter({
    write: (text) => void (out += text),
    width: () => 60,
    style: createStyle(false),
  });
  return { p, out: () => out };
};

const assistant = (parts: UIMessage['parts']): UIMessage => ({ id: 'a', role: 'assistant', parts });

describe('createMessagePrinter', () => {
  it('prints Markdown a block at a time as the text streams, never twice', () => {
    const { p, out } = printer();
    p.update(assistant([{ type: 'text', text: 'First para', state: 'streaming' }]), 1);
    expect(out()).toBe('');
    p.update(
      assistant([{ type: 'text', text: 'First paragraph.\n\nSecond', state: 'streaming' }]),
      1,
    );
    expect(out()).toBe('First paragraph.\n');
    p.update(
      assistant([{ type: 'text', text: 'First paragraph.\n\nSecond one.', state: 'done' }]),
      1,
    );
    expect(out()).toBe('First paragraph.\n\nSecond one.\n');
  });

  it('shows the SQL of a step when its input is complete and the rows when they come', () => {
    const { p, out } = printer();
    const input = { query: 'SELECT n FROM t' };
    p.update(
      assistant([
        { type: 'tool-query_database', toolCallId: 'c', state: 'input-streaming', input: {} },
      ]),
      1,
    );
    expect(out()).toBe('');
    p.update(
      assistant([
        { type: 'tool-query_database', toolCallId: 'c', state: 'input-available', input },
      ]),
      1,
    );
    expect(out()).toBe('▸ query_database\n  SELECT n FROM t\n');
    p.update(
      assistant([
        {
          type: 'tool-query_database',
          toolCallId: 'c',
          state: 'output-available',
          input,
          output: {
            isError: false,
            text: '',
            structuredContent: { columns: [{ name: 'n', type: 'int4' }], rows: [[7]], rowCount: 1 },
          },
        },
        { type: 'text', text: 'Seven.', state: 'done' },
      ]),
      1,
    );
    expect(out()).toBe(
      '▸ query_database\n  SELECT n FROM t\n\n# │ n\n──┼──\n1 │ 7\n(1 row)\n\nSeven.\n',
    );
    expect(p.lastTable()?.rows).toEqual([[7]]);
  });

  it('shows a failed step as one line and says what the spinner waits on', () => {
    const { p, out } = printer();
    const running = assistant([
      { type: 'tool-count_rows', toolCallId: 'c', state: 'input-available', input: { table: 't' } },
    ]);
    expect(p.activity(running)).toBe('running count_rows…');
    p.update(running, 1);
    p.update(
      assistant([
        {
          type: 'tool-count_rows',
          toolCallId: 'c',
          state: 'output-available',
          input: { table: 't' },
          output: { isError: true, text: 'relation "t" does not exist\nLINE 1' },
        },
      ]),
      1,
    );
    expect(out()).toBe('▸ count_rows {"table":"t"}\n\n✗ relation "t" does not exist\n');
  });
});
