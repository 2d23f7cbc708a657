// The checks of analyze_db_health: one query each, read on the call's connection (so under the
// caller's role: statistics of other sessions need pg_read_all_stats), each row a finding that
// says what is wrong, why it matters and what to do.
import type pg from 'pg';
import { THRESHOLDS as T } from './thresholds.js';

export const HEALTH_TYPES = [
  'index',
  'connection',
  'vacuum',
  'sequence',
  'replication',
  'buffer',
  'constraint',
] as const;
export type HealthType = (typeof HEALTH_TYPES)[number];

export interface Finding {
  check: HealthType;
  severity: 'warning' | 'critical';
  /** schema.name of the object, or null for the whole server or database. */
  object: string | null;
  /** Schema and table the object belongs to (for the access policy); null for server-wide findings. */
  table: { schema: string; name: string } | null;
  finding: string;
  why: string;
  action: string;
}

type Row = Record<string, unknown>;
type Check = (client: pg.ClientBase) => Promise<Finding[]>;

const q = async (client: pg.ClientBase, sql: string, params: unknown[] = []): Promise<Row[]> =>
  (await client.query(sql, params)).rows as Row[];
const s = (v: unknown): string => String(v);
const n = (v: unknown): number => Number(v);
const pct = (v: number): string => `${Math.round(v * 1000) / 10}%`;
const bytes = (v: number): string => `${(v / 1024 / 1024).toFixed(1)} MB`;
/** A timestamp as the driver returns it (a Date or its text), or null. */
const when = (v: unknown): Date | null =>
  v === null || v === undefined ? null : new Date(v as string);
const stale = (d: Date | null): boolean =>
  d === null || Date.now() - d.getTime() > T.vacuumAgeSeconds * 1000;
const on = (row: Row): Finding['table'] => ({ schema: s(row['schema']), name: s(row['table']) });

