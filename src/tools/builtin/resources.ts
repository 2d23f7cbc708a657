// The pg:// resources: server facts and statistics as JSON, and two templates that describe
// a schema or a table from the catalog (completion included). Statistics views are read
// with to_jsonb(row) so every column a server version has comes through without naming
// version-specific ones; addresses and connection strings are removed.
import type pg from 'pg';
import type { Catalog, CatalogSnapshot, RelationDescriptor } from '../../catalog/index.js';
import { byText, loadDetails } from '../../catalog/index.js';
import type { CallContext, ResourceSpec, ResourceTemplateSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { compileUriTemplate } from '../uri-template.js';
import { KIND_LABELS } from './schema-text.js';
import { catalogIsStale, locateRelation, schemaCatalogIsStale, schemaExists } from './locate.js';
import { jsonContents, readOnlyCall, resourceNotFound } from './support.js';

export interface ResourceDeps {
  db: Database;
  catalog: Catalog;
  statementTimeoutMs: number;
  allowWrites: boolean;
  /** Include other sessions' SQL text in pg://stat/activity (it may hold secrets). */
  showQueryText?: boolean;
}

export const SCHEMA_TEMPLATE = 'pg://schema/{schema}';
export const TABLE_TEMPLATE = 'pg://table/{schema}/{table}';

/** Settings worth knowing when tuning or explaining a query; nothing secret or host-revealing. */
export const SETTINGS_SHOWN: readonly string[] = [
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

export function describeSchema(snapshot: CatalogSnapshot, schemaName: string): unknown {
  const schema = snapshot.schema(schemaName)!;
  const relations = snapshot.relationsOf(schemaName).filter((r) => !(r.isPartition && r.parent));
  return {
    schema: schema.name,
    description: schema.comment,
    tables: relations.map((r) => ({
      name: r.name,
      type: KIND_LABELS[r.kind],
      description: r.comment,
      rowEstimate: r.rowEstimate,
      sizeEstimateBytes: r.kind === 'view' ? null : r.sizeEstimateBytes,
      columns: r.columns.length,
      hasVectorColumns: r.hasVectors,
      ...(r.partitions.length > 0
        ? { partitions: r.partitions.map((p) => `${p.schema}.${p.name}`) }
        : {}),
    })),
  };
}

function incomingKeys(snapshot: CatalogSnapshot, rel: RelationDescriptor): unknown[] {
  const out: unknown[] = [];
  for (const other of snapshot.relations) {
    for (const fk of other.foreignKeys) {
      if (fk.references.schema === rel.schema && fk.references.table === rel.name) {
        out.push({
          schema: other.schema,
          table: other.name,
          name: fk.name,
          columns: fk.columns,
          referencedColumns: fk.references.columns,
        });
      }
    }
  }
  return out;
}

export function describeTable(
  snapshot: CatalogSnapshot,
  rel: RelationDescriptor,
  details:
    | {
        sizeBytes: number | null;
        viewDefinition: string | null;
        indexDefinitions: Map<string, string>;
      }
    | undefined,
): unknown {
  return {
    schema: rel.schema,
    name: rel.name,
    type: KIND_LABELS[rel.kind],
    description: rel.comment,
    rowEstimate: rel.rowEstimate,
    sizeBytes: details?.sizeBytes ?? null,
    selectable: rel.selectable,
    columns: rel.columns.map((c) => ({
      name: c.name,
      position: c.position,
      type: c.dataType,
      nullable: c.nullable,
      default: c.default,
      identity: c.identity,
      generated: c.generated,
      description: c.comment,
      primaryKey: c.isPrimaryKey,
      unique: c.isUnique,
      indexed: c.isIndexed,
      references: c.references,
      vector: c.vector,
      masked: c.masked,
    })),
    primaryKey: rel.primaryKey,
    uniqueKeys: rel.uniqueKeys,
    foreignKeys: rel.foreignKeys,
    referencedBy: incomingKeys(snapshot, rel),
    indexes: rel.indexes.map((i) => ({
      ...i,
      definition: details?.indexDefinitions.get(i.name) ?? null,
    })),
    partitionOf: rel.parent ? `${rel.parent.schema}.${rel.parent.name}` : null,
    partitionBound: rel.partitionBound,
    partitionKey: rel.partitionKey,
    partitions: rel.partitions.map((p) => `${p.schema}.${p.name}`),
    ...(rel.kind === 'view' || rel.kind === 'materialized_view'
      ? { viewDefinition: details?.viewDefinition ?? null }
      : {}),
  };
}

function prefixed(values: Iterable<string>, prefix: string): string[] {
  const lower = prefix.toLowerCase();
  return [...new Set(values)].filter((v) => v.toLowerCase().startsWith(lower)).sort(byText);
}

/** Schema names for completion: visible schemas that hold at least one relation. */
export async function completeSchema(catalog: Catalog, value: string): Promise<string[]> {
  const snapshot = await catalog.snapshot();
  return prefixed(
    snapshot.schemas.filter((s) => snapshot.relationsOf(s.name).length > 0).map((s) => s.name),
    value,
  );
}

/** Table names for completion, within `schema` when one was entered. */
export async function completeTable(
  catalog: Catalog,
  value: string,
  schema: string | undefined,
): Promise<string[]> {
  const snapshot = await catalog.snapshot();
  const relations = schema ? snapshot.relationsOf(schema) : snapshot.relations;
  return prefixed(
    relations.map((r) => r.name),
    value,
  );
}

export function createBuiltinResources(deps: ResourceDeps): {
  resources: ResourceSpec[];
  templates: ResourceTemplateSpec[];
} {
  const { db, catalog } = deps;
  const query = <T>(ctx: CallContext, work: Parameters<typeof readOnlyCall<T>>[3]): Promise<T> =>
    readOnlyCall(db, deps.statementTimeoutMs, ctx, work);

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

  const resources: ResourceSpec[] = [
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
          return { queryTextShown: deps.showQueryText === true, sessions: rows.map((r) => r.row) };
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

  const matchSchema = compileUriTemplate(SCHEMA_TEMPLATE);
  const matchTable = compileUriTemplate(TABLE_TEMPLATE);

  /** The snapshot; reloaded once when it lacks something the database has (created since). */
  const snapshotWith = async (
    ctx: CallContext,
    has: (s: CatalogSnapshot) => boolean,
    stale: (client: pg.PoolClient) => Promise<boolean>,
  ): Promise<CatalogSnapshot> => {
    const snapshot = await catalog.snapshot();
    if (has(snapshot) || !(await query(ctx, stale))) return snapshot;
    catalog.invalidate();
    return catalog.snapshot();
  };

  const templates: ResourceTemplateSpec[] = [
    {
      uriTemplate: SCHEMA_TEMPLATE,
      name: 'schema',
      title: 'Schema overview',
      description:
        'The tables and views of one schema with their descriptions, row estimates and estimated sizes (partitions listed under their parent).',
      mimeType: 'application/json',
      match: matchSchema,
      async read(uri, vars, ctx) {
        const name = vars['schema'] ?? '';
        const snapshot = await snapshotWith(
          ctx,
          (s) => s.schema(name) !== undefined,
          async (client) =>
            schemaCatalogIsStale(catalog.policy, name) && (await schemaExists(client, name)),
        );
        if (!snapshot.schema(name)) {
          throw resourceNotFound(
            uri,
            `Schema not found: ${name}. Read pg://system_info or call get_schema_info to see the schemas.`,
          );
        }
        return jsonContents(uri, describeSchema(snapshot, name));
      },
      async complete(argument, value) {
        return { values: argument === 'schema' ? await completeSchema(catalog, value) : [] };
      },
    },
    {
      uriTemplate: TABLE_TEMPLATE,
      name: 'table',
      title: 'Table details',
      description:
        'One table or view: columns (type, nullability, default, identity, comment), primary, unique and foreign keys, incoming foreign keys, indexes with definitions, partitions, exact size.',
      mimeType: 'application/json',
      match: matchTable,
      async read(uri, vars, ctx) {
        const schema = vars['schema'] ?? '';
        const table = vars['table'] ?? '';
        const snapshot = await snapshotWith(
          ctx,
          (s) => s.relation(schema, table) !== undefined,
          async (client) => {
            const found = await locateRelation(client, schema, table);
            return (
              found !== null &&
              found.schema === schema &&
              found.name === table &&
              catalogIsStale(catalog.policy, found)
            );
          },
        );
        const rel = snapshot.relation(schema, table);
        if (!rel) {
          throw resourceNotFound(
            uri,
            `Table not found: ${schema}.${table}. Read pg://schema/${schema} or call get_schema_info to see the tables.`,
          );
        }
        const details = await query(ctx, (client) => loadDetails(client, [rel], catalog.policy));
        return jsonContents(uri, describeTable(snapshot, rel, details.get(rel.oid)));
      },
      async complete(argument, value, context) {
        if (argument === 'schema') return { values: await completeSchema(catalog, value) };
        if (argument === 'table')
          return { values: await completeTable(catalog, value, context['schema']) };
        return { values: [] };
      },
    },
  ];

  return { resources, templates };
}
