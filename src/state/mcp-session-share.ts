// Legacy MCP sessions as every instance sharing the state database sees them: what a session
// negotiated and chose (pgmcp.mcp_sessions, migration 004), keyed by the hash of its id. The
// HTTP layer keeps the sessions it serves in memory and comes here only when it does not hold
// one, when something it keeps changed, and every few seconds of use to mark it alive.
import { createHash } from 'node:crypto';
import type { StateDb } from './state-db.js';

/** What of a legacy session outlives the instance that created it. */
export interface SessionRecord {
  /** The caller it is bound to (the HTTP layer's principal key). */
  owner: string;
  protocolVersion: string | null;
  clientCapabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown> | null;
  logLevel: string | null;
  database: string | null;
  subscriptions: string[];
}

/** One event of a session's response stream; `finished` marks the stream's end. */
export interface SharedEvent {
  streamId: string;
  seq: number;
  data: string;
  finished?: boolean;
}

export interface SessionShare {
  /**
   * The record of a session idle no longer than `idleMs`, marked alive and held by `holder`
   * from now on; null when gone.
   */
  load(id: string, idleMs: number, holder: string): Promise<SessionRecord | null>;
  /**
   * Write the record (a new session, or one whose kept fields changed) as `holder`; returns
   * the instances that hold a copy.
   */
  save(id: string, record: SessionRecord, holder: string): Promise<string[]>;
  /** These instances no longer hold a copy (dropped it, or did not answer). */
  release(id: string, holders: readonly string[]): Promise<void>;
  /** Mark the session alive now. */
  touch(id: string): Promise<void>;
  remove(id: string): Promise<void>;
  /** Delete every session idle longer than `idleMs`, and events older than `eventsMs`. */
  sweep(idleMs: number, eventsMs: number): Promise<number>;
  /** Keep events of the session's streams for a resumption on another instance. */
  appendEvents(id: string, events: readonly SharedEvent[]): Promise<void>;
  /** The stream's events after `seq`, in order, and whether the stream has ended. */
  eventsAfter(
    id: string,
    streamId: string,
    seq: number,
  ): Promise<{ events: SharedEvent[]; finished: boolean }>;
}

/** The key a session is stored and announced under: its id is a bearer of the session. */
export function sessionKey(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

interface Row {
  owner: string;
  protocol_version: string | null;
  client_capabilities: Record<string, unknown> | null;
  client_info: Record<string, unknown> | null;
  log_level: string | null;
  database: string | null;
  subscriptions: string[] | null;
}

export function createSessionShare(db: Pick<StateDb, 'query'>): SessionShare {
  return {
    async load(id, idleMs, holder) {
      const { rows } = await db.query<Row>(
        `UPDATE pgmcp.mcp_sessions
            SET last_seen = now(),
                holders = CASE WHEN $3 = ANY (holders) THEN holders ELSE holders || $3::text END
          WHERE id_hash = $1 AND last_seen >= now() - make_interval(secs => $2::float8 / 1000)
         RETURNING owner, protocol_version, client_capabilities, client_info, log_level, database,
                   subscriptions`,
        [sessionKey(id), idleMs, holder],
      );
      const row = rows[0];
      if (!row) return null;
      return {
        owner: row.owner,
        protocolVersion: row.protocol_version,
        clientCapabilities: row.client_capabilities ?? {},
        clientInfo: row.client_info,
        logLevel: row.log_level,
        database: row.database,
        subscriptions: row.subscriptions ?? [],
      };
    },
    async save(id, record, holder) {
      const { rows } = await db.query<{ holders: string[] }>(
        `INSERT INTO pgmcp.mcp_sessions AS s (id_hash, owner, protocol_version, client_capabilities,
                client_info, log_level, database, subscriptions, holders)
         VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8::text[], ARRAY[$9::text])
         ON CONFLICT (id_hash) DO UPDATE SET
           protocol_version = EXCLUDED.protocol_version,
           client_capabilities = EXCLUDED.client_capabilities,
           client_info = EXCLUDED.client_info,
           log_level = EXCLUDED.log_level,
           database = EXCLUDED.database,
           subscriptions = EXCLUDED.subscriptions,
           holders = CASE WHEN $9 = ANY (s.holders) THEN s.holders ELSE s.holders || $9::text END,
           last_seen = now()
         WHERE s.owner = EXCLUDED.owner
         RETURNING holders`,
        [
          sessionKey(id),
          record.owner,
          record.protocolVersion,
          JSON.stringify(record.clientCapabilities),
          record.clientInfo === null ? null : JSON.stringify(record.clientInfo),
          record.logLevel,
          record.database,
          record.subscriptions,
          holder,
        ],
      );
      return rows[0]?.holders ?? [];
    },
    async release(id, holders) {
      if (holders.length === 0) return;
      await db.query(
        `UPDATE pgmcp.mcp_sessions SET holders = ARRAY(SELECT h FROM unnest(holders) AS h
                                                        WHERE h <> ALL ($2::text[]))
          WHERE id_hash = $1`,
        [sessionKey(id), holders],
      );
    },
    async touch(id) {
      await db.query('UPDATE pgmcp.mcp_sessions SET last_seen = now() WHERE id_hash = $1', [
        sessionKey(id),
      ]);
    },
    async remove(id) {
      const key = sessionKey(id);
      await db.query('DELETE FROM pgmcp.mcp_sessions WHERE id_hash = $1', [key]);
      await db.query('DELETE FROM pgmcp.mcp_events WHERE session_key = $1', [key]);
    },
    async sweep(idleMs, eventsMs) {
      const { rowCount } = await db.query(
        'DELETE FROM pgmcp.mcp_sessions WHERE last_seen < now() - make_interval(secs => $1::float8 / 1000)',
        [idleMs],
      );
      await db.query(
        'DELETE FROM pgmcp.mcp_events WHERE created_at < now() - make_interval(secs => $1::float8 / 1000)',
        [eventsMs],
      );
      return rowCount ?? 0;
    },
    async appendEvents(id, events) {
      if (events.length === 0) return;
      await db.query(
        `INSERT INTO pgmcp.mcp_events (session_key, stream_id, seq, data, finished)
         SELECT $1, e.stream_id, e.seq, e.data, e.finished
           FROM unnest($2::text[], $3::int[], $4::text[], $5::bool[])
                AS e(stream_id, seq, data, finished)
         ON CONFLICT DO NOTHING`,
        [
          sessionKey(id),
          events.map((e) => e.streamId),
          events.map((e) => e.seq),
          events.map((e) => e.data),
          events.map((e) => e.finished === true),
        ],
      );
    },
    async eventsAfter(id, streamId, seq) {
      const { rows } = await db.query<{ seq: number; data: string; finished: boolean }>(
        `SELECT seq, data, finished FROM pgmcp.mcp_events
          WHERE session_key = $1 AND stream_id = $2 AND (seq > $3 OR finished)
          ORDER BY seq`,
        [sessionKey(id), streamId, seq],
      );
      return {
        events: rows
          .filter((r) => !r.finished)
          .map((r) => ({ streamId, seq: r.seq, data: r.data })),
        finished: rows.some((r) => r.finished),
      };
    },
  };
}
