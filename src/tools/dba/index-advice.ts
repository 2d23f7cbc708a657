// analyze_query_indexes and analyze_workload_indexes: candidate indexes from the statements,
// tried hypothetically with HypoPG, chosen greedily within a size budget.
import type pg from 'pg';
import type { ToolSpec } from '../../core/specs.js';
import { isAppError } from '../../core/errors.js';
import { looksLikeCredential } from '../credentials.js';
import { loadSqlParser } from '../sql-guard.js';
import {
  invalidInput,
  readOnlyAnnotations,
  readOnlyCall,
  sameLexerAsParser,
} from '../common/support.js';
import { recommendIndexes, type Advice, type WorkloadStatement } from './advisor.js';
import {
  EXISTING_INDEXES_SQL,
  leadingColumns,
  mergeCandidates,
  type ExistingIndex,
} from './candidates.js';
import { COLUMNS_SCHEMA, columnsOf, mb, round, tableResult, type DbaDeps } from './deps.js';
import { requireHypopg, requireStatStatements } from './requirements.js';
import { prepareStatement, type PreparedStatement } from './statements.js';

export const MAX_QUERIES = 10;
/** How many of the top statements (by total time) the workload analysis reads. */
export const WORKLOAD_STATEMENTS = 50;
const DEFAULT_BUDGET_MB = 10000;
const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema', 'pg_toast']);

const METHOD = {
  type: 'string',
  enum: ['dta', 'llm'],
  default: 'dta',
  description: 'dta: hypothetical indexes tried greedily (the only method pgmcp offers).',
};
const BUDGET = {
  type: 'integer',
  minimum: 1,
  default: DEFAULT_BUDGET_MB,
  description: 'Largest total estimated size of the recommended indexes, in MB.',
};

export const ADVICE_OUTPUT = {
  type: 'object',
  properties: {
    recommendations: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          table: { type: 'string' },
          columns: { type: 'array', items: { type: 'string' } },
          using: { type: 'string' },
          definition: { type: 'string' },
          size_mb: { type: 'number' },
          queries: { type: 'array', items: { type: 'string' } },
          cost_before: { type: 'number' },
          cost_after: { type: 'number' },
        },
        required: [
          'table',
          'columns',
          'using',
          'definition',
          'size_mb',
          'queries',
          'cost_before',
          'cost_after',
        ],
      },
    },
    queries: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          cost_before: { type: 'number' },
          cost_after: { type: 'number' },
        },
        required: ['query', 'cost_before', 'cost_after'],
      },
    },
    columns: COLUMNS_SCHEMA,
    rows: { type: 'array', items: { type: 'array' } },
    skipped: {
      type: 'integer',
      description:
        'Statements left out (not SELECT, refused by the access policy, not explainable).',
    },
  },
  required: ['recommendations', 'queries', 'columns', 'rows', 'skipped'],
} as const;

async function existingIndexes(client: pg.ClientBase, oids: number[]): Promise<ExistingIndex[]> {
  if (oids.length === 0) return [];
  const { rows } = await client.query<{
    schema: string;
    table: string;
    columns: (string | null)[];
  }>(EXISTING_INDEXES_SQL, [oids]);
  return rows.map((r) => ({
    schema: r.schema,
    table: r.table,
    columns: leadingColumns(r.columns),
  }));
}

function checkMethod(args: Record<string, unknown>): void {
  if (args['method'] === 'llm') {
    throw invalidInput(
      'method "llm" is not offered by pgmcp: use method "dta" (the default), which tries hypothetical indexes.',
    );
  }
}

async function advise(
  client: pg.ClientBase,
  prepared: { statement: PreparedStatement; weight: number }[],
  budgetMb: number,
): Promise<Advice> {
  const hypopg = await requireHypopg(client);
  const oids = [...new Set(prepared.flatMap((p) => p.statement.tableOids))];
  const candidates = mergeCandidates(
    prepared.map((p) => p.statement.candidates),
    await existingIndexes(client, oids),
  );
  const statements: WorkloadStatement[] = prepared.map((p) => ({
    text: p.statement.text,
    explainable: p.statement.explainable,
    weight: p.weight,
  }));
  return recommendIndexes(client, hypopg, statements, candidates, budgetMb * 1024 * 1024);
}

