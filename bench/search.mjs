// `npm run bench:search`: retrieval quality of similarity_search with the offline provider,
// vector-only vs BM25-only vs hybrid, on the generated set of bench/search-corpus.mjs; then
// the latency (p50, p99) of similarity_search over SEARCH_LATENCY_ROWS rows (default 100,000)
// on the embedded database, and on PostgreSQL with pgvector when PGMCP_BENCH_PGVECTOR_URL
// names one. Never a timed test: the exit status is 1 only when something broke.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createCatalog } from '../dist/catalog/index.js';
import { configSchema } from '../dist/config/schema.js';
import { ANONYMOUS } from '../dist/core/principal.js';
import { createDatabase } from '../dist/db/database.js';
import { createEmbeddingProviders } from '../dist/embeddings/index.js';
import { createAccessPolicy, NO_RULES } from '../dist/tools/access-policy.js';
import { createSimilaritySearchTool } from '../dist/tools/builtin/similarity-search.js';
import { DEFAULT_DENIED_FUNCTIONS } from '../dist/tools/sql-guard.js';
import { documents, queries } from './search-corpus.mjs';

const CORPUS = Number(process.env.SEARCH_CORPUS_DOCS ?? 3000);
const LATENCY_ROWS = Number(process.env.SEARCH_LATENCY_ROWS ?? 100_000);
const LATENCY_CALLS = 100;
const DIMS = 256;

const embeddings = createEmbeddingProviders(configSchema.parse({}).embeddings);
const offline = embeddings.get('offline');
const ctx = {
  principal: ANONYMOUS,
  signal: new AbortController().signal,
  progress() {},
  log() {},
  clientSupports: () => false,
  requestInput: () => Promise.reject(new Error('no input')),
};

async function load(db, table, docs) {
  await db.withOwnConnection(async (c) => {
    await c.query('CREATE EXTENSION IF NOT EXISTS vector');
    await c.query(`DROP TABLE IF EXISTS public.${table}`);
    await c.query(`CREATE TABLE public.${table} (id int PRIMARY KEY, body text NOT NULL,
      body_tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED, embedding vector(${DIMS}))`);
    for (let i = 0; i < docs.length; i += 1000) {
      const batch = docs.slice(i, i + 1000);
      const { vectors } = await offline.embed(
        batch.map((d) => d.body),
        { purpose: 'document' },
      );
      await c.query(
        `INSERT INTO public.${table} (id, body, embedding)
         SELECT * FROM unnest($1::int[], $2::text[], $3::vector[])`,
        [batch.map((d) => d.id), batch.map((d) => d.body), vectors.map((v) => `[${v.join(',')}]`)],
      );
    }
    await c.query(`CREATE INDEX ON public.${table} USING gin (body_tsv)`);
    await c.query(`CREATE INDEX ON public.${table} USING hnsw (embedding vector_cosine_ops)`);
    await c.query(`ANALYZE public.${table}`);
  });
}

function tool(db) {
  return createSimilaritySearchTool({
    db,
    catalog: createCatalog(db, createAccessPolicy(NO_RULES), { ttlMs: 600_000 }),
    embeddings,
    statementTimeoutMs: 60_000,
    deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
  });
}

function metrics(ids, relevant) {
  const rel = new Set(relevant);
  const top = ids.slice(0, 10);
  const hits = top.filter((id) => rel.has(id)).length;
  const dcg = top.reduce((s, id, i) => s + (rel.has(id) ? 1 / Math.log2(i + 2) : 0), 0);
  const ideal = Array.from(
    { length: Math.min(rel.size, 10) },
    (_, i) => 1 / Math.log2(i + 2),
  ).reduce((a, b) => a + b, 0);
  return { recall: hits / Math.min(rel.size, 10), ndcg: ideal === 0 ? 0 : dcg / ideal };
}

