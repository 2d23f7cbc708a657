// Result rows as a table that fits the terminal: each column as wide as its widest cell until the
// line would be too long, then the widest columns give way first (their cells end in …). Rows are
// numbered so /expand N can show one of them whole.
import type { Style } from './style.js';
import { displayWidth, padEnd, padStart, truncate } from './width.js';

export interface TableColumn {
  name: string;
  type?: string;
}

export interface TableInput {
  columns: readonly TableColumn[];
  rows: readonly (readonly unknown[])[];
}

export interface TableOptions {
  /** Terminal columns available for a line. */
  width: number;
  style: Style;
  /** At most this many rows are drawn (the rest are counted under the table). */
  maxRows?: number;
  /** A leading # column with each row's number (default true). */
  numbered?: boolean;
}

/** The narrowest a column is squeezed to: two characters and the ellipsis. */
export const MIN_COLUMN_WIDTH = 3;
const SEPARATOR = ' │ ';
const NUMERIC =
  /^(int[248]?|integer|smallint|bigint|numeric|decimal|real|double precision|float[48]?|money|oid)$/i;

/** One cell as one line of text: NULL spelled out, objects as JSON, line breaks as ↵. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return value.replace(/\r?\n/g, '↵').replace(/\t/g, ' ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * The widths to draw columns of `natural` widths with in `available` cells (separators
 * included): unchanged when they fit; else every column is capped at the one width that makes
 * them fit, never below MIN_COLUMN_WIDTH (or its natural width when that is less).
 */
export function fitWidths(natural: readonly number[], available: number): number[] {
  const seps = SEPARATOR.length * Math.max(0, natural.length - 1);
  const budget = available - seps;
  const total = natural.reduce((a, b) => a + b, 0);
  if (total <= budget) return [...natural];
  const floor = (w: number): number => Math.min(w, MIN_COLUMN_WIDTH);
  const sumAt = (cap: number): number =>
    natural.reduce((sum, w) => sum + Math.max(floor(w), Math.min(w, cap)), 0);
  // The largest cap that fits, by bisection (widths are small integers).
  let low = MIN_COLUMN_WIDTH;
  let high = Math.max(...natural);
  if (sumAt(low) > budget) return natural.map(floor);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (sumAt(mid) <= budget) low = mid;
    else high = mid - 1;
  }
  const widths = natural.map((w) => Math.max(floor(w), Math.min(w, low)));
  // The cells left over go to the columns that were cut, left to right.
  let spare = budget - widths.reduce((a, b) => a + b, 0);
  for (let i = 0; i < widths.length && spare > 0; i++) {
    if (widths[i]! < natural[i]!) {
      widths[i]! += 1;
      spare -= 1;
    }
  }
  return widths;
}

/** The table's lines, none longer than `options.width` cells (as far as columns can shrink). */
export function renderTable(input: TableInput, options: TableOptions): string[] {
  const { style } = options;
  const maxRows = options.maxRows ?? Number.POSITIVE_INFINITY;
  const shown = input.rows.slice(0, maxRows);
  const numbered = options.numbered ?? true;
  const numberWidth = numbered ? String(Math.max(1, shown.length)).length : 0;
  // Columns that cannot fit even at their narrowest are left out (and said so).
  const room = options.width - (numbered ? numberWidth + SEPARATOR.length : 0);
  let count = input.columns.length;
  while (count > 1 && count * MIN_COLUMN_WIDTH + SEPARATOR.length * (count - 1) > room) count--;
  const columns = input.columns.slice(0, count);
  const texts = shown.map((row) => columns.map((_, i) => cellText(row[i])));
  const natural = columns.map((column, i) =>
    Math.max(displayWidth(column.name), ...texts.map((cells) => displayWidth(cells[i]!))),
  );
  const widths = fitWidths(natural, room);
  const numeric = columns.map((c) => NUMERIC.test(c.type ?? ''));
  const sep = style.dim(SEPARATOR);
  const lines: string[] = [];
  const lead = (cell: string): string[] => (numbered ? [cell] : []);
  lines.push(
    [
      ...lead(padStart('#', numberWidth)),
      ...columns.map((c, i) => style.bold(padEnd(truncate(c.name, widths[i]!), widths[i]!))),
    ].join(sep),
  );
  const rule = [...(numbered ? [numberWidth] : []), ...widths].map((w) => '─'.repeat(w));
  lines.push(style.dim(rule.join('─┼─')));
  shown.forEach((row, r) => {
    const cells = texts[r]!.map((text, i) => {
      const cut = truncate(text, widths[i]!);
      const styled = row[i] === null || row[i] === undefined ? style.dim(cut) : cut;
      return numeric[i] ? padStart(styled, widths[i]!) : padEnd(styled, widths[i]!);
    });
    lines.push(
      [...lead(style.dim(padStart(String(r + 1), numberWidth))), ...cells].join(sep).trimEnd(),
    );
  });
  const notes: string[] = [];
  if (input.rows.length > shown.length) notes.push(`${input.rows.length - shown.length} more rows`);
  if (count < input.columns.length) notes.push(`${input.columns.length - count} more columns`);
  if (notes.length > 0) {
    const hint = numbered ? '; /expand N shows row N whole' : '';
    lines.push(style.dim(`(${notes.join(', ')}${hint})`));
  }
  return lines;
}

/** Row `index` (0-based) with every column whole, one `name │ value` line per column. */
export function renderRecord(input: TableInput, index: number, style: Style): string[] {
  const row = input.rows[index];
  if (!row) return [];
  const nameWidth = Math.max(...input.columns.map((c) => displayWidth(c.name)));
  return input.columns.map((column, i) => {
    const value = row[i];
    const text =
      value === null || value === undefined
        ? style.dim('NULL')
        : typeof value === 'object'
          ? JSON.stringify(value, null, 2)
          : String(value);
    const indent = ' '.repeat(nameWidth + SEPARATOR.length);
    const [first, ...rest] = text.split('\n');
    return [
      `${style.bold(padEnd(column.name, nameWidth))}${style.dim(SEPARATOR)}${first}`,
      ...rest.map((line) => indent + line),
    ].join('\n');
  });
}