const index: Check = async (client) => {
  const out: Finding[] = [];
  for (const r of await q(
    client,
    `SELECT n.nspname AS schema, t.relname AS "table", c.relname AS name
      FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
      JOIN pg_catalog.pg_class t ON t.oid = i.indrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE NOT i.indisvalid AND n.nspname NOT IN ('pg_catalog', 'information_schema')`,
  )) {
    out.push({
      check: 'index',
      severity: 'critical',
      object: `${s(r['schema'])}.${s(r['name'])}`,
      table: on(r),
      finding: `Index ${s(r['name'])} on ${s(r['table'])} is invalid.`,
      why: 'An invalid index (a failed CREATE INDEX CONCURRENTLY) is never used for reads but is still updated on every write.',
      action: `DROP INDEX CONCURRENTLY it and create it again, or REINDEX INDEX CONCURRENTLY.`,
    });
  }
  for (const r of await q(
    client,
    `SELECT n.nspname AS schema, t.relname AS "table", c.relname AS name, d.relname AS twin,
        pg_catalog.pg_relation_size(c.oid) AS size
      FROM pg_catalog.pg_index i JOIN pg_catalog.pg_index j ON j.indrelid = i.indrelid AND j.indexrelid < i.indexrelid
        AND j.indkey::text = i.indkey::text AND j.indclass::text = i.indclass::text
        AND COALESCE(pg_catalog.pg_get_expr(j.indexprs, j.indrelid), '') = COALESCE(pg_catalog.pg_get_expr(i.indexprs, i.indrelid), '')
        AND COALESCE(pg_catalog.pg_get_expr(j.indpred, j.indrelid), '') = COALESCE(pg_catalog.pg_get_expr(i.indpred, i.indrelid), '')
      JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid JOIN pg_catalog.pg_class d ON d.oid = j.indexrelid
      JOIN pg_catalog.pg_class t ON t.oid = i.indrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')`,
  )) {
    out.push({
      check: 'index',
      severity: 'warning',
      object: `${s(r['schema'])}.${s(r['name'])}`,
      table: on(r),
      finding: `Index ${s(r['name'])} on ${s(r['table'])} duplicates ${s(r['twin'])} (same columns, operator classes, expressions and predicate; ${bytes(n(r['size']))}).`,
      why: 'A duplicate index doubles the write cost and the space for no gain in reads.',
      action: `DROP INDEX CONCURRENTLY one of them (keep the one a constraint uses).`,
    });
  }
  for (const r of await q(
    client,
    `SELECT s.schemaname AS schema, s.relname AS "table", s.indexrelname AS name,
        pg_catalog.pg_relation_size(s.indexrelid) AS size
      FROM pg_catalog.pg_stat_user_indexes s JOIN pg_catalog.pg_index i ON i.indexrelid = s.indexrelid
      WHERE s.idx_scan = 0 AND NOT i.indisunique AND NOT i.indisprimary AND i.indisvalid
        AND pg_catalog.pg_relation_size(s.indexrelid) >= $1`,
    [T.unusedIndexBytes],
  )) {
    out.push({
      check: 'index',
      severity: 'warning',
      object: `${s(r['schema'])}.${s(r['name'])}`,
      table: on(r),
      finding: `Index ${s(r['name'])} on ${s(r['table'])} (${bytes(n(r['size']))}) has not been scanned since statistics were last reset.`,
      why: 'An unused index costs writes, space and vacuum time.',
      action: 'Check standbys and rare jobs use it; if not, DROP INDEX CONCURRENTLY it.',
    });
  }
  for (const r of await q(
    client,
    `SELECT n.nspname AS schema, t.relname AS "table", c.relname AS name,
        pg_catalog.pg_relation_size(c.oid) AS size,
        GREATEST(1, t.reltuples) * (16 + COALESCE((SELECT sum(st.avg_width) FROM pg_catalog.pg_stats st
           JOIN pg_catalog.pg_attribute a ON a.attname = st.attname AND a.attrelid = t.oid
           WHERE st.schemaname = n.nspname AND st.tablename = t.relname AND a.attnum = ANY(i.indkey::int2[])), 8)) / 0.9 AS expected
      FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
      JOIN pg_catalog.pg_class t ON t.oid = i.indrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      JOIN pg_catalog.pg_am am ON am.oid = c.relam
      WHERE am.amname = 'btree' AND t.reltuples >= 0 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        AND pg_catalog.pg_relation_size(c.oid) >= $1`,
    [T.indexBloatBytes],
  )) {
    const ratio = n(r['size']) / Math.max(1, n(r['expected']));
    if (ratio < T.indexBloatFactor) continue;
    out.push({
      check: 'index',
      severity: 'warning',
      object: `${s(r['schema'])}.${s(r['name'])}`,
      table: on(r),
      finding: `Index ${s(r['name'])} on ${s(r['table'])} is ${bytes(n(r['size']))}, about ${ratio.toFixed(1)} times what its rows need.`,
      why: 'A bloated index is read and cached in full: scans and memory pay for the empty space.',
      action: 'REINDEX INDEX CONCURRENTLY it.',
    });
  }
  return out;
};

const connection: Check = async (client) => {
  const out: Finding[] = [];
  const [r] = await q(
    client,
    `SELECT count(*) AS used, pg_catalog.current_setting('max_connections')::int AS max,
      count(*) FILTER (WHERE state = 'idle in transaction' AND now() - state_change > $1 * interval '1 second') AS idle
    FROM pg_catalog.pg_stat_activity WHERE backend_type = 'client backend'`,
    [T.idleInTransactionSeconds],
  );
  const used = n(r!['used']);
  const max = n(r!['max']);
  if (used >= max * T.connectionShare) {
    out.push({
      check: 'connection',
      severity: used >= max * 0.95 ? 'critical' : 'warning',
      object: null,
      table: null,
      finding: `${used} of max_connections ${max} connections are in use (${pct(used / max)}).`,
      why: 'When max_connections is reached new sessions are refused.',
      action:
        'Use a connection pooler (PgBouncer), lower the pools of the applications, or raise max_connections.',
    });
  }
  if (n(r!['idle']) > 0) {
    out.push({
      check: 'connection',
      severity: 'warning',
      object: null,
      table: null,
      finding: `${n(r!['idle'])} session(s) idle in a transaction for more than ${T.idleInTransactionSeconds} s.`,
      why: 'An open transaction holds its locks and keeps vacuum from removing dead rows.',
      action:
        'Fix the application that leaves transactions open; set idle_in_transaction_session_timeout.',
    });
  }
  return out;
};

