// similarity_search and generate_embedding on the embedded database (PGlite with pgvector,
// the demo's logbook) and, on a real PostgreSQL without pgvector, the error that says so.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.js';
import { configSchema } from '../../src/config/schema.js';
import { isAppError } from '../../src/core/errors.js';
import type { ToolSpec } from '../../src/core/specs.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createEmbeddingProviders, offlineEmbedding } from '../../src/embeddings/index.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createAccessPolicy, NO_RULES, type AccessRules } from '../../src/tools/access-policy.js';
import { createSimilaritySearchTool } from '../../src/tools/search/similarity-search.js';
import { DEFAULT_DENIED_FUNCTIONS } from '../../src/tools/sql-guard.js';
import { realPostgres, uniqueSchemaName, withClient } from '../helpers/postgres.js';

const logger = pino({ level: 'silent' });
const embeddings = createEmbeddingProviders(configSchema.parse({}).embeddings);
const ctx = () => createFakeContext().ctx;

function tool(db: Database, rules: Partial<AccessRules> = {}): ToolSpec {
  const policy = createAccessPolicy({ ...NO_RULES, ...rules });
  return createSimilaritySearchTool({
    db,
    catalog: createCatalog(db, policy, { ttlMs: 60_000 }),
    embeddings,
    statementTimeoutMs: 20_000,
    deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
  });
}

interface Hit {
  rank: number;
  id?: number;
  body?: string;
  topic?: string;
  excerpt?: string;
  score: number;
}
async function search(t: ToolSpec, args: Record<string, unknown>) {
  const result = await t.call({ table_name: 'demo.logbook_entries', ...args }, ctx());
  return result.structuredContent as {
    results: Hit[];
    candidates: Record<string, number>;
  } & Record<string, unknown>;
}
async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a failure');
}

