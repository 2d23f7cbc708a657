// similarity_search: hybrid retrieval over one table. Candidates come from two recalls run in
// one read-only transaction: the pgvector index (ORDER BY distance LIMIT k, so HNSW or IVFFlat
// answer it) and full-text search (tsvector @@ tsquery, a GIN index when there is one). Rows
// found by either are ranked by BM25 over their chunks, fused with the vector ranking by
// reciprocal rank, and picked by MMR until top_n or max_output_tokens.
import type pg from 'pg';
import type { Catalog } from '../../catalog/index.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { ToolSpec } from '../../core/specs.js';
import { inSpan } from '../../core/tracing.js';
import type { Database } from '../../db/database.js';
import { dimensionMismatch, type EmbeddingProviders } from '../../embeddings/index.js';
import { createAccessPolicy, MASK, NO_RULES, type AccessPolicy } from '../access-policy.js';
import { loadSqlParser } from '../sql-guard.js';
import { screenValue, withheldNote, type Tally } from '../output-screen.js';
import { checkRelationReach } from '../query/indirection.js';
import { createJudge } from '../query/policy-judge.js';
import { vectorColumns } from './search-columns.js';
import {
  estimateTokens,
  rankCandidates,
  selectMmr,
  terms,
  type Candidate,
  type Ranked,
  type SearchMethod,
} from './search-rank.js';
import {
  invalidInput,
  notFound,
  readOnlyAnnotations,
  replicaReadCall,
  sameLexerAsParser,
} from '../common/support.js';
import { DEFAULTS, DESCRIPTION, INPUT_SCHEMA, type Format, type Metric } from './search-input.js';
import { display, DIST, parseVector, plan, recallSql, ROWID, VEC } from './search-sql.js';
import { checkFilter, refuseAttributeCalls, RESTRICT_SEARCH_PATH } from '../common/where-clause.js';

export interface SimilaritySearchDeps {
  db: Database;
  catalog: Catalog;
  embeddings: EmbeddingProviders;
  statementTimeoutMs: number;
  deniedFunctions: readonly string[];
  /** The access policy (for views); none: only credentials are judged. */
  policy?: AccessPolicy;
}

function vectorUnavailable(): AppError {
  return new AppError(
    ErrorCodes.VECTOR_UNAVAILABLE,
    'The pgvector extension is not installed in this database, so there is nothing to search by similarity. A superuser can add it with CREATE EXTENSION vector (the package must be installed on the server); the embedded database has it.',
    { category: 'unavailable' },
  );
}

