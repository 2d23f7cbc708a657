// query_database, stage "format": column names and types (type names looked up on the call's
// own connection when not known), masked values replaced, and the answer as TSV for the model
// plus structuredContent for programs.
import type { ToolResult } from '../../core/content.js';
import type { Lookup } from '../../db/call-session.js';
import type { PipelineResult } from '../../db/pipeline.js';
import { MASK } from '../access-policy.js';
import { screenValue, withheldNote, type Tally } from '../output-screen.js';
import { jsonValue, tsvValue } from '../tsv.js';
import type { Masks } from './query-policy.js';
import { typeNames } from './type-names.js';

export interface Column {
  name: string;
  type: string;
}

export interface FormatOptions {
  /** The database's name, first line of the text. */
  database: string;
  offset: number;
  /** The byte cap, named when it cut the result. */
  maxResultBytes: number;
  /** The statement writes: the answer says how many rows it wrote. */
  writes?: boolean;
}

/** Command tags whose count is the rows the statement wrote (INSERT's is "INSERT 0 n"). */
const WRITE_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/** The result's columns, and which of them are masked. */
async function describeColumns(
  lookup: Lookup,
  result: PipelineResult,
  masks: Masks,
): Promise<{ columns: Column[]; masked: Set<number> }> {
  const names = await typeNames(
    lookup,
    result.fields.map((f) => f.dataTypeID),
  );
  const masked = new Set<number>();
  result.fields.forEach((f, i) => {
    if (masks.attrs.has(`${f.tableID}:${f.columnID}`)) masked.add(i);
    // A computed column over a masked one (lower(email)) would show what the mask hides; so
    // would a whole-row value, which PostgreSQL reports as column 0 of its table.
    else if (masks.referenced && (f.tableID === 0 || f.columnID === 0)) {
      const known = masks.computed !== null && masks.computed.length === result.fields.length;
      if (!known || masks.computed![i] !== false) masked.add(i);
    }
  });
  return {
    columns: result.fields.map((f) => ({
      name: f.name,
      type: names.get(f.dataTypeID) ?? `oid ${f.dataTypeID}`,
    })),
    masked,
  };
}

/**
 * The answer to a statement. One pass over the rows builds both forms: each value is masked or
 * screened once, written into its TSV line, and its JSON-safe form put back in place, so the
 * rows read off the wire become the structured content's rows (`result.rows` is used up: the
 * caller must not read it afterwards) and the result is never held as a second set of rows.
 */
export async function formatResult(
  lookup: Lookup,
  result: PipelineResult,
  masks: Masks,
  options: FormatOptions,
): Promise<ToolResult> {
  const { columns, masked } = await describeColumns(lookup, result, masks);
  const withheld: Tally = { count: 0 };
  const rows = result.rows;
  const lines = columns.length === 0 ? [] : new Array<string>(rows.length + 1);
  if (columns.length > 0) {
    lines[0] = columns.map((c) => tsvValue(c.name)).join('\t');
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]!;
      const fields = new Array<string>(row.length);
      for (let i = 0; i < row.length; i++) {
        const v = row[i];
        const shown = masked.has(i) && v !== null ? MASK : screenValue(v, withheld);
        fields[i] = tsvValue(shown);
        row[i] = jsonValue(shown);
      }
      // One flat string per line (joined), not a chain of concatenations held until the end.
      lines[r + 1] = fields.join('\t');
    }
  }
  const answered = answer(columns, lines.join('\n'), rows, result, options);
  // The text is TSV for the model, not JSON: the note goes on its last line.
  const first = answered.content[0];
  if (withheld.count > 0 && first?.type === 'text')
    first.text += `\n${withheldNote(withheld.count)}`;
  return answered;
}

/** What to say about the rows not shown: where the next page starts (null: a write's). */
function more(nextOffset: number | null): string {
  return nextOffset === null
    ? 'the write returned more rows than are shown. It ran once: running it again, with an offset or not, would write again.'
    : `more available — use offset=${nextOffset}.`;
}

/** `tsv`: the rows as TSV, header first; `rows`: the same rows in their JSON-safe form. */
function answer(
  columns: Column[],
  tsv: string,
  rows: unknown[][],
  result: PipelineResult,
  { database, offset, maxResultBytes, writes = false }: FormatOptions,
): ToolResult {
  const truncated = result.truncatedBy !== null;
  // A write's RETURNING rows past the page cannot be fetched: asking again runs the write again.
  const nextOffset = truncated && !writes ? offset + rows.length : null;
  const lines = [`Database: ${database}`, ''];
  if (columns.length === 0) {
    lines.push(`${result.command ?? 'OK'}${result.rowCount !== null ? ` ${result.rowCount}` : ''}`);
  } else {
    lines.push(tsv, '');
    const shown = `${rows.length} row${rows.length === 1 ? '' : 's'}${offset > 0 ? ` (from offset ${offset})` : ''}`;
    const cut = result.valuesCut
      ? `; its long values are cut to fit the ${maxResultBytes}-byte result cap (select a part: left(column, n), length(column))`
      : '';
    if (!truncated) {
      lines.push(offset > 0 || cut ? `${shown}${cut}; no more rows.` : `${shown}.`);
    } else {
      const why =
        result.truncatedBy === 'bytes' && !cut
          ? ` (stopped at the ${maxResultBytes}-byte result cap)`
          : '';
      lines.push(`${shown}${cut}${why}; ${more(nextOffset)}`);
    }
  }
  return {
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: {
      columns,
      rows,
      rowCount: rows.length,
      truncated,
      // truncated says whether rows are missing; a row kept with its long values cut says so too.
      ...(result.valuesCut ? { valuesCut: true } : {}),
      nextOffset,
      // A statement without a result set (a write) reports its command tag instead.
      ...(columns.length === 0 ? { command: result.command } : {}),
      // rowCount counts the rows returned (a page of RETURNING, none without it); what a write
      // wrote is its command tag's count. Other tags count something else: a SELECT's rows
      // under a data-modifying WITH, or nothing (DDL).
      ...(writes
        ? {
            rowsAffected:
              result.command !== null && WRITE_COMMANDS.has(result.command)
                ? result.rowCount
                : null,
          }
        : {}),
    },
  };
}
