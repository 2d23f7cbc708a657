// Whether a result reads as a chart, and which: a series over time or an ordered number (line),
// or a few categories with a number each (bar). Anything else stays a table only.
import { isNumericType, isTemporalType, toNumber, cellText, type QueryResult } from './table-data';

export interface ChartSeries {
  name: string;
  values: number[];
}

export interface ChartShape {
  kind: 'line' | 'bar';
  xLabel: string;
  /** x labels as shown, in row order (line: ascending x). */
  labels: string[];
  series: ChartSeries[];
}

const MAX_BARS = 40;
const MAX_POINTS = 2_000;
const MAX_SERIES = 4;

export function chartShapeOf(result: QueryResult): ChartShape | null {
  const { columns, rows } = result;
  if (columns.length < 2 || rows.length < 2) return null;
  const numericColumns = columns
    .map((c, i) => ({ c, i }))
    .filter(
      ({ c, i }) =>
        isNumericType(c.type) && rows.every((r) => r[i] === null || toNumber(r[i]) !== null),
    );
  const temporal = columns.findIndex((c) => isTemporalType(c.type));
  const text = columns.findIndex(
    (c, i) => !isNumericType(c.type) && !isTemporalType(c.type) && i === 0,
  );

  let kind: ChartShape['kind'];
  let x: number;
  if (temporal !== -1) {
    kind = 'line';
    x = temporal;
  } else if (text === 0) {
    kind = 'bar';
    x = 0;
  } else if (
    numericColumns.length >= 2 &&
    numericColumns[0]!.i === 0 &&
    isIncreasing(rows.map((r) => toNumber(r[0])))
  ) {
    // An ordered number first (a year, a bucket) and values after it.
    kind = 'line';
    x = 0;
  } else {
    return null;
  }
  const ys = numericColumns.filter(({ i }) => i !== x).slice(0, kind === 'bar' ? 1 : MAX_SERIES);
  if (ys.length === 0) return null;
  if (kind === 'bar' && rows.length > MAX_BARS) return null;
  if (rows.length > MAX_POINTS) return null;

  let ordered = rows;
  if (kind === 'line' && temporal !== -1) {
    ordered = [...rows].sort((a, b) => cellText(a[x]).localeCompare(cellText(b[x])));
  }
  let labels = ordered.map((r) => shortLabel(cellText(r[x])));
  // Months as 2024-01-01, 2024-02-01, …: the day says nothing.
  if (labels.every((l) => /^\d{4}-\d{2}-01$/.test(l))) labels = labels.map((l) => l.slice(0, 7));
  return {
    kind,
    xLabel: columns[x]!.name,
    labels,
    series: ys.map(({ c, i }) => ({
      name: c.name,
      values: ordered.map((r) => toNumber(r[i]) ?? 0),
    })),
  };
}

function isIncreasing(values: (number | null)[]): boolean {
  for (let i = 1; i < values.length; i++) {
    const a = values[i - 1];
    const b = values[i];
    if (a === null || a === undefined || b === null || b === undefined || b <= a) return false;
  }
  return true;
}

/** Dates lose a midnight time part; long labels are cut. */
function shortLabel(text: string): string {
  const trimmed = text.replace(/[T ]00:00:00(\.0+)?([+-]00(:00)?|Z)?$/, '');
  return trimmed.length > 24 ? `${trimmed.slice(0, 23)}…` : trimmed;
}

/** Round tick values covering [min, max]: 1, 2 or 5 times a power of ten apart. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0];
  if (min === max) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.1;
    min -= pad;
    max += pad;
  }
  const raw = (max - min) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? power * 10;
  const start = Math.floor(min / step) * step;
  const ticks: number[] = [];
  for (let v = start; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toPrecision(12)));
  if (ticks[ticks.length - 1]! < max)
    ticks.push(Number((start + ticks.length * step).toPrecision(12)));
  return ticks;
}

export function formatNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e9) return `${(value / 1e9).toFixed(abs >= 1e10 ? 0 : 1)}B`;
  if (abs >= 1e6) return `${(value / 1e6).toFixed(abs >= 1e7 ? 0 : 1)}M`;
  if (abs >= 1e4) return `${(value / 1e3).toFixed(abs >= 1e5 ? 0 : 1)}k`;
  return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/\.?0+$/, '');
}