async function quality(db) {
  const docs = documents(CORPUS);
  await load(db, 'bench_search_docs', docs);
  const search = tool(db);
  const set = queries(docs);
  const report = {};
  for (const method of ['vector', 'text', 'hybrid']) {
    const byKind = {};
    for (const q of set) {
      const result = await search.call(
        {
          table_name: 'public.bench_search_docs',
          query_text: q.text,
          top_n: 10,
          method,
          output_format: 'ids_only',
          max_output_tokens: 100_000,
        },
        ctx,
      );
      const ids = result.structuredContent.results.map((r) => r.id);
      const m = metrics(ids, q.relevant);
      for (const kind of [q.kind, 'all']) {
        byKind[kind] ??= { recall: 0, ndcg: 0, n: 0 };
        byKind[kind].recall += m.recall;
        byKind[kind].ndcg += m.ndcg;
        byKind[kind].n++;
      }
    }
    for (const v of Object.values(byKind)) {
      v.recall = Number((v.recall / v.n).toFixed(3));
      v.ndcg = Number((v.ndcg / v.n).toFixed(3));
    }
    report[method] = byKind;
  }
  return { documents: docs.length, queries: set.length, report };
}

async function latency(db, label) {
  const docs = documents(LATENCY_ROWS, 99);
  const started = performance.now();
  await load(db, 'bench_search_big', docs);
  const loadMs = performance.now() - started;
  const search = tool(db);
  const set = queries(docs);
  const times = [];
  for (let i = 0; i < LATENCY_CALLS; i++) {
    const q = set[i % set.length];
    const t0 = performance.now();
    await search.call({ table_name: 'public.bench_search_big', query_text: q.text }, ctx);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const at = (p) =>
    Number(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)].toFixed(1));
  return {
    where: label,
    rows: LATENCY_ROWS,
    calls: LATENCY_CALLS,
    loadSeconds: Math.round(loadMs / 1000),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

const logger = pino({ level: 'silent' });
const root = mkdtempSync(join(tmpdir(), 'pgmcp-bench-search-'));
let status = 0;
const results = {};
try {
  const db = await createDatabase(
    { url: null, poolSize: 1, embedded: { dataDir: join(root, 'data'), demo: false } },
    logger,
  );
  try {
    results.quality = await quality(db);
    const r = results.quality.report;
    console.log(
      `retrieval set: ${results.quality.documents} documents, ${results.quality.queries} queries (offline provider, top 10, defaults)`,
    );
    console.log('method   kind    recall@10  nDCG@10');
    for (const method of ['vector', 'text', 'hybrid']) {
      for (const kind of ['code', 'typo', 'mixed', 'all']) {
        const v = r[method][kind];
        console.log(
          `${method.padEnd(8)} ${kind.padEnd(7)} ${v.recall.toFixed(3).padStart(9)}  ${v.ndcg.toFixed(3).padStart(7)}`,
        );
      }
    }
    const beats = ['recall', 'ndcg'].every(
      (m) => r.hybrid.all[m] > r.vector.all[m] && r.hybrid.all[m] > r.text.all[m],
    );
    console.log(
      `hybrid beats vector-only and BM25-only on both measures: ${beats ? 'yes' : 'FAIL'}`,
    );
    if (LATENCY_ROWS > 0) {
      results.embedded = await latency(db, 'embedded PGlite');
      console.log(
        `latency, ${results.embedded.where}: ${LATENCY_ROWS} rows, p50 ${results.embedded.p50Ms} ms, p99 ${results.embedded.p99Ms} ms (load + index ${results.embedded.loadSeconds} s)`,
      );
    }
  } finally {
    await db.close();
  }
  const url = process.env.PGMCP_BENCH_PGVECTOR_URL;
  if (url && LATENCY_ROWS > 0) {
    const pg = await createDatabase(
      { url, poolSize: 2, embedded: { dataDir: '/nonexistent', demo: false } },
      logger,
    );
    try {
      results.postgres = await latency(pg, 'PostgreSQL + pgvector');
      console.log(
        `latency, ${results.postgres.where}: p50 ${results.postgres.p50Ms} ms, p99 ${results.postgres.p99Ms} ms`,
      );
      await pg.withOwnConnection((c) => c.query('DROP TABLE IF EXISTS public.bench_search_big'));
    } finally {
      await pg.close();
    }
  } else {
    console.log(
      'latency, PostgreSQL + pgvector: not measured (set PGMCP_BENCH_PGVECTOR_URL to a database with pgvector)',
    );
  }
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/search.json', JSON.stringify(results, null, 2));
} catch (error) {
  console.error(error);
  status = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
process.exit(status);