async function pgvectorSchema(client: pg.ClientBase): Promise<string | null> {
  const { rows } = await client.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_catalog.pg_extension e
     JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`,
  );
  return rows[0]?.schema ?? null;
}

function findRelation(
  catalog: Catalog,
  snapshot: Awaited<ReturnType<Catalog['snapshot']>>,
  name: string,
) {
  const dot = name.indexOf('.');
  const rel =
    dot > 0
      ? snapshot.relation(name.slice(0, dot), name.slice(dot + 1))
      : snapshot
          .relationsNamed(name)
          .sort((a, b) => (a.schema === 'public' ? -1 : b.schema === 'public' ? 1 : 0))[0];
  if (!rel) {
    throw notFound(
      `No table or view '${name}' in database ${catalog.databaseName}. Call get_schema_info with vector_tables_only=true to see the tables with vector columns.`,
    );
  }
  return rel;
}

export function createSimilaritySearchTool(deps: SimilaritySearchDeps): ToolSpec {
  const judge = createJudge(deps.policy ?? createAccessPolicy(NO_RULES));
  const { db, catalog } = deps;
  return {
    name: 'similarity_search',
    title: 'Similarity search',
    description: DESCRIPTION,
    inputSchema: INPUT_SCHEMA,
    annotations: { ...readOnlyAnnotations('Similarity search'), openWorldHint: true },
    async call(args, ctx) {
      const tableName = args['table_name'] as string;
      const queryText = (args['query_text'] as string).trim();
      if (queryText === '') throw invalidInput('query_text is empty.');
      const topN = (args['top_n'] as number | undefined) ?? DEFAULTS.top_n;
      const chunkTokens =
        (args['chunk_size_tokens'] as number | undefined) ?? DEFAULTS.chunk_size_tokens;
      const lambda = (args['lambda'] as number | undefined) ?? DEFAULTS.lambda;
      const budget =
        (args['max_output_tokens'] as number | undefined) ?? DEFAULTS.max_output_tokens;
      const metric = (args['distance_metric'] as Metric | undefined) ?? DEFAULTS.distance_metric;
      const format = (args['output_format'] as Format | undefined) ?? DEFAULTS.output_format;
      const method = (args['method'] as SearchMethod | undefined) ?? DEFAULTS.method;
      const filterArg = args['filter'] as string | undefined;
      await loadSqlParser();

      const snapshot = await catalog.snapshot();
      const rel = findRelation(catalog, snapshot, tableName);
      const provider = deps.embeddings.get(args['provider'] as string | undefined);
      if (vectorColumns(rel).length === 0) {
        const ext = await replicaReadCall(db, deps.statementTimeoutMs, ctx, pgvectorSchema);
        if (ext === null) throw vectorUnavailable();
      }
      const p = plan(rel, args, provider.dimensions);
      if (method !== 'vector' && p.text === null) {
        throw invalidInput(
          `${rel.schema}.${rel.name} has no visible text column for full-text search; use method=vector.`,
        );
      }
      const filter =
        filterArg !== undefined && filterArg.trim() !== ''
          ? checkFilter(
              {
                schema: rel.schema,
                table: rel.name,
                columns: new Set(rel.columns.filter((c) => !c.masked).map((c) => c.name)),
              },
              filterArg,
              deps.deniedFunctions,
            )
          : null;
      if (filter !== null) refuseAttributeCalls(`SELECT 1 WHERE (${filter})`, deps.deniedFunctions);

      // Embed before taking a connection: the embedded database has only one.
      const started = performance.now();
      const embedded = await inSpan('embed', { 'pgmcp.stage': 'embed' }, () =>
        provider.embed([queryText], { purpose: 'query', signal: ctx.signal }),
      );
      ctx.timing?.('embed', performance.now() - started);
      const queryVector = embedded.vectors[0]!;
      const expected = p.vector.vector!.dimensions;
      if (expected !== null && queryVector.length !== expected) {
        throw dimensionMismatch(
          queryVector.length,
          expected,
          `${rel.schema}.${rel.name}.${p.vector.name}`,
          `The column was filled by another model than ${provider.name}/${provider.model}: pass the provider that filled it, or refill it with pgmcp embed.`,
        );
      }
      const words = [...new Set(terms(queryText).filter((w) => /^[a-z0-9]+$/.test(w)))];
      const k = Math.min(Math.max(topN * 5, 50), 1000);

      const recalled = await replicaReadCall(db, deps.statementTimeoutMs, ctx, async (client) => {
        const ext = await pgvectorSchema(client);
        if (ext === null) throw vectorUnavailable();
        // A view is searched through what it reads: a denied table, credentials.
        if (rel.kind === 'view' || rel.kind === 'materialized_view')
          await checkRelationReach(client, judge, rel.schema, rel.name);
        await sameLexerAsParser(client);
        await client.query(RESTRICT_SEARCH_PATH);
        // Let the HNSW scan look at enough neighbours to fill k (pgvector's default is 40).
        await client
          .query(`SELECT pg_catalog.set_config('hnsw.ef_search', $1, true)`, [
            String(Math.max(40, k)),
          ])
          .catch(() => undefined);
        const vectorText = `[${queryVector.join(',')}]`;
        const byVector =
          method === 'text'
            ? []
            : (
                await client.query({
                  text: recallSql(p, ext, metric, filter, 'vector', k),
                  values: [vectorText],
                  queryMode: 'extended',
                } as pg.QueryConfig)
              ).rows;
        const byText =
          method === 'vector' || words.length === 0
            ? []
            : (
                await client.query({
                  text: recallSql(p, ext, metric, filter, 'text', k),
                  values: [vectorText, words.join(' | ')],
                  queryMode: 'extended',
                } as pg.QueryConfig)
              ).rows;
        return {
          byVector: byVector as Record<string, unknown>[],
          byText: byText as Record<string, unknown>[],
        };
      });

      const rows = new Map<string, Record<string, unknown>>();
      const candidates = new Map<string, Candidate>();
      const add = (row: Record<string, unknown>, rank: number, from: 'vector' | 'text') => {
        const id = row[ROWID] as string;
        rows.set(id, row);
        const existing = candidates.get(id);
        const candidate = existing ?? {
          id,
          text: p.text ? String(row[p.text.name] ?? '') : '',
          vector: parseVector(row[VEC]),
          vectorRank: null,
          distance: Number(row[DIST]),
          textRank: null,
        };
        if (from === 'vector') candidate.vectorRank = rank;
        else candidate.textRank = rank;
        candidates.set(id, candidate);
      };
      recalled.byVector.forEach((row, i) => add(row, i + 1, 'vector'));
      recalled.byText.forEach((row, i) => add(row, i + 1, 'text'));

      const ranked = rankCandidates([...candidates.values()], queryText, chunkTokens, method);
      const render = (r: Ranked): Record<string, unknown> => {
        const row = rows.get(r.id)!;
        const keys =
          p.ids.length > 0
            ? Object.fromEntries(
                p.ids.map((name) => [
                  name,
                  display(
                    p,
                    row,
                    p.rel.columns.find((c) => c.name === name)!,
                  ),
                ]),
              )
            : { ctid: r.id };
        const scores = { score: Number(r.score.toFixed(6)), distance: r.distance };
        if (format === 'ids_only') return { ...keys, ...scores };
        const excerpt = p.text?.masked ? MASK : r.best.text;
        if (format === 'summary') return { ...keys, ...scores, excerpt };
        const columns = Object.fromEntries(p.shown.map((c) => [c.name, display(p, row, c)]));
        return { ...columns, ...scores, excerpt };
      };
      let used = 0;
      const picked = selectMmr(ranked, topN, lambda, (row, taken) => {
        const cost = estimateTokens(JSON.stringify(render(row)));
        if (taken.length > 0 && used + cost > budget) return false;
        used += cost;
        return true;
      });
      // pgmcp never returns credentials, from whatever table they are read.
      const withheld: Tally = { count: 0 };
      const results = screenValue(
        picked.map((r, i) => ({ rank: i + 1, ...render(r) })),
        withheld,
      );
      const info = {
        schema: rel.schema,
        table: rel.name,
        vector_column: p.vector.name,
        text_column: p.text?.name ?? null,
        method,
        distance_metric: metric,
        provider: provider.name,
        model: provider.model,
        candidates: {
          vector: recalled.byVector.length,
          text: recalled.byText.length,
          fused: ranked.length,
        },
      };
      const header = `Database: ${catalog.databaseName}\n\n${rel.schema}.${rel.name}: ${results.length} of ${ranked.length} candidates (${method}; vector ${p.vector.name}${p.text ? `, text ${p.text.name}` : ''}; ${metric}; ${provider.name}/${provider.model}).`;
      const body = results.map((r) => JSON.stringify(r)).join('\n');
      const note = withheld.count > 0 ? `\n\n${withheldNote(withheld.count)}` : '';
      return {
        content: [{ type: 'text', text: `${header}\n\n${body}${note}` }],
        structuredContent: { ...info, results },
      };
    },
  };
}
