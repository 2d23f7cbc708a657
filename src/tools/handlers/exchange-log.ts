// Appends one row per answered request to mcp.exchange, off the request path: records are
// queued and written in batches; a failed write is logged and dropped, never thrown.
import type { Principal } from '../../core/principal.js';
import type { Database } from '../../db/database.js';

export interface ExchangeRecord {
  principal: Principal;
  method: string;
  name?: string | null;
  durationMs: number;
  outcome: 'ok' | 'error';
  /** The MCP era the request was answered in; absent for the chat agent's tool calls. */
  era?: 'legacy' | 'modern';
  errorCode?: string | number | null;
  /** The configured database the request used, when several are configured and it used one. */
  database?: string | null;
  /**
   * The chat conversation a chat tool call was made in. The audit log records it;
   * mcp.exchange has no column for it.
   */
  conversationId?: string | null;
  /** The database server that answered (the audit records it; mcp.exchange has no column). */
  server?: string | null;
  /** Stored only when the log was created with logArguments. */
  args?: unknown;
}

export interface ExchangeLogOptions {
  logArguments: boolean;
  /** Rows per INSERT and the queue's cap (records past it are dropped and counted). */
  batchSize?: number;
  maxQueue?: number;
  /** How long a record may wait for companions before it is written. */
  flushIntervalMs?: number;
  onError?: (error: Error) => void;
}

export interface ExchangeLog {
  record(entry: ExchangeRecord): void;
  /** Writes what is queued; resolves when done (use at shutdown and in tests). */
  flush(): Promise<void>;
  readonly dropped: number;
  close(): Promise<void>;
}

interface Row {
  user_id: string | null;
  tenant_id: string | null;
  method: string;
  name: string | null;
  duration_ms: number;
  outcome: 'ok' | 'error';
  error_code: string | null;
  arguments: unknown;
  database: string | null;
}

const INSERT_SQL = `INSERT INTO mcp.exchange
  (user_id, tenant_id, database, method, name, duration_ms, outcome, error_code, arguments)
SELECT r.user_id, r.tenant_id, coalesce(r.database, current_database()), r.method, r.name, r.duration_ms, r.outcome,
  r.error_code, r.arguments
FROM jsonb_to_recordset($1::jsonb) AS r(user_id text, tenant_id text, database text, method text, name text,
  duration_ms double precision, outcome text, error_code text, arguments jsonb)`;

export function createExchangeLog(db: Database, options: ExchangeLogOptions): ExchangeLog {
  const batchSize = options.batchSize ?? 200;
  const maxQueue = options.maxQueue ?? 10_000;
  const flushIntervalMs = options.flushIntervalMs ?? 250;
  const onError = options.onError ?? (() => undefined);
  let queue: Row[] = [];
  let dropped = 0;
  let timer: NodeJS.Timeout | null = null;
  let writing: Promise<void> = Promise.resolve();

  const write = async (rows: Row[]): Promise<void> => {
    try {
      // No caller identity and no call settings: the log is pgmcp's own bookkeeping.
      await db.withOwnConnection((client) => client.query(INSERT_SQL, [JSON.stringify(rows)]));
    } catch (error) {
      onError(error as Error);
    }
  };

  const drain = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    while (queue.length > 0) {
      const rows = queue.slice(0, batchSize);
      queue = queue.slice(batchSize);
      writing = writing.then(() => write(rows));
    }
    return writing;
  };

  return {
    record(entry) {
      if (queue.length >= maxQueue) {
        dropped++;
        return;
      }
      queue.push({
        user_id: entry.principal.userId,
        tenant_id: entry.principal.tenantId,
        database: entry.database ?? null,
        method: entry.method,
        name: entry.name ?? null,
        duration_ms: Math.max(0, entry.durationMs),
        outcome: entry.outcome,
        error_code: entry.errorCode == null ? null : String(entry.errorCode),
        arguments: options.logArguments && entry.args !== undefined ? entry.args : null,
      });
      if (queue.length >= batchSize) void drain();
      else timer ??= setTimeout(() => void drain(), flushIntervalMs).unref();
    },
    flush: drain,
    get dropped() {
      return dropped;
    },
    close: drain,
  };
}