const vacuum: Check = async (client) => {
  const out: Finding[] = [];
  for (const r of await q(
    client,
    `SELECT schemaname AS schema, relname AS "table", n_dead_tup AS dead, n_live_tup AS live,
        n_mod_since_analyze AS modified,
        GREATEST(last_vacuum, last_autovacuum) AS vacuumed, GREATEST(last_analyze, last_autoanalyze) AS analyzed
      FROM pg_catalog.pg_stat_user_tables`,
  )) {
    const dead = n(r['dead']);
    const total = dead + n(r['live']);
    const vacuumed = when(r['vacuumed']);
    if (dead >= T.deadTuples && dead / Math.max(1, total) >= T.deadShare && stale(vacuumed)) {
      out.push({
        check: 'vacuum',
        severity: 'warning',
        object: `${s(r['schema'])}.${s(r['table'])}`,
        table: on(r),
        finding: `Table ${s(r['table'])} has ${dead.toLocaleString('en-US')} dead tuples (${pct(dead / total)}), ${vacuumed ? `last vacuumed ${vacuumed.toISOString()}` : 'never vacuumed'}.`,
        why: 'Dead tuples bloat the table and its indexes and slow every scan until vacuum reclaims them.',
        action: `VACUUM (ANALYZE) ${s(r['schema'])}.${s(r['table'])}; check that autovacuum is on for it and keeps up (autovacuum_vacuum_scale_factor).`,
      });
    }
    const modified = n(r['modified']);
    if (
      modified >= T.deadTuples &&
      modified / Math.max(1, n(r['live'])) >= T.analyzeShare &&
      stale(when(r['analyzed']))
    ) {
      out.push({
        check: 'vacuum',
        severity: 'warning',
        object: `${s(r['schema'])}.${s(r['table'])}`,
        table: on(r),
        finding: `Table ${s(r['table'])} has ${modified.toLocaleString('en-US')} rows changed since its statistics were last gathered.`,
        why: 'Stale statistics mislead the planner into bad plans.',
        action: `ANALYZE ${s(r['schema'])}.${s(r['table'])}.`,
      });
    }
  }
  for (const r of await q(
    client,
    `SELECT n.nspname AS schema, c.relname AS "table", pg_catalog.age(c.relfrozenxid) AS age,
        pg_catalog.current_setting('autovacuum_freeze_max_age')::int8 AS limit
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'm', 't') AND pg_catalog.age(c.relfrozenxid) > $1 * pg_catalog.current_setting('autovacuum_freeze_max_age')::int8`,
    [T.wraparoundShare],
  )) {
    const age = n(r['age']);
    out.push({
      check: 'vacuum',
      severity: age > 1_500_000_000 ? 'critical' : 'warning',
      object: `${s(r['schema'])}.${s(r['table'])}`,
      table: on(r),
      finding: `Table ${s(r['table'])}'s oldest transaction id is ${age.toLocaleString('en-US')} transactions old (autovacuum_freeze_max_age ${n(r['limit']).toLocaleString('en-US')}); ${(2 ** 31 - age).toLocaleString('en-US')} remain before wraparound.`,
      why: 'At about 2 billion PostgreSQL stops accepting writes to prevent transaction-id wraparound.',
      action: `VACUUM (FREEZE) ${s(r['schema'])}.${s(r['table'])}; look for what blocks autovacuum (long transactions, stale replication slots).`,
    });
  }
  return out;
};

const sequence: Check = async (client) => {
  const out: Finding[] = [];
  for (const r of await q(
    client,
    `SELECT schemaname AS schema, sequencename AS "table", last_value AS last, max_value AS max,
        min_value AS min, increment_by AS step
      FROM pg_catalog.pg_sequences WHERE last_value IS NOT NULL`,
  )) {
    const step = n(r['step']);
    const used =
      step > 0
        ? (n(r['last']) - n(r['min'])) / (n(r['max']) - n(r['min']))
        : (n(r['max']) - n(r['last'])) / (n(r['max']) - n(r['min']));
    if (used < T.sequenceShare) continue;
    out.push({
      check: 'sequence',
      severity: used >= 0.9 ? 'critical' : 'warning',
      object: `${s(r['schema'])}.${s(r['table'])}`,
      table: on(r),
      finding: `Sequence ${s(r['table'])} has used ${pct(used)} of its range (last value ${s(r['last'])}, limit ${s(step > 0 ? r['max'] : r['min'])}).`,
      why: 'When a sequence reaches its limit, every insert that needs a new value fails.',
      action:
        'Change the column and the sequence to bigint (ALTER SEQUENCE … AS bigint MAXVALUE …), or plan how to recycle values.',
    });
  }
  return out;
};

