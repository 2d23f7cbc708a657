// Legitimate analytics that must pass the same walls: a guard that refuses these is too strict
// (the failure Postgres MCP Pro's allow-list is known for). Same placeholders as corpus.ts.
// The fixture (harness.ts): {{s}}.sentinel has ids 1..50, grp = a/b/c for id % 3 = 0/1/2,
// amount = id * 1.25, doc = {id, tags: ["t<id % 4>", "all"], score: id % 7},
// created = 2024-01-01 + id days.
import type { Tool } from './corpus.js';
import { CATALOG_LEGIT } from './catalog.js';
import { INDIRECTION_LEGIT } from './indirection.js';

export interface LegitEntry {
  name: string;
  tool: Tool;
  args: Record<string, unknown>;
  /** The first cell (query_database) or the count (count_rows); undefined: success is enough. */
  expected?: unknown;
  /** An extension the entry needs; where it is not installed, `fallback` runs instead. */
  requires?: string;
  fallback?: Record<string, unknown>;
}

function q(
  name: string,
  query: string,
  expected?: unknown,
  extra: Record<string, unknown> = {},
): LegitEntry {
  return { name, tool: 'query_database', args: { query, ...extra }, expected };
}

const T = '{{s}}.sentinel';

export const LEGITIMATE: readonly LegitEntry[] = [
  q(
    'CTE',
    `WITH g AS (SELECT grp, count(*)::int AS n FROM ${T} GROUP BY grp) SELECT sum(n)::int FROM g`,
    50,
  ),
  q(
    'nested CTEs',
    `WITH a AS (SELECT id FROM ${T} WHERE id <= 10), b AS (WITH c AS (SELECT id * 2 AS d FROM a) SELECT max(d) AS m FROM c) SELECT m FROM b`,
    20,
  ),
  q(
    'window frame',
    `SELECT (sum(amount) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW))::text FROM ${T} ORDER BY id OFFSET 1 LIMIT 1`,
    '3.75',
  ),
  q(
    'row_number per partition',
    `SELECT min(id) FROM (SELECT id, row_number() OVER (PARTITION BY grp ORDER BY amount DESC) AS rn FROM ${T}) x WHERE rn = 1`,
    48,
  ),
  q(
    'lag',
    `SELECT (id - lag(id) OVER (ORDER BY id))::int FROM ${T} ORDER BY id OFFSET 1 LIMIT 1`,
    1,
  ),
  q(
    'named window',
    `SELECT (sum(id) OVER w)::int FROM ${T} WINDOW w AS (ORDER BY id) ORDER BY id LIMIT 1`,
    1,
  ),
  q(
    'percentile_cont WITHIN GROUP',
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY id) FROM ${T}`,
    25.5,
  ),
  q('mode() WITHIN GROUP', `SELECT mode() WITHIN GROUP (ORDER BY grp) FROM ${T}`, 'b'),
  q(
    'LATERAL',
    `SELECT x.v FROM ${T} s CROSS JOIN LATERAL (SELECT s.id * 10 AS v) x WHERE s.id = 7`,
    70,
  ),
  q('JSON operators', `SELECT doc ->> 'score' FROM ${T} WHERE doc @> '{"id": 10}'`, '3'),
  q(
    'jsonb_path_query',
    `SELECT jsonb_path_query(doc, '$.tags[0]') #>> '{}' FROM ${T} WHERE id = 5`,
    't1',
  ),
  q(
    'jsonb_array_elements',
    `SELECT count(*)::int FROM ${T}, jsonb_array_elements(doc -> 'tags') t`,
    100,
  ),
  q('EXPLAIN', `EXPLAIN SELECT * FROM ${T} WHERE id = 1`),
  q('EXPLAIN ANALYZE of a read', `EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM ${T}`),
  {
    ...q(
      'extension function (pg_trgm similarity)',
      "SELECT similarity('postgres', 'postgre') > 0.5",
      true,
    ),
    requires: 'pg_trgm',
    fallback: { query: "SELECT 'postgres' ILIKE 'postgre%'" },
  },
  q(
    'small generate_series',
    "SELECT count(*)::int FROM generate_series('2024-01-01'::date, '2024-01-10'::date, interval '1 day')",
    10,
  ),
  q(
    'regexp_matches',
    "SELECT string_agg(m[1], ',') FROM regexp_matches('a1b22c333', '\\d+', 'g') AS m",
    '1,22,333',
  ),
  q(
    'ROLLUP',
    `SELECT count(*)::int FROM (SELECT grp, sum(amount) FROM ${T} GROUP BY ROLLUP (grp)) x`,
    4,
  ),
  q('FILTER', `SELECT (count(*) FILTER (WHERE grp = 'a'))::int FROM ${T}`, 16),
  q(
    'DISTINCT ON',
    `SELECT count(*)::int FROM (SELECT DISTINCT ON (grp) grp, id FROM ${T} ORDER BY grp, id DESC) x`,
    3,
  ),
  q(
    'bounded recursive CTE',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT sum(n)::int FROM r',
    55,
  ),
  q(
    'INTERSECT',
    `SELECT count(*)::int FROM (SELECT id FROM ${T} WHERE id < 10 INTERSECT SELECT id FROM ${T} WHERE id > 5) x`,
    4,
  ),
  q(
    'date_trunc and to_char',
    `SELECT to_char(date_trunc('month', created), 'YYYY-MM') FROM ${T} WHERE id = 40`,
    '2024-02',
  ),
  q(
    'arrays and ANY',
    `SELECT array_length(array_agg(id), 1) FROM ${T} WHERE id = ANY (ARRAY[1, 2, 3])`,
    3,
  ),
  q(
    'full-text search',
    "SELECT to_tsvector('english', 'The quick brown foxes') @@ to_tsquery('english', 'fox')",
    true,
  ),
  q('TABLESAMPLE', `SELECT count(*)::int FROM ${T} TABLESAMPLE SYSTEM (100)`, 50),
  q('composite field selection', `SELECT (s).name FROM ${T} s WHERE id = 3`, 'item 03'),
  q('E-string escapes', "SELECT E'tab\\there'", 'tab\there'),
  q(
    'a literal that mentions DELETE',
    "SELECT 'please delete; drop table x' AS v",
    'please delete; drop table x',
  ),
  q('VALUES', "VALUES (1, 'a'), (2, 'b')", 1),
  q('TABLE', `TABLE ${T}`),
  q(
    'catalog size functions',
    `SELECT pg_size_pretty(pg_total_relation_size('${T}')) IS NOT NULL`,
    true,
  ),
  q('SHOW', 'SHOW transaction_read_only', 'on'),
  q('reading a setting', "SELECT current_setting('transaction_read_only')", 'on'),
  q('parameters', `SELECT count(*)::int FROM ${T} WHERE grp = $1`, 16, { params: ['a'] }),
  q('paging with offset', `SELECT id FROM ${T} ORDER BY id`, 41, { offset: 40, limit: 5 }),
  {
    name: 'count_rows',
    tool: 'count_rows',
    args: { schema: '{{s}}', table: 'sentinel' },
    expected: 50,
  },
  {
    name: 'count_rows with a filter',
    tool: 'count_rows',
    args: { schema: '{{s}}', table: 'sentinel', where: "grp = 'a' AND amount > 10" },
    expected: 14,
  },
  {
    name: 'count_rows with JSON and dates',
    tool: 'count_rows',
    args: {
      schema: '{{s}}',
      table: 'sentinel',
      where: "doc ->> 'score' = '0' AND created < date '2024-03-01'",
    },
    expected: 7,
  },
  ...INDIRECTION_LEGIT,
  ...CATALOG_LEGIT,
];
