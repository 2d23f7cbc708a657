// Server facts and statistics as pg:// JSON resources. Statistics views are read with
// to_jsonb(row) so every column a server version has comes through without naming
// version-specific ones; addresses and connection strings are removed.
import type { CallContext, ResourceSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { looksLikeCredential, WITHHELD } from '../credentials.js';
import { jsonContents, readOnlyCall } from '../common/support.js';

export interface ServerResourceDeps {
  db: Database;
  statementTimeoutMs: number;
  allowWrites: boolean;
  /** Include other sessions' SQL text in pg://stat/activity (it may hold secrets). */
  showQueryText?: boolean;
}

/** Settings worth knowing when tuning or explaining a query; nothing secret or host-revealing. */
const SETTINGS_SHOWN: readonly string[] = [
  'server_version',
  'server_encoding',
  'client_encoding',
  'lc_collate',
  'lc_ctype',
  'TimeZone',
  'DateStyle',
  'IntervalStyle',
  'search_path',
  'default_transaction_isolation',
  'default_transaction_read_only',
  'statement_timeout',
  'lock_timeout',
  'idle_in_transaction_session_timeout',
  'max_connections',
  'superuser_reserved_connections',
  'shared_buffers',
  'effective_cache_size',
  'work_mem',
  'hash_mem_multiplier',
  'maintenance_work_mem',
  'temp_buffers',
  'max_parallel_workers',
  'max_parallel_workers_per_gather',
  'max_worker_processes',
  'parallel_setup_cost',
  'parallel_tuple_cost',
  'random_page_cost',
  'seq_page_cost',
  'cpu_tuple_cost',
  'cpu_index_tuple_cost',
  'cpu_operator_cost',
  'effective_io_concurrency',
  'default_statistics_target',
  'jit',
  'enable_seqscan',
  'enable_indexscan',
  'enable_bitmapscan',
  'enable_hashjoin',
  'enable_mergejoin',
  'enable_nestloop',
  'enable_partition_pruning',
  'constraint_exclusion',
  'from_collapse_limit',
  'join_collapse_limit',
  'autovacuum',
  'autovacuum_naptime',
  'autovacuum_vacuum_scale_factor',
  'autovacuum_analyze_scale_factor',
  'track_io_timing',
  'track_activities',
  'track_counts',
  'log_min_duration_statement',
  'wal_level',
  'max_wal_size',
  'checkpoint_timeout',
  'synchronous_commit',
  'max_wal_senders',
  'max_replication_slots',
  'hot_standby',
  'shared_preload_libraries',
  'block_size',
  'max_locks_per_transaction',
];

// pgmcp sets these transaction-locally for every call; the session's own value is reset_val.
const OVERRIDDEN = new Set(['statement_timeout', 'idle_in_transaction_session_timeout']);

const SYSTEM_INFO_SQL = `SELECT pg_catalog.version() AS full_version,
  pg_catalog.current_setting('server_version') AS version,
  pg_catalog.current_setting('server_version_num')::int AS version_num,
  pg_catalog.current_database() AS database, current_user AS "user",
  pg_catalog.pg_encoding_to_char(d.encoding) AS encoding,
  pg_catalog.current_setting('TimeZone') AS timezone,
  pg_catalog.pg_postmaster_start_time()::text AS started_at,
  extract(epoch FROM pg_catalog.now() - pg_catalog.pg_postmaster_start_time())::float8 AS uptime_seconds,
  pg_catalog.pg_database_size(d.oid)::float8 AS size_bytes,
  pg_catalog.pg_is_in_recovery() AS in_recovery,
  (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object('name', e.extname,
      'version', e.extversion, 'schema', n.nspname) ORDER BY e.extname), '[]'::jsonb)
     FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace) AS extensions
FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database()`;

const SETTINGS_SQL = `SELECT s.name, s.setting, s.reset_val, s.unit, s.category, s.short_desc, s.source
FROM pg_catalog.pg_settings s WHERE s.name = ANY ($1::text[]) ORDER BY s.name`;

const ADDRESSES = `- 'client_addr' - 'client_hostname' - 'client_port'`;

const activitySql = (
  showQuery: boolean,
): string => `SELECT pg_catalog.to_jsonb(a) ${ADDRESSES}${showQuery ? '' : ` - 'query'`}
  || pg_catalog.jsonb_build_object('query_seconds',
       extract(epoch FROM pg_catalog.now() - a.query_start)::float8) AS row
FROM pg_catalog.pg_stat_activity a
WHERE a.pid <> pg_catalog.pg_backend_pid()
ORDER BY a.backend_start NULLS LAST, a.pid`;

const REPLICATION_SQL = `SELECT pg_catalog.pg_is_in_recovery() AS in_recovery,
  (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(r) ${ADDRESSES} ORDER BY r.pid), '[]'::jsonb)
     FROM pg_catalog.pg_stat_replication r) AS replicas,
  (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(s) ORDER BY s.slot_name), '[]'::jsonb)
     FROM pg_catalog.pg_replication_slots s) AS slots,
  (SELECT coalesce(pg_catalog.jsonb_agg(pg_catalog.to_jsonb(w) - 'conninfo' - 'sender_host' - 'sender_port'), '[]'::jsonb)
     FROM pg_catalog.pg_stat_wal_receiver w) AS wal_receiver,
  CASE WHEN pg_catalog.pg_is_in_recovery() THEN pg_catalog.jsonb_build_object(
    'receive_lsn', pg_catalog.pg_last_wal_receive_lsn()::text,
    'replay_lsn', pg_catalog.pg_last_wal_replay_lsn()::text,
    'last_replayed_at', pg_catalog.pg_last_xact_replay_timestamp()::text) END AS standby`;

const DATABASE_STATS_SQL = `SELECT pg_catalog.to_jsonb(d) AS stats,
  pg_catalog.pg_database_size(d.datid)::float8 AS size_bytes
FROM pg_catalog.pg_stat_database d WHERE d.datname = pg_catalog.current_database()`;

function ratio(hit: unknown, read: unknown): number | null {
  const h = Number(hit);
  const r = Number(read);
  return h + r > 0 ? Math.round((h / (h + r)) * 10_000) / 10_000 : null;
}

export function createServerResources(deps: ServerResourceDeps): ResourceSpec[] {
  const query = <T>(ctx: CallContext, work: Parameters<typeof readOnlyCall<T>>[3]): Promise<T> =>
    readOnlyCall(deps.db, deps.statementTimeoutMs, ctx, work);

  const resource = (
    uri: string,
    name: string,
    title: string,
    description: string,
    read: (ctx: CallContext) => Promise<unknown>,
  ): ResourceSpec => ({
    uri,
    name,
    title,
    description,
    mimeType: 'application/json',
    read: async (ctx) => jsonContents(uri, await read(ctx)),
  });

  return [
    resource(
      'pg://system_info',
      'system_info',
      'PostgreSQL system information',
      'Server version, database, current user, encoding, time zone, uptime, database size and installed extensions.',
      (ctx) =>
        query(ctx, async (client) => {
          const row = (await client.query(SYSTEM_INFO_SQL)).rows[0] as Record<string, unknown>;
          return {
            version: row['version'],
            versionNumber: row['version_num'],
            fullVersion: row['full_version'],
            database: row['database'],
            user: row['user'],
            encoding: row['encoding'],
            timezone: row['timezone'],
            startedAt: row['started_at'],
            uptimeSeconds: row['uptime_seconds'],
            sizeBytes: row['size_bytes'],
            inRecovery: row['in_recovery'],
            allowWrites: deps.allowWrites,
            extensions: row['extensions'],
          };
        }),
    ),
    resource(
      'pg://settings',
      'settings',
      'PostgreSQL settings',
      'Settings that matter for query performance and behaviour (memory, planner costs, parallelism, timeouts, autovacuum, WAL): name, setting, unit, category, description, source.',
      (ctx) =>
        query(ctx, async (client) => {
          const { rows } = await client.query<Record<string, string | null>>(SETTINGS_SQL, [
            SETTINGS_SHOWN,
          ]);
          return {
            settings: rows.map((r) => ({
              name: r['name'],
              setting: OVERRIDDEN.has(r['name']!) ? r['reset_val'] : r['setting'],
              unit: r['unit'],
              category: r['category'],
              description: r['short_desc'],
              source: r['source'],
            })),
          };
        }),
    ),
    resource(
      'pg://stat/activity',
      'stat_activity',
      'Current activity',
      `Sessions of the server from pg_stat_activity (this connection excluded): state, wait events, transaction and query start times${deps.showQueryText ? ', and the SQL text' : '; the SQL text is not shown (server configuration)'}. Client addresses are not shown.`,
      (ctx) =>
        query(ctx, async (client) => {
          const { rows } = await client.query<{ row: unknown }>(
            activitySql(deps.showQueryText === true),
          );
          // Another session's SQL may be CREATE ROLE … PASSWORD '…': never shown.
          const sessions = rows.map((r) => {
            const row = r.row as Record<string, unknown>;
            return typeof row['query'] === 'string' && looksLikeCredential(row['query'])
              ? { ...row, query: WITHHELD }
              : row;
          });
          return { queryTextShown: deps.showQueryText === true, sessions };
        }),
    ),
    resource(
      'pg://stat/replication',
      'stat_replication',
      'Replication status',
      'Whether this server is a standby, its replicas (pg_stat_replication) with their lag, replication slots and the WAL receiver. Addresses and connection strings are not shown.',
      (ctx) =>
        query(ctx, async (client) => {
          const row = (await client.query(REPLICATION_SQL)).rows[0] as Record<string, unknown>;
          return {
            inRecovery: row['in_recovery'],
            replicas: row['replicas'],
            slots: row['slots'],
            walReceiver: row['wal_receiver'],
            standby: row['standby'],
          };
        }),
    ),
    resource(
      'pg://stat/database',
      'stat_database',
      'Database statistics',
      'Counters of this database from pg_stat_database (transactions, block reads and hits, rows read and written, temp files, deadlocks) with the cache hit ratio and the database size.',
      (ctx) =>
        query(ctx, async (client) => {
          const row = (await client.query(DATABASE_STATS_SQL)).rows[0] as
            { stats: Record<string, unknown>; size_bytes: number } | undefined;
          const stats = row?.stats ?? {};
          return {
            ...stats,
            cacheHitRatio: ratio(stats['blks_hit'], stats['blks_read']),
            sizeBytes: row?.size_bytes ?? null,
          };
        }),
    ),
  ];
}
