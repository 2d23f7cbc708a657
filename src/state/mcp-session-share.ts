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

export interface SessionShare {
  /** The record of a session idle no longer than `idleMs`, marked alive; null when gone. */
  load(id: string, idleMs: number): Promise<SessionRecord | null>;
  /** Write the record (a new session, or one whose kept fields changed). */
  save(id: string, record: SessionRecord): Promise<void>;
  /** Mark the session alive now. */
  touch(id: string): Promise<void>;
  remove(id: string): Promise<void>;
  /** Delete every session idle longer than `idleMs`. */
  sweep(idleMs: number): Promise<number>;
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
    async load(id, idleMs) {
      const { rows } = await db.query<Row>(
        `UPDATE pgmcp.mcp_sessions SET last_seen = now()
          WHERE id_hash = $1 AND last_seen >= now() - make_interval(secs => $2::float8 / 1000)
         RETURNING owner, protocol_version, client_capabilities, client_info, log_level, database,
                   subscriptions`,
        [sessionKey(id), idleMs],
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
    async save(id, record) {
      await db.query(
        `INSERT INTO pgmcp.mcp_sessions AS s (id_hash, owner, protocol_version, client_capabilities,
                client_info, log_level, database, subscriptions)
         VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, $8::text[])
         ON CONFLICT (id_hash) DO UPDATE SET
           protocol_version = EXCLUDED.protocol_version,
           client_capabilities = EXCLUDED.client_capabilities,
           client_info = EXCLUDED.client_info,
           log_level = EXCLUDED.log_level,
           database = EXCLUDED.database,
           subscriptions = EXCLUDED.subscriptions,
           last_seen = now()
         WHERE s.owner = EXCLUDED.owner`,
        [
          sessionKey(id),
          record.owner,
          record.protocolVersion,
          JSON.stringify(record.clientCapabilities),
          record.clientInfo === null ? null : JSON.stringify(record.clientInfo),
          record.logLevel,
          record.database,
          record.subscriptions,
        ],
      );
    },
    async touch(id) {
      await db.query('UPDATE pgmcp.mcp_sessions SET last_seen = now() WHERE id_hash = $1', [
        sessionKey(id),
      ]);
    },
    async remove(id) {
      await db.query('DELETE FROM pgmcp.mcp_sessions WHERE id_hash = $1', [sessionKey(id)]);
    },
    async sweep(idleMs) {
      const { rowCount } = await db.query(
        'DELETE FROM pgmcp.mcp_sessions WHERE last_seen < now() - make_interval(secs => $1::float8 / 1000)',
        [idleMs],
      );
      return rowCount ?? 0;
    },
  };
}
