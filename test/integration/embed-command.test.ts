// pgmcp embed's work (runEmbed) on the embedded database, and its pgvector error on a real
// PostgreSQL without the extension.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEmbed, type EmbedOutput } from '../../src/cli/embed.js';
import { isAppError } from '../../src/core/errors.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createOfflineProvider, offlineEmbedding } from '../../src/embeddings/index.js';
import { realPostgres, uniqueSchemaName, withClient } from '../helpers/postgres.js';

const logger = pino({ level: 'silent' });
const provider = createOfflineProvider({ dimensions: 32 });

function recorder(): EmbedOutput & { lines: string[]; bars: [number, number][] } {
  const lines: string[] = [];
  const bars: [number, number][] = [];
  return { lines, bars, line: (t) => lines.push(t), progress: (d, t) => bars.push([d, t]) };
}

describe('pgmcp embed on the embedded database', () => {
  let root: string;
  let db: Database;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'pgmcp-embed-'));
    db = await createDatabase(
      { url: null, poolSize: 1, embedded: { dataDir: join(root, 'data'), demo: false } },
      logger,
    );
    await db.withOwnConnection((c) =>
      c.query(`CREATE TABLE public.notes (id int PRIMARY KEY, body text);
               INSERT INTO public.notes SELECT g, 'note number ' || g || ' about comets' FROM generate_series(1, 45) g;
               INSERT INTO public.notes VALUES (46, NULL);`),
    );
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    rmSync(root, { recursive: true, force: true });
  }, 30_000);

  const columnsOf = async (table: string): Promise<string[]> =>
    (
      await db.withOwnConnection((c) =>
        c.query<{ name: string }>(
          `SELECT attname AS name FROM pg_attribute
           WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
          [`public.${table}`],
        ),
      )
    ).rows.map((r) => r.name);

  it('creates the column and the index, and fills every row in batches', async () => {
    const out = recorder();
    const result = await db.withOwnConnection((c) =>
      runEmbed(
        c,
        provider,
        { table: 'notes', textColumn: 'body', createIndex: 'hnsw', batchSize: 10 },
        out,
      ),
    );
    expect(result).toEqual({
      embedded: 45,
      pending: 45,
      createdColumn: true,
      index: 'notes_body_embedding_hnsw_idx',
    });
    expect(out.bars.at(-1)).toEqual([45, 45]);
    expect(out.bars.length).toBe(6); // 0, then five batches of at most 10
    const { rows } = await db.withOwnConnection((c) =>
      c.query<{ body: string; v: string }>(
        'SELECT body, body_embedding::text AS v FROM notes WHERE id = 7',
      ),
    );
    const stored = JSON.parse(rows[0]!.v) as number[];
    offlineEmbedding(rows[0]!.body, 32).forEach((x, i) => expect(stored[i]).toBeCloseTo(x, 5));
    const idx = await db.withOwnConnection((c) =>
      c.query("SELECT indexdef FROM pg_indexes WHERE indexname = 'notes_body_embedding_hnsw_idx'"),
    );
    expect(String(idx.rows[0]?.indexdef)).toContain('USING hnsw');
  });

  it('resumes: only rows whose vector is missing or whose text changed', async () => {
    await db.withOwnConnection((c) =>
      c.query(`UPDATE notes SET body = 'rewritten about asteroids' WHERE id = 3;
               UPDATE notes SET body_embedding = NULL WHERE id IN (5, 6)`),
    );
    const out = recorder();
    const result = await db.withOwnConnection((c) =>
      runEmbed(c, provider, { table: 'notes', textColumn: 'body' }, out),
    );
    expect(result).toMatchObject({ embedded: 3, pending: 3, createdColumn: false });
    const again = await db.withOwnConnection((c) =>
      runEmbed(c, provider, { table: 'notes', textColumn: 'body' }, recorder()),
    );
    expect(again).toMatchObject({ embedded: 0, pending: 0 });
  });

  it('refuses a text column that is not text, before changing the table', async () => {
    const error = await db
      .withOwnConnection((c) =>
        runEmbed(c, provider, { table: 'notes', textColumn: 'id' }, recorder()),
      )
      .catch((e: unknown) => e);
    expect(isAppError(error) && error.category).toBe('input');
    expect((error as Error).message).toContain('notes.id is integer, not text');
    expect(await columnsOf('notes')).not.toContain('id_embedding');
  });

  it.each([0, -5, 1.5, 10_001, Number.NaN])(
    'refuses --batch-size %s before any change',
    async (n) => {
      await db.withOwnConnection((c) => c.query('CREATE TABLE public.fresh (body text)'));
      try {
        const error = await db
          .withOwnConnection((c) =>
            runEmbed(c, provider, { table: 'fresh', textColumn: 'body', batchSize: n }, recorder()),
          )
          .catch((e: unknown) => e);
        expect(isAppError(error) && error.category).toBe('input');
        expect((error as Error).message).toContain('--batch-size must be a whole number');
        expect(await columnsOf('fresh')).toEqual(['body']);
      } finally {
        await db.withOwnConnection((c) => c.query('DROP TABLE public.fresh'));
      }
    },
  );

  it('leaves no new columns behind when the first batch fails', async () => {
    await db.withOwnConnection((c) =>
      c.query("CREATE TABLE public.fragile (body text); INSERT INTO public.fragile VALUES ('a')"),
    );
    const failing = {
      ...provider,
      embed: () => Promise.reject(new Error('provider down')),
    };
    try {
      const error = await db
        .withOwnConnection((c) =>
          runEmbed(c, failing, { table: 'fragile', textColumn: 'body' }, recorder()),
        )
        .catch((e: unknown) => e);
      expect((error as Error).message).toBe('provider down');
      expect(await columnsOf('fragile')).toEqual(['body']);
    } finally {
      await db.withOwnConnection((c) => c.query('DROP TABLE public.fragile'));
    }
  });

  it('refuses a provider whose vectors do not fit the column', async () => {
    const wide = createOfflineProvider({ dimensions: 64 });
    await db.withOwnConnection((c) =>
      c.query('UPDATE notes SET body_embedding = NULL WHERE id = 1'),
    );
    const error = await db
      .withOwnConnection((c) =>
        runEmbed(c, wide, { table: 'notes', textColumn: 'body' }, recorder()),
      )
      .catch((e: unknown) => e);
    expect(isAppError(error) && error.code).toBe('PGMCP704');
  });
});

const pgInfo = await realPostgres('test/integration/embed-command.test.ts (no pgvector)');
// Defined only where a PostgreSQL server exists; realPostgres records the suite as skipped otherwise.
if (pgInfo) {
  describe('pgmcp embed on PostgreSQL', () => {
    const schema = uniqueSchemaName('pgmcp_emb');
    let db: Database;
    beforeAll(async () => {
      await withClient(pgInfo.adminUrl, (c) =>
        c.query(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.docs (id int PRIMARY KEY, body text);
                 INSERT INTO ${schema}.docs VALUES (1, 'hello')`),
      );
      db = await createDatabase(
        { url: pgInfo.adminUrl, poolSize: 1, embedded: { dataDir: '/nonexistent', demo: false } },
        logger,
      );
    });
    afterAll(async () => {
      await db?.close();
      await withClient(pgInfo.adminUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    });

    it('embeds where pgvector can be had, and says clearly when it cannot', async () => {
      const available = await withClient(pgInfo.adminUrl, (c) =>
        c.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"),
      );
      const outcome = await db
        .withOwnConnection((c) =>
          runEmbed(c, provider, { table: `${schema}.docs`, textColumn: 'body' }, recorder()),
        )
        .catch((e: unknown) => e);
      if (available.rowCount === 0) {
        expect(isAppError(outcome) && outcome.code).toBe('PGMCP311');
        expect((outcome as Error).message).toContain('CREATE EXTENSION vector');
      } else {
        expect(outcome).toMatchObject({ embedded: 1 });
      }
    });
  });
}
