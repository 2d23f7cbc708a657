// similarity_search: hybrid retrieval over one table. Candidates come from two recalls run in
// one read-only transaction: the pgvector index (ORDER BY distance LIMIT k, so HNSW or IVFFlat
// answer it) and full-text search (tsvector @@ tsquery, a GIN index when there is one). Rows
// found by either are ranked by BM25 over their chunks, fused with the vector ranking by
// reciprocal rank, and picked by MMR until top_n or max_output_tokens.
import type pg from 'pg';
import type { Catalog, ColumnDescriptor, RelationDescriptor } from '../../catalog/index.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { ToolSpec } from '../../core/specs.js';
import { quoteIdent } from '../../core/sql.js';
import type { Database } from '../../db/database.js';
import { dimensionMismatch, type EmbeddingProviders } from '../../embeddings/index.js';
import { createAccessPolicy, MASK, NO_RULES, type AccessPolicy } from '../access-policy.js';
import { loadSqlParser } from '../sql-guard.js';
import { screenValue, withheldNote, type Tally } from '../output-screen.js';
import { refuseAttributeCalls, RESTRICT_SEARCH_PATH } from './count-rows.js';
import { checkRelationReach } from './indirection.js';
import { createJudge } from './policy-judge.js';
import { textColumnFor, tsvectorColumn, vectorColumns } from './search-columns.js';
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
  readOnlyCall,
  sameLexerAsParser,
} from './support.js';
import { checkFilter } from './where-clause.js';

export interface SimilaritySearchDeps {
  db: Database;
  catalog: Catalog;
  embeddings: EmbeddingProviders;
  statementTimeoutMs: number;
  deniedFunctions: readonly string[];
  /** The access policy (for views); none: only credentials are judged. */
  policy?: AccessPolicy;
}

const METRICS = { cosine: '<=>', l2: '<->', inner_product: '<#>' } as const;
type Metric = keyof typeof METRICS;
const FORMATS = ['full', 'summary', 'ids_only'] as const;
type Format = (typeof FORMATS)[number];

const DESCRIPTION = [
  'Find the rows of one table that best match a text, by meaning and by words at once.',
  'The query is embedded and compared with the vector column (pgvector index), and matched with full-text search over the text column; both candidate lists are fused, scored with BM25 over chunks of the text, and diversified with MMR (lambda: 1 = only relevance, 0 = only diversity) within max_output_tokens.',
  "Vector and text columns are found automatically (get_schema_info with vector_tables_only=true lists the tables); `filter` is ONE boolean SQL expression over the table's columns, as in count_rows.",
  'Example: {"table_name": "demo.logbook_entries", "query_text": "dew on the optics ruined the night", "top_n": 5}.',
].join(' ');

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

interface Plan {
  rel: RelationDescriptor;
  vector: ColumnDescriptor;
  text: ColumnDescriptor | null;
  tsvector: ColumnDescriptor | null;
  shown: ColumnDescriptor[];
  ids: string[];
}

function plan(rel: RelationDescriptor, args: Record<string, unknown>, dims: number | null): Plan {
  const wantedVector = args['vector_column'] as string | undefined;
  const vectors = vectorColumns(rel, dims);
  const vector = wantedVector ? vectors.find((c) => c.name === wantedVector) : vectors[0];
  if (!vector) {
    throw invalidInput(
      wantedVector
        ? `${rel.schema}.${rel.name} has no vector column '${wantedVector}'. Vector columns: ${vectors.map((c) => c.name).join(', ') || 'none'}.`
        : `${rel.schema}.${rel.name} has no vector column to search. Add one and fill it with: pgmcp embed --table ${rel.schema}.${rel.name} --text-column <column>; get_schema_info with vector_tables_only=true lists the tables that have one.`,
    );
  }
  const wantedText = args['text_column'] as string | undefined;
  const text = wantedText
    ? (rel.columns.find((c) => c.name === wantedText && !c.masked) ??
      (() => {
        throw invalidInput(`${rel.schema}.${rel.name} has no usable text column '${wantedText}'.`);
      })())
    : textColumnFor(rel, vector);
  const shown = rel.columns.filter((c) => c.vector === null && c.dataType !== 'tsvector');
  const ids = rel.primaryKey?.columns ?? [];
  return { rel, vector, text, tsvector: tsvectorColumn(rel, text), shown, ids };
}

const ROWID = '_pgmcp_rowid';
const DIST = '_pgmcp_distance';
const VEC = '_pgmcp_vector';

