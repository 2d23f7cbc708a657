// get_top_queries: the statements pg_stat_statements ranks highest, normalised (constants as
// $1 …), with their share of the database's total. A statement that names a relation the
// access policy hides is left out (counted, never shown), as is one that reads like a
// credential.
import type pg from 'pg';
import type { ToolSpec } from '../../core/specs.js';
import { looksLikeCredential } from '../credentials.js';
import { checkStatement, loadSqlParser } from '../sql-guard.js';
import { readOnlyAnnotations, readOnlyCall } from '../common/support.js';
import { resolveRelations } from '../query/relation-access.js';
import { COLUMNS_SCHEMA, columnsOf, round, tableResult, type DbaDeps } from './deps.js';
import { ALL_STATS_ADVICE, readsAllStats, requireStatStatements } from './requirements.js';

const ORDER = {
  total_time: 's.total_exec_time DESC',
  mean_time: 's.mean_exec_time DESC',
  // Resources: time, blocks read from disk or cache, and temporary blocks, each as a share of the total.
  resources:
    '(s.total_exec_time / NULLIF(t.time, 0) + (s.shared_blks_read + s.shared_blks_hit)::float8 / NULLIF(t.blocks, 0) + (s.temp_blks_read + s.temp_blks_written)::float8 / NULLIF(t.temp, 0)) DESC NULLS LAST',
} as const;

const topSql = (schema: string, sortBy: keyof typeof ORDER): string => `WITH s AS (
  SELECT * FROM ${schema}.pg_stat_statements
  WHERE dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())
), t AS (
  SELECT sum(total_exec_time) AS time, sum(shared_blks_read + shared_blks_hit)::float8 AS blocks,
         sum(temp_blks_read + temp_blks_written)::float8 AS temp FROM s
)
SELECT s.query, s.calls::int8 AS calls, s.total_exec_time AS total_ms, s.mean_exec_time AS mean_ms,
  s.rows::int8 AS rows, s.shared_blks_hit::int8 AS shared_hit, s.shared_blks_read::int8 AS shared_read,
  (s.temp_blks_read + s.temp_blks_written)::int8 AS temp_blocks,
  COALESCE(100 * s.total_exec_time / NULLIF(t.time, 0), 0) AS time_share,
  COALESCE(100 * (s.shared_blks_read + s.shared_blks_hit) / NULLIF(t.blocks, 0), 0) AS blocks_share
FROM s, t ORDER BY ${ORDER[sortBy]} LIMIT $1`;

interface Row {
  query: string;
  calls: string;
  total_ms: number;
  mean_ms: number;
  rows: string;
  shared_hit: string;
  shared_read: string;
  temp_blocks: string;
  time_share: number;
  blocks_share: number;
}

/** Whether the access policy lets the statement be shown: every relation it names is visible. */
async function shown(client: pg.ClientBase, deps: DbaDeps, query: string): Promise<boolean> {
  if (looksLikeCredential(query)) return false;
  if (!deps.policy.active) return true;
  try {
    const guard = checkStatement(query, { allowWrites: true, deniedFunctions: [] });
    const resolved = await resolveRelations(client, guard.relations);
    const unresolved = guard.relations.length > resolved.length;
    return !unresolved && resolved.every((r) => deps.policy.tableVisible(r.schema, r.name));
  } catch {
    return false; // not parsed: it cannot be judged, so it is not shown
  }
}

export function createGetTopQueriesTool(deps: DbaDeps): ToolSpec {
  return {
    name: 'get_top_queries',
    title: 'Top queries',
    description:
      "The statements that cost the database most, from pg_stat_statements (constants shown as $1 …): calls, total and mean time, rows, shared blocks hit and read, temporary blocks and their share of the total. sort_by: total_time, mean_time, or resources (time, block and temp I/O shares together; the default). Needs pg_stat_statements; other roles' statements need pg_read_all_stats.",
    inputSchema: {
      type: 'object',
      properties: {
        sort_by: {
          type: 'string',
          enum: ['total_time', 'mean_time', 'resources'],
          default: 'resources',
        },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      },
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        columns: COLUMNS_SCHEMA,
        rows: { type: 'array', items: { type: 'array' } },
        withheld: { type: 'integer' },
        notes: { type: 'array', items: { type: 'string' } },
      },
      required: ['columns', 'rows', 'withheld', 'notes'],
    },
    annotations: readOnlyAnnotations('Top queries'),
    async call(args, ctx) {
      const sortBy = ((args['sort_by'] as string | undefined) ?? 'resources') as keyof typeof ORDER;
      const limit = (args['limit'] as number | undefined) ?? 10;
      await loadSqlParser();
      const { rows, withheld, allStats } = await readOnlyCall(
        deps.db,
        deps.statementTimeoutMs,
        ctx,
        async (client) => {
          const schema = await requireStatStatements(client);
          const allStats = await readsAllStats(client);
          const { rows } = await client.query<Row>(topSql(schema, sortBy), [limit * 3]);
          const kept: Row[] = [];
          let withheld = 0;
          for (const row of rows) {
            if (kept.length >= limit) break;
            if (row.query === '<insufficient privilege>' || !(await shown(client, deps, row.query)))
              withheld++;
            else kept.push(row);
          }
          return { rows: kept, withheld, allStats };
        },
      );
      const columns = columnsOf([
        ['query', 'text'],
        ['calls', 'bigint'],
        ['total_ms', 'double precision'],
        ['mean_ms', 'double precision'],
        ['rows', 'bigint'],
        ['shared_blks_hit', 'bigint'],
        ['shared_blks_read', 'bigint'],
        ['temp_blks', 'bigint'],
        ['time_pct', 'double precision'],
        ['blocks_pct', 'double precision'],
      ]);
      const table = rows.map((r) => [
        r.query,
        Number(r.calls),
        round(r.total_ms),
        round(r.mean_ms),
        Number(r.rows),
        Number(r.shared_hit),
        Number(r.shared_read),
        Number(r.temp_blocks),
        round(r.time_share),
        round(r.blocks_share),
      ]);
      const notes: string[] = [];
      if (!allStats) notes.push(ALL_STATS_ADVICE);
      if (withheld > 0)
        notes.push(
          `${withheld} statement(s) withheld: they name relations this caller may not see, or other roles' statements this role cannot read.`,
        );
      const text = [
        `Database: ${deps.db.name}`,
        `Top ${rows.length} statements by ${sortBy} (pg_stat_statements):`,
        columns.map((c) => c.name).join('\t'),
        ...table.map((r) => r.map((v) => String(v).replace(/\s+/g, ' ')).join('\t')),
        ...notes.map((n) => `Note: ${n}`),
      ].join('\n');
      return tableResult(text, { columns, rows: table, withheld, notes });
    },
  };
}
