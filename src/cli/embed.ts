// `pgmcp embed`: fill or refresh a table's embeddings, in batches, with a progress bar.
// It writes, so it uses a connection of its own (never query_database's read-only path).
// Each batch commits on its own, and a row is picked only while its vector is missing or its
// text changed since it was embedded (an md5 of the text sits beside the vector), so an
// interrupted run resumes where it stopped.
import type pg from 'pg';
import { AppError, ErrorCodes } from '../core/errors.js';
import { quoteIdent } from '../core/sql.js';
import { redactUrl, type Config } from '../config/index.js';
import { createDatabase } from '../db/database.js';
import { createEmbeddingProviders, type EmbeddingProvider } from '../embeddings/index.js';
import { EMBED_MAX_BATCH_SIZE } from './commands.js';
import { createLogger } from './logger.js';

export interface EmbedOptions {
  table: string;
  textColumn: string;
  vectorColumn?: string;
  provider?: string;
  createIndex?: 'hnsw' | 'ivfflat';
  batchSize?: number;
}

export interface EmbedOutput {
  line(text: string): void;
  /** Redraws the progress bar (a TTY) or prints a line now and then (a pipe). */
  progress(done: number, total: number): void;
}

export const consoleOutput = (stream: NodeJS.WriteStream = process.stderr): EmbedOutput => {
  let lastLine = -1;
  return {
    line: (text) => void process.stdout.write(`${text}\n`),
    progress(done, total) {
      const share = total === 0 ? 1 : done / total;
      if (stream.isTTY) {
        const width = 30;
        const filled = Math.round(share * width);
        stream.write(
          `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} rows${done >= total ? '\n' : ''}`,
        );
      } else if (Math.floor(share * 10) !== lastLine || done >= total) {
        lastLine = Math.floor(share * 10);
        stream.write(`embedded ${done}/${total} rows\n`);
      }
    },
  };
};

function splitName(name: string): { schema: string; table: string } {
  const dot = name.indexOf('.');
  return dot > 0
    ? { schema: name.slice(0, dot), table: name.slice(dot + 1) }
    : { schema: 'public', table: name };
}

function vectorMissing(cause?: unknown): AppError {
  return new AppError(
    ErrorCodes.VECTOR_UNAVAILABLE,
    'The pgvector extension is not installed in this database and could not be created. Install the pgvector package on the server and run CREATE EXTENSION vector as a superuser (the embedded database has it).',
    { category: 'unavailable', ...(cause !== undefined ? { cause } : {}) },
  );
}

async function ensurePgvector(client: pg.ClientBase): Promise<string> {
  const find = () =>
    client.query<{ schema: string }>(
      `SELECT n.nspname AS schema FROM pg_catalog.pg_extension e
       JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`,
    );
  const found = (await find()).rows[0];
  if (found) return found.schema;
  const available = await client.query(
    "SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = 'vector'",
  );
  if (available.rowCount === 0) throw vectorMissing();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS vector');
  } catch (error) {
    throw vectorMissing(error);
  }
  return (await find()).rows[0]!.schema;
}

async function columnType(client: pg.ClientBase, schema: string, table: string, column: string) {
  // typcategory 'S' is PostgreSQL's string category: text, varchar, char, name, citext and
  // domains over them (a domain takes its base type's category).
  const { rows } = await client.query<{ type: string; textual: boolean }>(
    `SELECT pg_catalog.format_type(a.atttypid, a.atttypmod) AS type, t.typcategory = 'S' AS textual
     FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
     WHERE a.attrelid = pg_catalog.to_regclass($1) AND a.attname = $2 AND a.attnum > 0 AND NOT a.attisdropped`,
    [`${quoteIdent(schema)}.${quoteIdent(table)}`, column],
  );
  return rows[0] ?? null;
}