function answer(
  advice: Advice,
  skipped: number,
  databaseName: string,
): ReturnType<typeof tableResult> {
  const recommendations = advice.recommendations.map((r) => {
    const before = r.queries.reduce((s, q) => s + q.before, 0);
    const after = r.queries.reduce((s, q) => s + q.after, 0);
    return {
      table: `${r.index.schema}.${r.index.table}`,
      columns: r.index.columns,
      using: r.index.using,
      definition: r.definition,
      size_mb: round(r.sizeBytes / 1024 / 1024),
      queries: r.queries.map((q) => q.query),
      cost_before: round(before),
      cost_after: round(after),
    };
  });
  const queries = advice.costs.map((c) => ({
    query: c.query,
    cost_before: round(c.before),
    cost_after: round(c.after),
  }));
  const lines = [`Database: ${databaseName}`, ''];
  if (recommendations.length === 0) {
    lines.push(
      `No index recommended: none of the ${advice.candidatesTried} candidate indexes (columns not already covered by an existing index) lowered the estimated cost by at least 10%.`,
    );
  } else {
    lines.push('Recommended indexes (hypothetical: HypoPG estimates, nothing was created):');
    for (const r of recommendations) {
      lines.push(
        `- ${r.definition};  -- ~${mb(r.size_mb * 1024 * 1024)}, cost of the queries it helps ${r.cost_before} → ${r.cost_after}`,
      );
      for (const q of r.queries) lines.push(`    helps: ${q.replace(/\s+/g, ' ').slice(0, 200)}`);
    }
  }
  lines.push('', 'Queries (estimated cost before → after):');
  for (const q of queries)
    lines.push(
      `- ${q.cost_before} → ${q.cost_after}: ${q.query.replace(/\s+/g, ' ').slice(0, 200)}`,
    );
  if (advice.stoppedEarly)
    lines.push(
      '',
      'The selection stopped after 2,000 EXPLAINs: fewer statements (or max_index_size_mb) may find more.',
    );
  if (skipped > 0)
    lines.push(
      '',
      `${skipped} statement(s) left out (not SELECT, refused by the access policy, or not explainable).`,
    );
  // The recommendations as a table for the clients: one row per index.
  const columns = columnsOf([
    ['definition', 'text'],
    ['size_mb', 'numeric'],
    ['queries', 'text'],
    ['cost_before', 'numeric'],
    ['cost_after', 'numeric'],
  ]);
  const rows = recommendations.map((r) => [
    r.definition,
    r.size_mb,
    r.queries.join('\n'),
    r.cost_before,
    r.cost_after,
  ]);
  return tableResult(lines.join('\n'), { recommendations, queries, columns, rows, skipped });
}

export function createAnalyzeQueryIndexesTool(deps: DbaDeps): ToolSpec {
  return {
    name: 'analyze_query_indexes',
    title: 'Recommend indexes for queries',
    description:
      'Analyze up to 10 SELECT statements and recommend indexes: candidates from their filters, joins and sort orders (columns already covered by an existing index are never proposed) are created hypothetically with HypoPG, kept when they lower the estimated cost by at least 10%, greedily within max_index_size_mb. Each recommendation is a ready CREATE INDEX CONCURRENTLY statement with its estimated size, the queries it helps and their cost before and after. Nothing is created. Needs the hypopg extension.',
    inputSchema: {
      type: 'object',
      properties: {
        queries: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_QUERIES,
          items: { type: 'string', minLength: 1 },
          description: 'Up to 10 SELECT statements.',
        },
        max_index_size_mb: BUDGET,
        method: METHOD,
      },
      required: ['queries'],
      additionalProperties: false,
    },
    outputSchema: ADVICE_OUTPUT as unknown as Record<string, unknown>,
    annotations: readOnlyAnnotations('Recommend indexes for queries'),
    async call(args, ctx) {
      checkMethod(args);
      const queries = args['queries'] as string[];
      const budget = (args['max_index_size_mb'] as number | undefined) ?? DEFAULT_BUDGET_MB;
      await loadSqlParser();
      const advice = await readOnlyCall(deps.db, deps.statementTimeoutMs, ctx, async (client) => {
        await sameLexerAsParser(client);
        await requireHypopg(client);
        const prepared = [];
        for (const q of queries) {
          prepared.push({ statement: await prepareStatement(client, q, deps), weight: 1 });
        }
        return advise(client, prepared, budget);
      });
      return answer(advice, 0, deps.db.name);
    },
  };
}

