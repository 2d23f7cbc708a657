import { describe, expect, it } from 'vitest';
import { renderMarkdown, splitSettled } from './markdown.js';
import { createStyle } from './style.js';
import { displayWidth, stripAnsi } from './width.js';

const plain = { width: 60, style: createStyle(false) };
const colour = { width: 60, style: createStyle(true) };

describe('renderMarkdown', () => {
  it('keeps the structure without colour', () => {
    const out = renderMarkdown(
      '# Orders\n\nThere are **3** late orders in `orders`:\n\n- one\n- two\n\n1. first\n2. second\n\n> careful\n\n```sql\nSELECT 1;\n```',
      plain,
    );
    expect(out).toBe(
      [
        '# Orders',
        '',
        'There are 3 late orders in `orders`:',
        '',
        '• one',
        '• two',
        '',
        '1. first',
        '2. second',
        '',
        '│ careful',
        '',
        '  sql',
        '  SELECT 1;',
      ].join('\n'),
    );
    expect(out).not.toContain('\u001b[');
  });

  it('styles with ANSI codes when colour is on', () => {
    const out = renderMarkdown('Some **bold**, *italic* and `code`.', colour);
    expect(out).toContain('\u001b[1mbold\u001b[22m');
    expect(out).toContain('\u001b[3mitalic\u001b[23m');
    expect(out).toContain('\u001b[36mcode\u001b[39m');
    expect(stripAnsi(out)).toBe('Some bold, italic and code.');
  });

  it('wraps paragraphs at the width and draws tables fitted to it', () => {
    const long = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');
    const table = '| name | note |\n|---|---|\n| a | ' + 'x'.repeat(100) + ' |';
    const out = renderMarkdown(`${long}\n\n${table}`, { ...plain, width: 40 });
    for (const line of out.split('\n')) expect(displayWidth(line)).toBeLessThanOrEqual(40);
    expect(out).toMatch(/name │ note/);
    expect(out).toContain('…');
  });

  it('shows links with their address, and task lists', () => {
    const out = renderMarkdown(
      'See [the docs](https://example.com).\n\n- [x] done\n- [ ] todo',
      plain,
    );
    expect(out).toContain('See the docs (https://example.com).');
    expect(out).toContain('[x] done');
    expect(out).toContain('[ ] todo');
  });
});

describe('splitSettled', () => {
  it('holds back the block still being written', () => {
    expect(splitSettled('First paragraph.\n\nSecond, still')).toEqual({
      settled: 'First paragraph.\n\n',
      pending: 'Second, still',
    });
    expect(splitSettled('only one block')).toEqual({ settled: '', pending: 'only one block' });
  });

  it('never settles an unclosed code block', () => {
    const { settled, pending } = splitSettled('Here:\n\n```sql\nSELECT 1\n');
    expect(settled).toBe('Here:\n\n');
    expect(pending).toBe('```sql\nSELECT 1\n');
  });
});