function recallSql(
  p: Plan,
  ext: string,
  metric: Metric,
  filter: string | null,
  kind: 'vector' | 'text',
  k: number,
) {
  const from = `${quoteIdent(p.rel.schema)}.${quoteIdent(p.rel.name)}`;
  const v = quoteIdent(p.vector.name);
  const vtype = `${quoteIdent(ext)}.${quoteIdent(p.vector.vector!.type)}`;
  const op = `OPERATOR(${quoteIdent(ext)}.${METRICS[metric]})`;
  const dist = `${v} ${op} $1::${vtype}`;
  const cols = p.shown.filter((c) => !c.masked).map((c) => quoteIdent(c.name));
  const select = [
    `ctid::text AS ${ROWID}`,
    ...cols,
    `${v}::text AS ${VEC}`,
    `${dist} AS ${DIST}`,
  ].join(', ');
  const where = filter !== null ? ` AND (${filter})` : '';
  if (kind === 'vector') {
    return `SELECT ${select} FROM ${from} WHERE ${v} IS NOT NULL${where} ORDER BY ${dist} LIMIT ${k}`;
  }
  const tsv = p.tsvector
    ? quoteIdent(p.tsvector.name)
    : `to_tsvector('english'::regconfig, ${quoteIdent(p.text!.name)})`;
  const q = `to_tsquery('english'::regconfig, $2)`;
  return `SELECT ${select} FROM ${from} WHERE ${tsv} @@ ${q}${where} ORDER BY ts_rank_cd(${tsv}, ${q}) DESC LIMIT ${k}`;
}

const parseVector = (text: unknown): number[] | null =>
  typeof text === 'string' ? (JSON.parse(text) as number[]) : null;

function display(p: Plan, row: Record<string, unknown>, column: ColumnDescriptor): unknown {
  if (column.masked) return MASK;
  const value = row[column.name];
  return typeof value === 'bigint' ? String(value) : value;
}

export function createSimilaritySearchTool(deps: SimilaritySearchDeps): ToolSpec {
  const judge = createJudge(deps.policy ?? createAccessPolicy(NO_RULES));
  const { db, catalog } = deps;
  return {
    name: 'similarity_search',
    title: 'Similarity search',
    description: DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        table_name: {
          type: 'string',
          minLength: 1,
          description: 'Table to search, optionally schema-qualified (demo.logbook_entries).',
        },
        query_text: {
          type: 'string',
          minLength: 1,
          maxLength: 8000,
          description: 'What to look for, in plain language.',
        },
        top_n: {
          type: 'integer',
          minimum: 1,
          maximum: 100,
          default: 10,
          description: 'Most rows to return.',
        },
        chunk_size_tokens: {
          type: 'integer',
          minimum: 10,
          maximum: 2000,
          default: 100,
          description:
            'Size of the text chunks scored with BM25; the best chunk is each row’s excerpt.',
        },
        lambda: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          default: 0.6,
          description: 'MMR balance: 1 = relevance only, 0 = diversity only.',
        },
        max_output_tokens: {
          type: 'integer',
          minimum: 50,
          maximum: 100000,
          default: 1000,
          description: 'Token budget of the answer; rows that do not fit are left out.',
        },
        distance_metric: {
          type: 'string',
          enum: Object.keys(METRICS),
          default: 'cosine',
          description: 'pgvector distance; use the one the vector index was built for.',
        },
        output_format: {
          type: 'string',
          enum: [...FORMATS],
          default: 'full',
          description:
            'full: every visible column and the excerpt; summary: keys and excerpt; ids_only: keys and scores.',
        },
        filter: {
          type: 'string',
          description:
            "One boolean expression over the table's columns, without WHERE, e.g. kind = 'galaxy'.",
        },
        method: {
          type: 'string',
          enum: ['hybrid', 'vector', 'text'],
          default: 'hybrid',
          description: 'hybrid (default), or one recall alone for comparison.',
        },
        provider: {
          type: 'string',
          description:
            'Embedding provider for the query (default: the configured one); must be the one that filled the column.',
        },
        vector_column: {
          type: 'string',
          description: 'Vector column to use when the table has several.',
        },
        text_column: {
          type: 'string',
          description: 'Text column the vectors were made from, when it cannot be guessed.',
        },
      },
      required: ['table_name', 'query_text'],
      additionalProperties: false,
    },
    annotations: { ...readOnlyAnnotations('Similarity search'), openWorldHint: true },
    async call(args, ctx) {
      const tableName = args['table_name'] as string;
      const queryText = (args['query_text'] as string).trim();
      if (queryText === '') throw invalidInput('query_text is empty.');
      const topN = (args['top_n'] as number | undefined) ?? 10;
      const chunkTokens = (args['chunk_size_tokens'] as number | undefined) ?? 100;
      const lambda = (args['lambda'] as number | undefined) ?? 0.6;
      const budget = (args['max_output_tokens'] as number | undefined) ?? 1000;
      const metric = ((args['distance_metric'] as string | undefined) ?? 'cosine') as Metric;
      const format = ((args['output_format'] as string | undefined) ?? 'full') as Format;
      const method = ((args['method'] as string | undefined) ?? 'hybrid') as SearchMethod;
      const filterArg = args['filter'] as string | undefined;
      await loadSqlParser();

      const snapshot = await catalog.snapshot();
      const rel = findRelation(catalog, snapshot, tableName);
      const provider = deps.embeddings.get(args['provider'] as string | undefined);
      if (vectorColumns(rel).length === 0) {
        const ext = await readOnlyCall(db, deps.statementTimeoutMs, ctx, pgvectorSchema);
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
      const embedded = await provider.embed([queryText], { purpose: 'query', signal: ctx.signal });
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

      const recalled = await readOnlyCall(db, deps.statementTimeoutMs, ctx, async (client) => {
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
