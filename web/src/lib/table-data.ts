// Result rows as the query_database tool returns them, and what a table does with them:
// show a cell, sort, copy as tab-separated text, download as CSV (RFC 4180).

export interface ResultColumn {
  name: string;
  type: string;
}

export interface QueryResult {
  columns: ResultColumn[];
  rows: unknown[][];
  rowCount?: number;
  truncated?: boolean;
  nextOffset?: number | null;
  command?: string;
}

/** The tool output's structuredContent, when it is a query result. */
export function asQueryResult(value: unknown): QueryResult | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  if (!Array.isArray(v['columns']) || !Array.isArray(v['rows'])) return null;
  const columns = (v['columns'] as unknown[]).map((c, i) => {
    if (typeof c === 'string') return { name: c, type: 'text' };
    const r = (c ?? {}) as Record<string, unknown>;
    return {
      name: typeof r['name'] === 'string' ? r['name'] : `column ${i + 1}`,
      type: typeof r['type'] === 'string' ? r['type'] : 'text',
    };
  });
  const rows = (v['rows'] as unknown[]).map((row) =>
    Array.isArray(row)
      ? row
      : row && typeof row === 'object'
        ? columns.map((c) => (row as Record<string, unknown>)[c.name])
        : [row],
  );
  return {
    columns,
    rows,
    ...(typeof v['rowCount'] === 'number' ? { rowCount: v['rowCount'] } : {}),
    truncated: v['truncated'] === true,
    nextOffset: typeof v['nextOffset'] === 'number' ? v['nextOffset'] : null,
    ...(typeof v['command'] === 'string' ? { command: v['command'] } : {}),
  };
}

export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    return String(value);
  }
  return JSON.stringify(value);
}

const NUMERIC =
  /^(smallint|integer|bigint|int[248]?|numeric|decimal|real|double precision|float[48]?|money|oid)\b/i;
const TEMPORAL = /^(date|timestamp|timestamptz|time)\b/i;

export const isNumericType = (type: string): boolean => NUMERIC.test(type.trim());
export const isTemporalType = (type: string): boolean => TEMPORAL.test(type.trim());

export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value.replace(/[$,]/g, ''));
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export type SortDirection = 'ascending' | 'descending';

/** Rows sorted by one column: numbers as numbers, the rest by locale; empty cells last. */
export function sortRows(
  rows: readonly unknown[][],
  column: number,
  type: string,
  direction: SortDirection,
): unknown[][] {
  const numeric = isNumericType(type);
  const sign = direction === 'ascending' ? 1 : -1;
  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });
  return rows
    .map((row, index) => ({ row, index }))
    .sort((a, b) => {
      const x = a.row[column];
      const y = b.row[column];
      const xEmpty = x === null || x === undefined;
      const yEmpty = y === null || y === undefined;
      if (xEmpty || yEmpty) return xEmpty === yEmpty ? a.index - b.index : xEmpty ? 1 : -1;
      let order: number;
      if (numeric) order = (toNumber(x) ?? 0) - (toNumber(y) ?? 0);
      else order = collator.compare(cellText(x), cellText(y));
      return order === 0 ? a.index - b.index : sign * order;
    })
    .map(({ row }) => row);
}

/**
 * A cell a spreadsheet would run as a formula (it starts with = + - @, a tab or a carriage
 * return) gets a leading single quote, so opening the CSV or pasting the copied rows shows the
 * text instead of running it (CSV injection). A plain number such as -12.5 is a number to the
 * spreadsheet, and stays as is. Both toCsv and toTsv go through it.
 */
function defused(text: string): string {
  if (!/^[=+\-@\t\r]/.test(text)) return text;
  return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) ? text : `'${text}`;
}

function csvField(raw: string): string {
  const text = defused(raw);
  return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(result: QueryResult): string {
  const lines = [result.columns.map((c) => csvField(c.name)).join(',')];
  for (const row of result.rows) {
    lines.push(result.columns.map((_, i) => csvField(cellText(row[i]))).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Tab-separated, as spreadsheets paste it; tabs and newlines inside cells become spaces, and a
 * cell that would run as a formula is defused as in the CSV.
 */
export function toTsv(result: QueryResult): string {
  const clean = (text: string) => defused(text).replace(/[\t\r\n]+/g, ' ');
  const lines = [result.columns.map((c) => clean(c.name)).join('\t')];
  for (const row of result.rows) {
    lines.push(result.columns.map((_, i) => clean(cellText(row[i]))).join('\t'));
  }
  return lines.join('\n');
}
