// Rows as tab-separated text for models: a header line, NULL as an empty field, and
// tabs, newlines and backslashes escaped so every row stays on one line.

/** One value as a TSV field (NULL: empty). */
export function tsvValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value instanceof Date)
    text = Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  else if (Buffer.isBuffer(value)) text = `\\x${value.toString('hex')}`;
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  return text.replace(/[\\\t\n\r]/g, (c) =>
    c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r',
  );
}

export function toTsv(columns: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const lines = [columns.map(tsvValue).join('\t')];
  for (const row of rows) lines.push(row.map(tsvValue).join('\t'));
  return lines.join('\n');
}

/** JSON-safe form of a driver value for structuredContent. */
export function jsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date)
    return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (typeof value === 'bigint') return value.toString();
  return value;
}
