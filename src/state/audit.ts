// Who did what: auth events (logins, lockouts, token and user changes) and, when the serving
// side asks, tool calls. Records go to pgmcp.audit in batches (a request never waits for the
// write) and, optionally, to a JSONL file. Secrets never reach either: records are built from
// fields we choose, and `details` is scrubbed of anything that looks like one.
import { appendFile } from 'node:fs/promises';
import type { Principal } from '../core/principal.js';
import { currentRequestId } from '../core/request-scope.js';
import type { StateDb } from './state-db.js';
import { API_TOKEN_PREFIX, SESSION_TOKEN_PREFIX } from './secrets.js';

export type AuditEventName =
  | 'login'
  | 'login_failed'
  | 'login_locked'
  | 'lockout'
  | 'logout'
  | 'token_created'
  | 'token_revoked'
  | 'user_added'
  | 'user_removed'
  | 'user_password_changed'
  | 'user_enabled'
  | 'user_disabled'
  | 'user_updated'
  | 'tool_call'
  | 'oauth_keys_rotated';

export type AuditOutcome = 'success' | 'failure' | 'error' | 'denied';

/** Who acted: a principal, or the operator at the command line (kind 'cli'). */
export interface AuditActor {
  readonly kind: string;
  readonly id: string | null;
}

export interface AuditRecord {
  event: AuditEventName;
  outcome: AuditOutcome;
  actor?: AuditActor | null;
  clientAddress?: string | null;
  database?: string | null;
  tool?: string | null;
  durationMs?: number | null;
  details?: Record<string, unknown>;
}

export interface ToolCallRecord {
  principal: Principal;
  database: string | null;
  tool: string;
  durationMs: number;
  outcome: AuditOutcome;
  /** An AppError code or SQLSTATE when the call failed. */
  errorCode?: string;
  clientAddress?: string | null;
  /** The chat conversation the call was made in (details.conversation_id). */
  conversationId?: string;
  /** The database server (`host:port`) that answered the call (details.server). */
  server?: string;
}

export interface AuditLog {
  /** Queues a record; never throws, never waits for the write. */
  record(record: AuditRecord): void;
  toolCall(call: ToolCallRecord): void;
  /** Writes what is queued. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

export interface AuditOptions {
  /** Null: no table (audit.database false). */
  db: StateDb | null;
  /** audit.file; null: no file. */
  file: string | null;
  /**
   * Write failures (the caller is never failed for it). Rows the state database did not take
   * are kept (bounded by maxQueued) and written with the next batch; the first failure of a
   * streak and every record dropped past the bound are reported here.
   */
  onError?: (error: Error) => void;
  flushIntervalMs?: number;
  batchSize?: number;
  /** Records kept while the database is slow; older ones are dropped past this. */
  maxQueued?: number;
}

export function actorOf(principal: Principal): AuditActor {
  return { kind: principal.kind, id: principal.userId };
}

const SECRET_KEY =
  /pass(word|phrase)?|secret|^token$|raw|bearer|authorization|cookie|session_?(token|id)/i;
const SECRET_VALUE = new RegExp(`^(${API_TOKEN_PREFIX}|${SESSION_TOKEN_PREFIX}|scrypt\\$)`);

/** A copy of `details` without keys that name secrets or strings that look like one. */
export function scrubDetails(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    if (SECRET_KEY.test(key)) continue;
    if (typeof value === 'string' && SECRET_VALUE.test(value)) continue;
    out[key] =
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? scrubDetails(value as Record<string, unknown>)
        : value;
  }
  return out;
}

interface Row {
  at: Date;
  event: string;
  outcome: string;
  principal_kind: string | null;
  principal_id: string | null;
  client_address: string | null;
  database: string | null;
  tool: string | null;
  duration_ms: number | null;
  /** The HTTP request the record was made for (X-Request-Id), null outside one. */
  request_id: string | null;
  details: Record<string, unknown>;
}