describe('on the embedded database with the demo logbook', () => {
  let root: string;
  let db: Database;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'pgmcp-search-'));
    db = await createDatabase(
      { url: null, poolSize: 1, embedded: { dataDir: join(root, 'data'), demo: true } },
      logger,
    );
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  it('ships vectors equal to what the offline provider makes', async () => {
    const { rows } = await db.withOwnConnection((c) =>
      c.query<{ body: string; embedding: string }>(
        'SELECT body, embedding::text AS embedding FROM demo.logbook_entries ORDER BY id LIMIT 25',
      ),
    );
    expect(rows).toHaveLength(25);
    for (const row of rows) {
      const stored = JSON.parse(row.embedding) as number[];
      const mine = offlineEmbedding(row.body, 256);
      expect(stored).toHaveLength(256);
      stored.forEach((v, i) => expect(v).toBeCloseTo(mine[i]!, 5));
    }
  });

  it('finds rows by words and by vector, fused, within the budget', async () => {
    const out = await search(tool(db), { query_text: 'dew heater corrector plate', top_n: 5 });
    expect(out).toMatchObject({
      schema: 'demo',
      table: 'logbook_entries',
      vector_column: 'embedding',
      text_column: 'body',
      method: 'hybrid',
      provider: 'offline',
      model: 'pgmcp-hash-v1',
    });
    expect(out.results.length).toBeGreaterThan(0);
    expect(out.results.length).toBeLessThanOrEqual(5);
    expect(out.results[0]!.body).toMatch(/dew/i);
    expect(out.candidates['vector']).toBeGreaterThan(0);
    expect(out.candidates['text']).toBeGreaterThan(0);
    const small = await search(tool(db), { query_text: 'dew', top_n: 50, max_output_tokens: 200 });
    expect(small.results.length).toBeLessThan(50);
  });

  it('applies a filter, and refuses one that reaches other tables', async () => {
    const out = await search(tool(db), {
      query_text: 'galaxy spiral arms',
      filter: "topic = 'target'",
    });
    expect(out.results.length).toBeGreaterThan(0);
    expect(out.results.every((r) => r.topic === 'target')).toBe(true);
    const err = await failure(
      tool(db).call(
        { table_name: 'demo.logbook_entries', query_text: 'x', filter: 'id IN (SELECT 1)' },
        ctx(),
      ),
    );
    expect(err.message).toContain('subqueries are not allowed');
  });

  it('answers in each output format and with each method', async () => {
    const ids = await search(tool(db), {
      query_text: 'focuser slipped',
      output_format: 'ids_only',
      top_n: 3,
    });
    expect(Object.keys(ids.results[0]!).sort()).toEqual(['distance', 'id', 'rank', 'score']);
    const summary = await search(tool(db), {
      query_text: 'focuser slipped',
      output_format: 'summary',
      top_n: 3,
    });
    expect(summary.results[0]!.excerpt).toMatch(/focuser/i);
    for (const method of ['vector', 'text'] as const) {
      const out = await search(tool(db), {
        query_text: 'focuser slipped',
        method,
        distance_metric: 'l2',
      });
      expect(out.results.length).toBeGreaterThan(0);
    }
  });

  it('masks masked columns and never shows denied ones', async () => {
    const out = await search(
      tool(db, {
        maskColumns: ['logbook_entries.topic'],
        denyColumns: ['logbook_entries.written_at'],
      }),
      {
        query_text: 'fog river',
        top_n: 2,
      },
    );
    expect(out.results[0]!.topic).toBe('****');
    expect(out.results[0]).not.toHaveProperty('written_at');
  });

  it('says when the table has no vector column or the dimension differs', async () => {
    const none = await failure(
      tool(db).call({ table_name: 'demo.observers', query_text: 'x' }, ctx()),
    );
    expect(none.message).toContain('has no vector column');
    const other = createEmbeddingProviders(
      configSchema.parse({ embeddings: { offline: { dimensions: 64 } } }).embeddings,
    );
    const t = createSimilaritySearchTool({
      db,
      catalog: createCatalog(db, createAccessPolicy(NO_RULES), { ttlMs: 60_000 }),
      embeddings: other,
      statementTimeoutMs: 20_000,
      deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
    });
    const mismatch = await failure(
      t.call({ table_name: 'demo.logbook_entries', query_text: 'dew' }, ctx()),
    );
    expect(mismatch).toMatchObject({ code: 'PGMCP704' });
    expect(mismatch.message).toContain('64 dimensions');
  });

  it('uses the HNSW index for the vector recall', async () => {
    const plan = await db.withOwnConnection(async (c) => {
      await c.query('SET enable_seqscan = off');
      const v = `[${offlineEmbedding('dew', 256).join(',')}]`;
      const { rows } = await c.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM demo.logbook_entries ORDER BY embedding <=> $1::vector LIMIT 50`,
        [v],
      );
      await c.query('RESET enable_seqscan');
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('logbook_entries_embedding_idx');
  });
});

const pgInfo = await realPostgres('test/integration/similarity-search.test.ts (no pgvector)');
// Defined only where a PostgreSQL server exists; realPostgres records the suite as skipped otherwise.
if (pgInfo) {
  describe('on PostgreSQL without pgvector', () => {
    const schema = uniqueSchemaName('pgmcp_vec');
    let db: Database;
    beforeAll(async () => {
      await withClient(pgInfo.adminUrl, async (c) => {
        await c.query(`CREATE SCHEMA ${schema}`);
        await c.query(`CREATE TABLE ${schema}.docs (id int PRIMARY KEY, body text)`);
        await c.query(`GRANT USAGE ON SCHEMA ${schema} TO ${pgInfo.role}`);
        await c.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${pgInfo.role}`);
      });
      db = await createDatabase(
        { url: pgInfo.url, poolSize: 2, embedded: { dataDir: '/nonexistent', demo: false } },
        logger,
      );
    });
    afterAll(async () => {
      await db?.close();
      await withClient(pgInfo.adminUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    });

    it('says pgvector is missing and how to get it', async () => {
      const hasVector = await withClient(pgInfo.adminUrl, (c) =>
        c.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'"),
      );
      const err = await failure(
        tool(db).call({ table_name: `${schema}.docs`, query_text: 'x' }, ctx()),
      );
      if (hasVector.rowCount === 0) {
        expect(err.code).toBe('PGMCP311');
        expect(err.message).toContain('CREATE EXTENSION vector');
      } else {
        expect(err.message).toContain('has no vector column');
      }
    });
  });
}
