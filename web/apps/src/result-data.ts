// A tool result as rows: query_database's columns and rows as they are (web/src/lib/table-data),
// an @mcp routine's `items` (objects, or plain values) as columns named by their keys, typed by
// the tool's output schema (a numeric is a number or a decimal string there) or else by what the
// values look like, so sorting and the chart treat numbers and dates as such.
import { asQueryResult, type QueryResult, type ResultColumn } from '../../src/lib/table-data';

const DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}(:?\d{2})?|Z)?)?$/;

function typeOf(values: unknown[]): string {
  const present = values.filter((v) => v !== null && v !== undefined);
  if (present.length === 0) return 'text';
  if (present.every((v) => typeof v === 'number')) return 'numeric';
  if (present.every((v) => typeof v === 'string' && DATE.test(v))) {
    return present.some((v) => (v as string).length > 10) ? 'timestamp' : 'date';
  }
  return 'text';
}

type Schema = Record<string, unknown>;

/** The column type a JSON Schema of a routine's result value stands for, if it says. */
function schemaType(schema: unknown): string | null {
  if (!schema || typeof schema !== 'object') return null;
  const s = schema as Schema;
  const types = ([] as unknown[]).concat(s['type'] ?? []);
  if (types.includes('integer') || types.includes('number')) return 'numeric';
  const formats = [s, ...((s['anyOf'] as Schema[] | undefined) ?? [])].map((x) => x['format']);
  if (formats.includes('date-time')) return 'timestamp';
  if (formats.includes('date')) return 'date';
  return null;
}

/** The schema of one item of a routine's `items`, from the tool's outputSchema. */
function itemSchema(outputSchema: unknown): Schema | null {
  const items = (outputSchema as Schema | undefined)?.['properties'] as Schema | undefined;
  const item = (items?.['items'] as Schema | undefined)?.['items'];
  return item && typeof item === 'object' ? (item as Schema) : null;
}

export function resultOf(structured: unknown, outputSchema?: unknown): QueryResult | null {
  const direct = asQueryResult(structured);
  if (direct) return direct;
  if (!structured || typeof structured !== 'object') return null;
  const items = (structured as Record<string, unknown>)['items'];
  if (!Array.isArray(items)) return null;
  const truncated = (structured as Record<string, unknown>)['truncated'] === true;
  const objects = items.every((i) => i !== null && typeof i === 'object' && !Array.isArray(i));
  const item = itemSchema(outputSchema);
  if (!objects || items.length === 0) {
    const column: ResultColumn = { name: 'value', type: schemaType(item) ?? typeOf(items) };
    return { columns: [column], rows: items.map((v) => [v]), truncated, nextOffset: null };
  }
  const names = [...new Set(items.flatMap((i) => Object.keys(i as object)))];
  const rows = items.map((i) => names.map((n) => (i as Record<string, unknown>)[n] ?? null));
  const properties = (item?.['properties'] ?? {}) as Schema;
  const columns = names.map((name, c) => ({
    name,
    type: schemaType(properties[name]) ?? typeOf(rows.map((r) => r[c])),
  }));
  return { columns, rows, truncated, nextOffset: null };
}
