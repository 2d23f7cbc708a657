// One round trip per tool call. The safety settings and the caller's statement travel as
// extended-protocol messages ahead of a single Sync, so PostgreSQL runs them as one
// implicit transaction: the settings (transaction-local) apply before the statement, and
// an error anywhere rolls everything back. The statement is its own Parse/Bind: it is
// never concatenated with our SQL (that is how the reference server was bypassed).
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { createRequire } from 'node:module';
import { AppError, ErrorCodes } from '../core/errors.js';

const require = createRequire(import.meta.url);
// pg keeps these internal; pg-cursor uses the same modules.
const Result = require('pg/lib/result.js') as new (rowMode: string, types?: unknown) => PgResult;
const { prepareValue } = require('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};
// pg's own message encoder (a dependency of pg): the pipeline's messages are encoded into one
// buffer and written at once, instead of one stream write per message.
const { serialize } = createRequire(require.resolve('pg'))('pg-protocol') as {
  serialize: {
    parse(msg: { text: string; name?: string }): Buffer;
    bind(msg: { values?: unknown[]; valueMapper?: unknown }): Buffer;
    describe(msg: { type: 'P' | 'S'; name: string }): Buffer;
    execute(msg: { rows?: number }): Buffer;
    sync(): Buffer;
  };
};
const SYNC = serialize.sync();

interface PgResult {
  fields: pg.FieldDef[];
  command: string | null;
  rowCount: number | null;
  addFields(fields: unknown[]): void;
  parseRow(fields: unknown[]): unknown[];
  addCommandComplete(msg: unknown): void;
  _getTypeParser?: unknown;
}

interface Connection {
  stream: {
    writable?: boolean;
    write?: (chunk: Buffer) => boolean;
    cork?: () => void;
    uncork?: () => void;
    on?: (event: 'data', listener: (chunk: Buffer) => void) => void;
    off?: (event: 'data', listener: (chunk: Buffer) => void) => void;
    destroy?: () => void;
  };
  parse(msg: { text: string; name?: string; types?: unknown[] }): void;
  bind(msg: {
    portal?: string;
    statement?: string;
    values?: unknown[];
    valueMapper?: unknown;
  }): void;
  describe(msg: { type: 'P' | 'S'; name: string }): void;
  execute(msg: { portal?: string; rows?: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

export interface PipelineStep {
  text: string;
  values: unknown[];
}

export interface PipelineRead {
  /** Rows to skip before keeping any (read and dropped as they arrive). */
  offset: number;
  /** Rows to keep; one more is read to know whether more exist. */
  limit: number;
  /** Stop keeping rows past this many bytes (approximate). */
  maxBytes: number;
  types?: pg.CustomTypesConfig;
}

export interface PipelineResult {
  fields: pg.FieldDef[];
  rows: unknown[][];
  /** Rows exist past those kept: the row limit or the byte cap stopped the reading. */
  truncatedBy: 'rows' | 'bytes' | null;
  /** The first row kept was alone over the byte cap: its long values were cut. */
  valuesCut: boolean;
  command: string | null;
  rowCount: number | null;
}

/** A CommandComplete's tag without its counts: `CREATE TABLE`, `INSERT` (of `INSERT 0 1`). */
function fullCommandTag(msg: unknown): string | null {
  const text = (msg as { text?: unknown } | null)?.text;
  if (typeof text !== 'string') return null;
  const tag = text.replace(/(?: \d+)+$/, '');
  return tag === '' ? null : tag;
}

function approximateBytes(row: unknown[]): number {
  let bytes = 2;
  for (const v of row) {
    if (v === null || v === undefined) bytes += 1;
    else if (typeof v === 'string') bytes += v.length + 1;
    else if (Buffer.isBuffer(v)) bytes += v.length * 2 + 3;
    else if (typeof v === 'object') bytes += JSON.stringify(v).length + 1;
    else bytes += 12;
  }
  return bytes;
}

/**
 * pg buffers each server message whole before parsing it, so one huge value (a 200 MB
 * string_agg) would sit in memory several times over before any row cap could act. Messages
 * are framed as type byte + int32 length: watch the lengths as bytes arrive, and call
 * `tooLarge` as soon as a header announces more than `limit` bytes.
 */
function watchMessageSizes(limit: number, tooLarge: (length: number) => void) {
  const header = Buffer.alloc(5);
  let filled = 0;
  let remaining = 0;
  let stopped = false;
  return (chunk: Buffer): void => {
    let at = 0;
    while (!stopped && at < chunk.length) {
      if (remaining > 0) {
        const n = Math.min(remaining, chunk.length - at);
        remaining -= n;
        at += n;
        continue;
      }
      const n = Math.min(5 - filled, chunk.length - at);
      chunk.copy(header, filled, at, at + n);
      filled += n;
      at += n;
      if (filled < 5) return;
      filled = 0;
      remaining = header.readUInt32BE(1) - 4; // the length counts itself
      if (remaining > limit) {
        stopped = true;
        tooLarge(remaining);
      }
    }
  };
}

/** The largest message read: values up to this size are cut to the byte cap, larger ones refused. */
function messageLimit(maxBytes: number): number {
  return Math.max(16 * 1024 * 1024, 4 * maxBytes);
}

/** The size of a DataRow's values as received (text format: strings or null). */
function rawBytes(fields: unknown[]): number {
  let bytes = 0;
  for (const v of fields) bytes += typeof v === 'string' ? v.length : 1;
  return bytes;
}

/**
 * A pg Submittable: `setup` statements (results ignored), then `statement`, whose rows are
 * read with the given caps, then `after` statements (results ignored; COMMIT of an open
 * block), all before one Sync. An error skips everything after it up to the Sync.
 */
class PipelinedStatement extends EventEmitter {
  private readonly result: PgResult;
  private readonly kept: unknown[][] = [];
  private seen = 0;
  private bytes = 0;
  private truncatedBy: PipelineResult['truncatedBy'] = null;
  private valuesCut = false;
  /** The whole command tag (pg's Result keeps only its first word: CREATE for CREATE TABLE). */
  private commandTag: string | null = null;
  /** Executes answered so far (each ends with CommandComplete, PortalSuspended or EmptyQuery). */
  private answered = 0;
  private error: Error | null = null;
  private readonly done: Promise<PipelineResult>;
  private settle!: { resolve: (r: PipelineResult) => void; reject: (e: Error) => void };

  constructor(
    private readonly setup: readonly PipelineStep[],
    private readonly statement: PipelineStep,
    private readonly read: PipelineRead,
    private readonly after: readonly PipelineStep[] = [],
  ) {
    super();
    this.result = new Result('array', read.types);
    this.done = new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
    });
  }

  /** Resolves after ReadyForQuery: the connection is usable again either way. */
  promise(): Promise<PipelineResult> {
    return this.done;
  }

  submit(connection: Connection): Error | null {
    const rows = this.read.offset + this.read.limit + 1;
    const chunks: Buffer[] = [];
    const step = (s: PipelineStep, execute: { rows: number }, describe: boolean): void => {
      chunks.push(serialize.parse({ text: s.text }));
      chunks.push(serialize.bind({ values: s.values, valueMapper: prepareValue }));
      if (describe) chunks.push(serialize.describe({ type: 'P', name: '' }));
      chunks.push(serialize.execute(execute));
    };
    try {
      for (const s of this.setup) step(s, { rows: 0 }, false);
      step(this.statement, { rows }, true);
      for (const s of this.after) step(s, { rows: 0 }, false);
    } catch (error) {
      // A value that cannot be encoded: nothing is sent but the Sync, which closes the exchange.
      chunks.length = 0;
      this.error = error as Error;
    }
    chunks.push(SYNC);
    if (connection.stream.writable !== false) connection.stream.write?.(Buffer.concat(chunks));
    const { stream } = connection;
    const limit = messageLimit(this.read.maxBytes);
    const watch = watchMessageSizes(limit, (length) => {
      this.error ??= new AppError(
        ErrorCodes.RESULT_TOO_LARGE,
        `A single row of the result is ${length} bytes, above the ${limit}-byte limit: select fewer or shorter columns (left(column, n), length(column)) or aggregate.`,
        { category: 'input', details: { messageBytes: length, limitBytes: limit } },
      );
      // Closing the connection stops the transfer; pg then fails this query (handleError)
      // and the pool discards the client.
      stream.destroy?.();
    });
    stream.on?.('data', watch);
    const unwatch = (): void => stream.off?.('data', watch);
    this.done.then(unwatch, unwatch);
    return null;
  }

  private get onStatement(): boolean {
    return this.answered === this.setup.length;
  }

  handleRowDescription(msg: { fields: unknown[] }): void {
    if (this.onStatement) this.result.addFields(msg.fields);
  }

  handleDataRow(msg: { fields: unknown[] }): void {
    if (!this.onStatement || this.truncatedBy !== null) return;
    this.seen++;
    if (this.seen <= this.read.offset) return;
    if (this.kept.length === this.read.limit) {
      this.truncatedBy = 'rows';
      return;
    }
    if (this.valuesCut) {
      // The cap went to the cut row before this one: this row is not parsed, only counted.
      this.truncatedBy = 'bytes';
      return;
    }
    if (this.kept.length === 0 && rawBytes(msg.fields) > this.read.maxBytes) {
      // One row alone over the cap (repeat('x', 1e8)): keep it, its long values cut, so the
      // answer stays within the cap instead of carrying hundreds of megabytes.
      // A row after this one (if any) ends the reading as 'bytes'.
      this.kept.push(this.cutRow(msg.fields));
      this.bytes = this.read.maxBytes;
      return;
    }
    const row = this.result.parseRow(msg.fields);
    this.bytes += approximateBytes(row);
    if (this.bytes > this.read.maxBytes && this.kept.length > 0) {
      this.truncatedBy = 'bytes';
      return;
    }
    this.kept.push(row);
  }

  /** The row with each value longer than its share of the byte cap cut (and left unparsed). */
  private cutRow(fields: unknown[]): unknown[] {
    const share = Math.max(64, Math.floor(this.read.maxBytes / Math.max(1, fields.length)));
    const cut = fields.map((v) => typeof v === 'string' && v.length > share);
    if (cut.some(Boolean)) this.valuesCut = true;
    const row = this.result.parseRow(fields.map((v, i) => (cut[i] ? null : v)));
    fields.forEach((v, i) => {
      if (!cut[i]) return;
      const text = v as string;
      // A fresh copy: a slice would keep the whole original string alive.
      const kept = Buffer.from(text.slice(0, share), 'utf8').toString('utf8');
      row[i] = `${kept}… [cut: ${share} of ${text.length} characters]`;
    });
    return row;
  }

  handleCommandComplete(msg: unknown): void {
    if (this.onStatement) {
      this.result.addCommandComplete(msg);
      this.commandTag = fullCommandTag(msg);
    }
    this.answered++;
  }

  handlePortalSuspended(): void {
    // More rows than offset+limit+1 exist: the limit+1'th row already told us so.
    if (this.onStatement && this.truncatedBy === null) this.truncatedBy = 'rows';
    this.answered++;
  }

  handleEmptyQuery(): void {
    this.answered++;
  }

  handleError(
    error: Error,
    connection?: { once(event: string, listener: () => void): void },
  ): void {
    if (this.error === null && typeof error === 'object') failedSteps.set(error, this.answered);
    this.error ??= error;
    const first = this.error;
    // A server ErrorResponse (it has a severity) is followed by ReadyForQuery once the server
    // reaches our Sync, but pg stops routing messages to a query after its error: wait for
    // that ReadyForQuery on the connection, so the client is idle when we hand it back.
    // Anything else (connection lost, client not queryable) ends it now.
    // FATAL and PANIC end the session: the socket closes and no ReadyForQuery ever comes.
    const severity = (error as { severity?: unknown }).severity;
    if (severity !== undefined && severity !== 'FATAL' && severity !== 'PANIC' && connection) {
      connection.once('readyForQuery', () => this.settle.reject(first));
    } else {
      this.settle.reject(first);
    }
  }

  handleReadyForQuery(): void {
    if (this.error) {
      this.settle.reject(this.error);
      return;
    }
    this.settle.resolve({
      fields: this.result.fields,
      rows: this.kept,
      truncatedBy: this.truncatedBy,
      valuesCut: this.valuesCut,
      command: this.commandTag ?? this.result.command,
      rowCount: this.result.rowCount,
    });
  }

  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('COPY is not supported');
  }

  handleCopyData(): void {}
}

// Which step of its trip an error came from (setup steps first, then the statement, then the
// steps after it), for a caller that sends a step of its own ahead of the statement.
const failedSteps = new WeakMap<object, number>();

/** The index of the step of the trip that failed with `error` (undefined: not a trip's error). */
export function failedStepOf(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null ? failedSteps.get(error) : undefined;
}

/** Run setup + statement (+ after) on a checked-out client in one round trip. */
export function runPipelined(
  client: pg.PoolClient,
  setup: readonly PipelineStep[],
  statement: PipelineStep,
  read: PipelineRead,
  after: readonly PipelineStep[] = [],
): Promise<PipelineResult> {
  const submittable = new PipelinedStatement(setup, statement, read, after);
  // pg accepts any object with submit(); its typings only know Query and cursors.
  (client as unknown as { query(q: unknown): void }).query(submittable);
  return submittable.promise();
}

/** The transaction status of the client's last ReadyForQuery: 'I' idle, 'T' in a block, 'E' failed block. */
export function transactionStatus(client: pg.PoolClient): string | null {
  return (client as unknown as { _txStatus?: string | null })._txStatus ?? null;
}
