// The text sent to PostgreSQL can differ from the caller's: under an access policy catalog
// relations become filtered subqueries and some calls get a NULL argument (catalog-access.ts).
// PostgreSQL's error positions count in the text it received; the caller must see them counted
// in the text they wrote, so every replacement is kept, in the caller's characters.

/** One replacement: the caller's characters [start, end) were sent as `length` characters. */
export interface Replacement {
  start: number;
  end: number;
  length: number;
}

/** The number of characters (code points, as PostgreSQL counts them) in `text`. */
export function characters(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * A 1-based position in the text sent, counted in the caller's text instead. A position inside
 * an inserted text points at the start of what it replaced.
 */
export function callerPosition(position: number, replacements: readonly Replacement[]): number {
  const at = position - 1;
  let shift = 0;
  for (const r of replacements) {
    const sentStart = r.start + shift;
    if (at < sentStart) break;
    if (at < sentStart + r.length) return r.start + 1;
    shift += r.length - (r.end - r.start);
  }
  return at - shift + 1;
}

/**
 * The driver's error with its position counted in the caller's query: `prefixLength` characters
 * were sent ahead of the statement (EXPLAIN …), and the statement was sent with `replacements`.
 * A position inside the prefix points at nothing the caller wrote, and is dropped.
 */
export function positionInQuery(
  error: unknown,
  prefixLength: number,
  replacements: readonly Replacement[] = [],
): unknown {
  const e = error as { position?: unknown } | null;
  if (e === null || typeof e !== 'object' || typeof e.position !== 'string') return error;
  const position = Number(e.position) - prefixLength;
  if (Number.isInteger(position) && position > 0)
    e.position = String(callerPosition(position, replacements));
  else delete e.position;
  return error;
}