const TOP_SQL = (schema: string): string => `SELECT s.query, s.calls::float8 AS calls
FROM ${schema}.pg_stat_statements s
WHERE s.dbid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())
  AND s.query ~* '^\\s*(select|with)\\M'
ORDER BY s.total_exec_time DESC LIMIT ${WORKLOAD_STATEMENTS}`;

export function createAnalyzeWorkloadIndexesTool(deps: DbaDeps): ToolSpec {
  return {
    name: 'analyze_workload_indexes',
    title: 'Recommend indexes for the workload',
    description:
      "Recommend indexes for the database's workload: the 50 SELECT statements with the most total time in pg_stat_statements, each weighted by its calls, analysed as analyze_query_indexes does (hypothetical indexes with HypoPG, greedy within max_index_size_mb, columns already covered by an index never proposed). Statements the access policy refuses are left out unnamed. Needs pg_stat_statements and hypopg.",
    inputSchema: {
      type: 'object',
      properties: { max_index_size_mb: BUDGET, method: METHOD },
      additionalProperties: false,
    },
    outputSchema: ADVICE_OUTPUT as unknown as Record<string, unknown>,
    annotations: readOnlyAnnotations('Recommend indexes for the workload'),
    async call(args, ctx) {
      checkMethod(args);
      const budget = (args['max_index_size_mb'] as number | undefined) ?? DEFAULT_BUDGET_MB;
      await loadSqlParser();
      const { advice, skipped } = await readOnlyCall(
        deps.db,
        deps.statementTimeoutMs,
        ctx,
        async (client) => {
          await sameLexerAsParser(client);
          const stats = await requireStatStatements(client);
          await requireHypopg(client);
          const { rows } = await client.query<{ query: string; calls: number }>(TOP_SQL(stats));
          const prepared = [];
          let skipped = 0;
          for (const row of rows) {
            if (looksLikeCredential(row.query)) {
              skipped++;
              continue;
            }
            await client.query('SAVEPOINT pgmcp_stmt');
            try {
              const statement = await prepareStatement(client, row.query, deps);
              if (statement.tables.every((t) => SYSTEM_SCHEMAS.has(t.schema))) {
                await client.query('RELEASE SAVEPOINT pgmcp_stmt');
                continue;
              }
              await explainable(client, statement.explainable);
              await client.query('RELEASE SAVEPOINT pgmcp_stmt');
              prepared.push({ statement, weight: Math.max(1, row.calls) });
            } catch (error) {
              if (!isAppError(error) && !(error instanceof Error && 'code' in error)) throw error;
              await client.query('ROLLBACK TO SAVEPOINT pgmcp_stmt');
              skipped++;
            }
          }
          if (prepared.length === 0) {
            return {
              advice: { recommendations: [], costs: [], candidatesTried: 0, stoppedEarly: false },
              skipped,
            };
          }
          return { advice: await advise(client, prepared, budget), skipped };
        },
      );
      return answer(advice, skipped, deps.db.name);
    },
  };
}

async function explainable(client: pg.ClientBase, sql: string): Promise<void> {
  await client.query({ text: `EXPLAIN ${sql}`, queryMode: 'extended' } as pg.QueryConfig);
}