function checkBatchSize(n: number, given: string | number = n): void {
  if (!Number.isSafeInteger(n) || n < 1 || n > EMBED_MAX_BATCH_SIZE) {
    throw new AppError(
      ErrorCodes.TOOL_INPUT_INVALID,
      `--batch-size must be a whole number from 1 to ${EMBED_MAX_BATCH_SIZE}, not ${String(given)}.`,
      { category: 'input', details: { batchSize: String(given) } },
    );
  }
}

export async function runEmbed(
  client: pg.ClientBase,
  provider: EmbeddingProvider,
  options: EmbedOptions,
  out: EmbedOutput,
): Promise<{ embedded: number; pending: number; createdColumn: boolean; index: string | null }> {
  if (options.batchSize !== undefined) checkBatchSize(options.batchSize);
  const { schema, table } = splitName(options.table);
  const rel = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  const exists = await client.query('SELECT pg_catalog.to_regclass($1) AS oid', [rel]);
  if ((exists.rows[0] as { oid: unknown }).oid === null) {
    throw new AppError(ErrorCodes.TOOL_INPUT_INVALID, `No table ${schema}.${table}.`, {
      category: 'not_found',
    });
  }
  const text = options.textColumn;
  const source = await columnType(client, schema, table, text);
  if (source === null) {
    throw new AppError(
      ErrorCodes.TOOL_INPUT_INVALID,
      `${schema}.${table} has no column '${text}' to embed.`,
      { category: 'not_found' },
    );
  }
  if (!source.textual) {
    throw new AppError(
      ErrorCodes.TOOL_INPUT_INVALID,
      `${schema}.${table}.${text} is ${source.type}, not text; --text-column must name a text, varchar, char or citext column.`,
      { category: 'input', details: { column: text, type: source.type } },
    );
  }
  const vector = options.vectorColumn ?? `${text}_embedding`;
  const hash = `${vector}_source_md5`;
  const v = quoteIdent(vector);
  const h = quoteIdent(hash);
  const c = quoteIdent(text);

  // The extension, the new columns and the first batch commit together: a run that fails
  // before its first batch is written leaves the table as it was. Later batches commit one
  // by one, so an interrupted run resumes.
  await client.query('BEGIN');
  let open = true;
  const commit = async () => {
    if (!open) return;
    await client.query('COMMIT');
    open = false;
  };
  try {
    const ext = await ensurePgvector(client);

    // The dimensions: the column's, else the provider's, else learn them from one text.
    let type = (await columnType(client, schema, table, vector))?.type ?? null;
    let createdColumn = false;
    if (type === null) {
      let dims = provider.dimensions;
      if (dims === null) dims = (await provider.embed(['dimensions probe'])).vectors[0]!.length;
      await client.query(`ALTER TABLE ${rel} ADD COLUMN ${v} ${quoteIdent(ext)}.vector(${dims})`);
      type = `vector(${dims})`;
      createdColumn = true;
      out.line(`added column ${vector} vector(${dims})`);
    }
    const declared = /\((\d+)\)/.exec(type);
    const dims = declared ? Number(declared[1]) : null;
    if ((await columnType(client, schema, table, hash)) === null) {
      await client.query(`ALTER TABLE ${rel} ADD COLUMN ${h} text`);
    }

    const pendingWhere = `${c} IS NOT NULL AND (${v} IS NULL OR ${h} IS DISTINCT FROM md5(${c}))`;
    const counted = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${rel} WHERE ${pendingWhere}`,
    );
    const pending = counted.rows[0]!.n;
    out.line(
      `${schema}.${table}: ${pending} row(s) to embed with ${provider.name}/${provider.model} into ${vector}`,
    );
    const batchSize = options.batchSize ?? provider.batchSize;
    let done = 0;
    out.progress(0, pending);
    // Rows whose text changes while we embed are skipped by the md5 guard and stay pending.
    let skipped = new Set<string>();
    for (;;) {
      const { rows } = await client.query<{ id: string; body: string; md5: string }>(
        `SELECT ctid::text AS id, ${c}::text AS body, md5(${c}) AS md5 FROM ${rel}
         WHERE ${pendingWhere} AND NOT (ctid::text = ANY ($1::text[])) LIMIT ${batchSize}`,
        [[...skipped]],
      );
      if (rows.length === 0) break;
      const { vectors } = await provider.embed(
        rows.map((r) => r.body),
        { purpose: 'document' },
      );
      if (dims !== null && vectors[0]!.length !== dims) {
        throw new AppError(
          ErrorCodes.EMBEDDING_DIMENSION_MISMATCH,
          `${provider.name}/${provider.model} makes ${vectors[0]!.length} dimensions but ${schema}.${table}.${vector} has ${dims}. Use the provider that filled the column, or another --vector-column.`,
          { category: 'input', details: { got: vectors[0]!.length, expected: dims } },
        );
      }
      const updated = await client.query<{ id: string }>(
        `UPDATE ${rel} AS t SET ${v} = x.v::${quoteIdent(ext)}.vector, ${h} = x.md5
         FROM unnest($1::text[], $2::text[], $3::text[]) AS x(id, v, md5)
         WHERE t.ctid = x.id::tid AND md5(t.${c}) = x.md5
         RETURNING x.id`,
        [rows.map((r) => r.id), vectors.map((vec) => `[${vec.join(',')}]`), rows.map((r) => r.md5)],
      );
      await commit();
      const written = new Set(updated.rows.map((r) => r.id));
      skipped = new Set([...skipped, ...rows.map((r) => r.id).filter((id) => !written.has(id))]);
      done += written.size;
      out.progress(Math.min(done, pending), pending);
    }
    await commit();
    return await finish(client, options, out, {
      rel,
      table,
      vector,
      v,
      ext,
      done,
      pending,
      createdColumn,
    });
  } catch (error) {
    if (open) await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

async function finish(
  client: pg.ClientBase,
  options: EmbedOptions,
  out: EmbedOutput,
  run: {
    rel: string;
    table: string;
    vector: string;
    v: string;
    ext: string;
    done: number;
    pending: number;
    createdColumn: boolean;
  },
): Promise<{ embedded: number; pending: number; createdColumn: boolean; index: string | null }> {
  const { rel, table, vector, v, ext, done, pending, createdColumn } = run;
  let index: string | null = null;
  if (options.createIndex) {
    index = `${table}_${vector}_${options.createIndex}_idx`.slice(0, 63);
    const method = options.createIndex;
    const opclass = `${quoteIdent(ext)}.vector_cosine_ops`;
    const withLists =
      method === 'ivfflat'
        ? ` WITH (lists = ${Math.max(10, Math.round(Math.sqrt(Math.max(done, pending, 1))))})`
        : '';
    await client.query(
      `CREATE INDEX IF NOT EXISTS ${quoteIdent(index)} ON ${rel} USING ${method} (${v} ${opclass})${withLists}`,
    );
    out.line(`index ${index} (${method}, cosine) ready`);
  }
  out.line(`done: ${done} row(s) embedded`);
  return { embedded: done, pending, createdColumn, index };
}

export async function embed(config: Config, options: EmbedOptions): Promise<number> {
  const out = consoleOutput();
  out.line(
    `database: ${config.database.url ? redactUrl(config.database.url) : `embedded PGlite at ${config.embedded.dataDir}`}`,
  );
  const provider = createEmbeddingProviders(config.embeddings).get(options.provider);
  const db = await createDatabase(
    {
      url: config.database.url,
      poolSize: 1,
      embedded: { dataDir: config.embedded.dataDir, demo: config.embedded.demo },
    },
    createLogger('warn'),
  );
  try {
    await db.withOwnConnection((client) => runEmbed(client, provider, options, out));
    return 0;
  } finally {
    await db.close();
  }
}
