// Reads a statement's rows through a cursor with row and byte caps, so memory stays
// bounded whatever the query returns; limit+1 rows tell whether more exist.
import Cursor from 'pg-cursor';
import type pg from 'pg';
import { PG_TYPES } from '../../db/database.js';

export interface ReadOptions {
  sql: string;
  params: unknown[];
  offset: number;
  limit: number;
  maxBytes: number;
  signal?: AbortSignal;
}

export interface ReadResult {
  columns: { name: string; typeOid: number }[];
  rows: unknown[][];
  /** More rows exist beyond offset+rows (or the byte cap stopped the read). */
  truncated: boolean;
  truncatedBy: 'rows' | 'bytes' | null;
  /** Statements without a result set (a write) report their command tag and count. */
  command: string | null;
  rowCount: number | null;
}

const BATCH = 500;

function approximateBytes(row: unknown[]): number {
  let bytes = 2;
  for (const v of row) {
    if (v === null || v === undefined) bytes += 1;
    else if (typeof v === 'string') bytes += v.length + 1;
    else if (Buffer.isBuffer(v)) bytes += v.length * 2 + 3;
    else if (typeof v === 'object' && !(v instanceof Date)) bytes += JSON.stringify(v).length + 1;
    else bytes += 12;
  }
  return bytes;
}

export async function readRows(client: pg.PoolClient, options: ReadOptions): Promise<ReadResult> {
  const cursor = client.query(
    new Cursor(options.sql, options.params, { rowMode: 'array', types: PG_TYPES }),
  );
  const rows: unknown[][] = [];
  let skipped = 0;
  let bytes = 0;
  let truncatedBy: ReadResult['truncatedBy'] = null;
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason ?? new Error('cancelled');
      const want =
        skipped < options.offset
          ? Math.min(BATCH, options.offset - skipped)
          : Math.min(BATCH, options.limit + 1 - rows.length);
      const batch = (await cursor.read(want)) as unknown[][];
      if (skipped < options.offset) {
        skipped += batch.length;
        if (batch.length < want) break;
        continue;
      }
      for (const row of batch) {
        if (rows.length === options.limit) {
          truncatedBy = 'rows';
          break;
        }
        bytes += approximateBytes(row);
        if (bytes > options.maxBytes && rows.length > 0) {
          truncatedBy = 'bytes';
          break;
        }
        rows.push(row);
      }
      if (truncatedBy || batch.length < want) break;
    }
    const result = (cursor as unknown as { _result?: pg.QueryResult })._result;
    const fields = result?.fields ?? [];
    return {
      columns: fields.map((f) => ({ name: f.name, typeOid: f.dataTypeID })),
      rows,
      truncated: truncatedBy !== null,
      truncatedBy,
      command: fields.length === 0 ? (result?.command ?? null) : null,
      rowCount: fields.length === 0 ? (result?.rowCount ?? null) : null,
    };
  } finally {
    // A failed cursor has nothing left to close, and after a lost connection (the embedded
    // child restarted) close() would wait forever for a readyForQuery that never comes.
    if ((cursor as unknown as { state?: string }).state !== 'error') {
      await cursor.close().catch(() => undefined);
    }
  }
}
