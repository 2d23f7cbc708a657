import { describe, expect, it } from 'vitest';
import { createStyle } from './style.js';
import { MIN_COLUMN_WIDTH, cellText, fitWidths, renderRecord, renderTable } from './table.js';
import { displayWidth, stripAnsi, truncate } from './width.js';

const plain = createStyle(false);
const colour = createStyle(true);

describe('fitWidths', () => {
  it('keeps natural widths that fit', () => {
    expect(fitWidths([4, 10, 2], 40)).toEqual([4, 10, 2]);
  });

  it('shrinks the widest columns first and uses the whole line', () => {
    // 3 columns: 6 cells of separators, 34 for the columns.
    const widths = fitWidths([4, 50, 30], 40);
    expect(widths[0]).toBe(4);
    expect(widths.reduce((a, b) => a + b, 0) + 6).toBe(40);
    expect(widths[1]! >= widths[2]! - 1).toBe(true);
    expect(Math.max(...widths)).toBeLessThan(30);
  });

  it('never goes below the minimum width', () => {
    expect(fitWidths([20, 20, 20, 20], 10)).toEqual(Array(4).fill(MIN_COLUMN_WIDTH));
    expect(fitWidths([1, 20], 5)).toEqual([1, MIN_COLUMN_WIDTH]);
  });
});

describe('renderTable', () => {
  const wide = {
    columns: [
      { name: 'id', type: 'int4' },
      { name: 'name', type: 'text' },
      { name: 'description', type: 'text' },
    ],
    rows: [
      [1, 'Ada Lovelace', 'Wrote the first program for the Analytical Engine, in 1843.'],
      [22, 'Grace Hopper', null],
      [333, 'Edsger Dijkstra', 'Shortest paths;\nsemaphores'],
    ],
  };

  it('fits every line to the width, numbers rows and right-aligns numbers', () => {
    const lines = renderTable(wide, { width: 60, style: plain });
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(60);
    expect(lines[0]).toMatch(/^# │ id  │ name +│ description/);
    expect(lines[1]).toMatch(/^──┼─────┼─/);
    expect(lines[2]).toMatch(/^1 │   1 │ Ada Lovelace +│ Wrote the first.*…$/);
    expect(lines[3]).toMatch(/^2 │  22 │ Grace Hopper +│ NULL$/);
    expect(lines[4]).toContain('Shortest paths;↵semaphores');
  });

  it('keeps lines within a narrow terminal, with colour codes not counted', () => {
    const lines = renderTable(wide, { width: 30, style: colour });
    expect(lines.some((line) => line.includes('\u001b['))).toBe(true);
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(30);
    expect(stripAnsi(lines[2]!)).toContain('…');
  });

  it('leaves out columns that cannot fit even at their narrowest, and says so', () => {
    const columns = Array.from({ length: 12 }, (_, i) => ({ name: `c${i}` }));
    const rows = [columns.map((_, i) => `value ${i}`)];
    const lines = renderTable({ columns, rows }, { width: 30, style: plain });
    for (const line of lines.slice(0, -1)) expect(displayWidth(line)).toBeLessThanOrEqual(30);
    expect(lines[lines.length - 1]).toMatch(/\(\d+ more columns; \/expand N shows row N whole\)/);
  });

  it('draws at most maxRows rows and counts the rest', () => {
    const rows = Array.from({ length: 10 }, (_, i) => [i]);
    const lines = renderTable(
      { columns: [{ name: 'n' }], rows },
      { width: 40, style: plain, maxRows: 3 },
    );
    expect(lines).toHaveLength(2 + 3 + 1);
    expect(lines[5]).toContain('7 more rows');
  });

  it('counts wide characters as two cells', () => {
    const lines = renderTable(
      { columns: [{ name: 'city' }], rows: [['東京都千代田区丸の内一丁目']] },
      { width: 16, style: plain },
    );
    for (const line of lines) expect(displayWidth(line)).toBeLessThanOrEqual(16);
  });
});

describe('cells and records', () => {
  it('spells out NULL and objects', () => {
    expect(cellText(null)).toBe('NULL');
    expect(cellText({ a: 1 })).toBe('{"a":1}');
    expect(cellText('a\tb')).toBe('a b');
  });

  it('shows one row whole for /expand', () => {
    const lines = renderRecord(
      { columns: [{ name: 'id' }, { name: 'description' }], rows: [[7, 'x'.repeat(200)]] },
      0,
      plain,
    );
    expect(lines[0]).toBe('id          │ 7');
    expect(lines[1]).toBe(`description │ ${'x'.repeat(200)}`);
  });

  it('truncates with an ellipsis, keeping escape codes', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abc', 4)).toBe('abc');
    expect(stripAnsi(truncate(colour.bold('abcdef'), 4))).toBe('abc…');
  });
});