const INSERT = `
  INSERT INTO pgmcp.audit (at, event, outcome, principal_kind, principal_id, client_address, database, tool, duration_ms, request_id, details)
  SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::text[], $11::jsonb[])`;

export function createAuditLog(options: AuditOptions): AuditLog {
  const interval = options.flushIntervalMs ?? 250;
  const batchSize = options.batchSize ?? 200;
  const maxQueued = options.maxQueued ?? 10_000;
  const onError = options.onError ?? (() => undefined);
  let queue: Row[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  let dropped = 0;
  /** Rows the state database did not take yet, oldest first; written before newer ones. */
  let unwritten: Row[] = [];
  let failing = false;

  const schedule = (): void => {
    if (timer || (queue.length === 0 && unwritten.length === 0)) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, interval);
    timer.unref();
  };

  const insert = async (db: StateDb, rows: Row[]): Promise<void> => {
    if (rows.length === 0) return;
    try {
      await db.query(INSERT, [
        rows.map((r) => r.at),
        rows.map((r) => r.event),
        rows.map((r) => r.outcome),
        rows.map((r) => r.principal_kind),
        rows.map((r) => r.principal_id),
        rows.map((r) => r.client_address),
        rows.map((r) => r.database),
        rows.map((r) => r.tool),
        rows.map((r) => r.duration_ms),
        rows.map((r) => r.request_id),
        rows.map((r) => JSON.stringify(r.details)),
      ]);
      failing = false;
    } catch (error) {
      if (!failing) onError(error as Error);
      failing = true;
      // Kept for the next write, bounded: the oldest go first, and are counted.
      const over = rows.length - maxQueued;
      if (over > 0) dropped += over;
      unwritten = over > 0 ? rows.slice(over) : rows;
      schedule();
    }
  };

  const write = async (rows: Row[]): Promise<void> => {
    if (options.db) {
      const batch = unwritten.length > 0 ? unwritten.concat(rows) : rows;
      unwritten = [];
      await insert(options.db, batch);
    }
    if (options.file && rows.length > 0) {
      const text = rows.map((r) => JSON.stringify({ ...r, at: r.at.toISOString() })).join('\n');
      await appendFile(options.file, `${text}\n`, { mode: 0o600 }).catch((error: unknown) =>
        onError(error as Error),
      );
    }
  };

  // One write at a time, in order: the file keeps the order records were made in.
  const flush = (): Promise<void> => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    const rows = queue;
    queue = [];
    if (dropped > 0) {
      onError(new Error(`audit queue full: ${dropped} record(s) dropped`));
      dropped = 0;
    }
    if (rows.length > 0 || unwritten.length > 0) writing = writing.then(() => write(rows));
    return writing;
  };

  const record = (r: AuditRecord): void => {
    if (!options.db && !options.file) return;
    if (queue.length >= maxQueued) {
      queue.shift();
      dropped++;
    }
    queue.push({
      at: new Date(),
      event: r.event,
      outcome: r.outcome,
      principal_kind: r.actor?.kind ?? null,
      principal_id: r.actor?.id ?? null,
      client_address: r.clientAddress ?? null,
      database: r.database ?? null,
      tool: r.tool ?? null,
      duration_ms:
        r.durationMs === undefined || r.durationMs === null ? null : Math.round(r.durationMs),
      // Read here, while the request's own code runs: the write happens later, on a timer.
      request_id: currentRequestId(),
      details: scrubDetails(r.details ?? {}),
    });
    if (queue.length >= batchSize) void flush();
    else schedule();
  };

  return {
    record,
    toolCall(call) {
      record({
        event: 'tool_call',
        outcome: call.outcome,
        actor: actorOf(call.principal),
        clientAddress: call.clientAddress ?? null,
        database: call.database,
        tool: call.tool,
        durationMs: call.durationMs,
        details: {
          ...(call.errorCode ? { error_code: call.errorCode } : {}),
          ...(call.conversationId ? { conversation_id: call.conversationId } : {}),
          ...(call.server ? { server: call.server } : {}),
        },
      });
    },
    flush,
    close: flush,
  };
}
