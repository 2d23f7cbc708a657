// get_schema_info over 10,000 tables from a cold catalog, on real PostgreSQL (target: under
// one second). The tables live in a throwaway schema, created and dropped in batches.
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { createCatalog } from '../dist/catalog/index.js';
import { ANONYMOUS } from '../dist/core/principal.js';
import { createDatabase } from '../dist/db/database.js';
import { createAccessPolicy, NO_RULES } from '../dist/tools/access-policy.js';
import { createGetSchemaInfoTool } from '../dist/tools/builtin/get-schema-info.js';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TABLES = 10_000;
const BATCH = 500;
const TARGET_MS = 1_000;
const schema = `pgmcp_bench_scale_${process.pid}`;

async function admin(sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const ctx = {
  principal: ANONYMOUS,
  signal: new AbortController().signal,
  progress() {},
  log() {},
  clientSupports: () => false,
  requestInput: () => Promise.reject(new Error('no input in the bench')),
  resumedFromState: false,
  disconnectStream: () => false,
};

let db;
try {
  const created = performance.now();
  await admin(`CREATE SCHEMA ${schema}`);
  await admin(`DO $$ BEGIN
    FOR i IN 1..${TABLES} LOOP
      EXECUTE format('CREATE TABLE %I.%I (id integer PRIMARY KEY, qty integer NOT NULL DEFAULT 0, note text)', '${schema}', 't' || i);
      IF i % ${BATCH} = 0 THEN COMMIT; END IF;
    END LOOP; END $$`);
  console.log(
    `\nschema scale: created ${TABLES} tables in ${Math.round(performance.now() - created)} ms`,
  );
  db = await createDatabase(
    { url, poolSize: 2, embedded: { dataDir: '', demo: false } },
    pino({ level: 'silent' }),
  );
  const policy = createAccessPolicy(NO_RULES);
  const runs = [];
  for (let run = 0; run < 3; run++) {
    const catalog = createCatalog(db, policy, { ttlMs: 60_000 });
    const started = performance.now();
    const result = await createGetSchemaInfoTool(catalog).call({}, ctx);
    runs.push(performance.now() - started);
    if (result.isError) throw new Error(result.content[0].text);
  }
  const best = Math.min(...runs);
  console.log(
    `  get_schema_info, cold catalog: ${runs.map((ms) => Math.round(ms)).join(' / ')} ms`,
  );
  console.log(
    `  target best cold < ${TARGET_MS} ms: ${best < TARGET_MS ? 'PASS' : 'FAIL'} (${Math.round(best)} ms)`,
  );
} catch (error) {
  console.error(`schema-scale bench failed: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await db?.close();
  await admin(`DO $$ DECLARE r record; n int := 0; BEGIN
    FOR r IN SELECT relname FROM pg_class WHERE relnamespace = '${schema}'::regnamespace AND relkind = 'r' LOOP
      EXECUTE format('DROP TABLE %I.%I', '${schema}', r.relname);
      n := n + 1; IF n % ${BATCH} = 0 THEN COMMIT; END IF;
    END LOOP; END $$`).catch(() => undefined);
  await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
}