const replication: Check = async (client) => {
  const out: Finding[] = [];
  for (const r of await q(
    client,
    `SELECT slot_name AS name, active,
        pg_catalog.pg_wal_lsn_diff(CASE WHEN pg_catalog.pg_is_in_recovery() THEN pg_catalog.pg_last_wal_receive_lsn() ELSE pg_catalog.pg_current_wal_lsn() END, restart_lsn) AS retained
      FROM pg_catalog.pg_replication_slots`,
  )) {
    const retained = n(r['retained'] ?? 0);
    if (r['active'] === true && retained < T.slotRetainedBytes) continue;
    out.push({
      check: 'replication',
      severity: retained >= T.slotRetainedBytes ? 'critical' : 'warning',
      object: s(r['name']),
      table: null,
      finding: `Replication slot ${s(r['name'])} is ${r['active'] === true ? 'active' : 'inactive'} and retains ${bytes(retained)} of WAL.`,
      why: 'A slot keeps WAL (and old row versions for logical slots) until its consumer reads it: the disk fills and vacuum is held back.',
      action:
        'Reconnect its consumer, or drop the slot with pg_drop_replication_slot if it is no longer needed; consider max_slot_wal_keep_size.',
    });
  }
  for (const r of await q(
    client,
    `SELECT application_name AS name, EXTRACT(epoch FROM replay_lag) AS lag
      FROM pg_catalog.pg_stat_replication WHERE replay_lag > $1 * interval '1 second'`,
    [T.replicationLagSeconds],
  )) {
    out.push({
      check: 'replication',
      severity: 'warning',
      object: s(r['name']),
      table: null,
      finding: `Standby ${s(r['name'])} replays ${Math.round(n(r['lag']))} s behind.`,
      why: 'Reads on a lagging standby see old data, and a failover to it loses or waits for the difference.',
      action: 'Check its network, disk and long queries that conflict with replay.',
    });
  }
  return out;
};

const buffer: Check = async (client) => {
  const out: Finding[] = [];
  const [r] = await q(
    client,
    `SELECT (SELECT sum(heap_blks_hit) FROM pg_catalog.pg_statio_user_tables) AS th,
      (SELECT sum(heap_blks_read) FROM pg_catalog.pg_statio_user_tables) AS tr,
      (SELECT sum(idx_blks_hit) FROM pg_catalog.pg_statio_user_indexes) AS ih,
      (SELECT sum(idx_blks_read) FROM pg_catalog.pg_statio_user_indexes) AS ir`,
  );
  for (const [what, hit, read] of [
    ['table', n(r!['th'] ?? 0), n(r!['tr'] ?? 0)],
    ['index', n(r!['ih'] ?? 0), n(r!['ir'] ?? 0)],
  ] as const) {
    if (hit + read < T.cacheMinBlocks) continue;
    const ratio = hit / (hit + read);
    if (ratio >= T.cacheHitRatio) continue;
    out.push({
      check: 'buffer',
      severity: 'warning',
      object: null,
      table: null,
      finding: `The ${what} cache hit ratio is ${pct(ratio)} (${read.toLocaleString('en-US')} blocks read from outside shared buffers).`,
      why: 'Reads that miss shared buffers go to the operating system or disk and are slower.',
      action:
        'Raise shared_buffers if memory allows; look for sequential scans of large tables (get_top_queries, explain_query).',
    });
  }
  return out;
};

const constraint: Check = async (client) => {
  const out: Finding[] = [];
  for (const r of await q(
    client,
    `SELECT n.nspname AS schema, t.relname AS "table", c.conname AS name
      FROM pg_catalog.pg_constraint c JOIN pg_catalog.pg_class t ON t.oid = c.conrelid
      JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
      WHERE NOT c.convalidated AND n.nspname NOT IN ('pg_catalog', 'information_schema')`,
  )) {
    out.push({
      check: 'constraint',
      severity: 'warning',
      object: `${s(r['schema'])}.${s(r['name'])}`,
      table: on(r),
      finding: `Constraint ${s(r['name'])} on ${s(r['table'])} is NOT VALID.`,
      why: 'Rows that existed before it was added were never checked and may break it.',
      action: `ALTER TABLE ${s(r['schema'])}.${s(r['table'])} VALIDATE CONSTRAINT ${s(r['name'])} (it takes a light lock).`,
    });
  }
  return out;
};

export const CHECKS: Record<HealthType, Check> = {
  index,
  connection,
  vacuum,
  sequence,
  replication,
  buffer,
  constraint,
};
