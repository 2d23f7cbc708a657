// `node bench/embedded-policy.mjs`: what one `tools/call` of query_database costs under the
// access policy, on the embedded database (PGlite, `npm start`'s default, whose policy always
// denies the `pgmcp` state schema) and on PostgreSQL. For each server variant it starts
// `bin/pgmcp serve --http 127.0.0.1:0` with a fresh data directory, opens one legacy session and
// sends EMBPOL_CALLS sequential calls of each query (after EMBPOL_WARMUP calls), and reports the
// median wall time per call, the median of the `policy` stage from Server-Timing, and how many
// statements the server sent to its database per call (counted by bench/count-statements.mjs,
// preloaded into the server: every Parse and simple Query pg encodes).
//
// Variants (EMBPOL_ONLY=name,name to pick):
//   embedded           the default: PGlite, demo data, policy denying pgmcp
//   embedded-nopolicy  PGlite with the state database elsewhere (PostgreSQL database
//                      pgmcp_bench_state, created if missing), so no policy at all
//   postgres           PostgreSQL (database pgmcp_bench_policy, created if missing, on the server
//                      of BENCH_DATABASE_URL) with database.access.denySchemas set to one schema
//                      (pgmcp_bench_hidden), so a policy is active; without the catalog
//                      generation of sql/watch (dropped first): what a database gets without
//                      `pgmcp install`
//   postgres-generation the same with sql/watch installed (as `pgmcp install` does)
//   postgres-nopolicy  the same without the deny
// EMBPOL_VERBOSE=1 lists the statements of each query's calls. EMBPOL_COMPARE=<checkout> runs
// another build (its bin/pgmcp and dist/) beside this one, alternating, for EMBPOL_ROUNDS rounds
// (default 1; the figures are the median of the rounds' medians).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openLegacySession } from './shared.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const roots = [
  path.resolve(here, '..'),
  ...(process.env.EMBPOL_COMPARE ? [path.resolve(process.env.EMBPOL_COMPARE)] : []),
];
const rounds = Number(process.env.EMBPOL_ROUNDS ?? 1);
const calls = Number(process.env.EMBPOL_CALLS ?? 200);
const warmup = Number(process.env.EMBPOL_WARMUP ?? 50);
const verbose = process.env.EMBPOL_VERBOSE === '1';
const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const PG_SCHEMA = 'pgmcp_bench_policy';
const PG_DB = 'pgmcp_bench_policy';
const STATE_DB = 'pgmcp_bench_state';

const queries = (schema) => [
  { name: 'plain', sql: `SELECT id, name, country FROM ${schema}.sites WHERE id = $1`, n: 8 },
  {
    name: 'join',
    sql: `SELECT t.name, t.aperture_mm, s.name AS site FROM ${schema}.telescopes t JOIN ${schema}.sites s ON s.id = t.site_id WHERE t.id = $1`,
    n: 24,
  },
  { name: 'view', sql: `SELECT * FROM ${schema}.observation_log LIMIT 5`, n: 0 },
];

// On PostgreSQL: two demo-shaped tables and a view over them (made once).
const PG_SETUP = `
CREATE SCHEMA IF NOT EXISTS ${PG_SCHEMA};
CREATE TABLE IF NOT EXISTS ${PG_SCHEMA}.sites (id smallint PRIMARY KEY, name text NOT NULL, country text NOT NULL);
CREATE TABLE IF NOT EXISTS ${PG_SCHEMA}.telescopes (id smallint PRIMARY KEY,
  site_id smallint NOT NULL REFERENCES ${PG_SCHEMA}.sites (id), name text NOT NULL, aperture_mm integer NOT NULL);
INSERT INTO ${PG_SCHEMA}.sites SELECT i, 'site ' || i, 'country ' || i FROM generate_series(1, 8) i ON CONFLICT DO NOTHING;
INSERT INTO ${PG_SCHEMA}.telescopes SELECT i, 1 + (i - 1) / 3, 'telescope ' || i, 100 * i
  FROM generate_series(1, 24) i ON CONFLICT DO NOTHING;
DO $$ BEGIN
  IF to_regclass('${PG_SCHEMA}.observation_log') IS NULL THEN
    CREATE VIEW ${PG_SCHEMA}.observation_log AS
      SELECT t.id AS telescope_id, t.name AS telescope, s.name AS site, s.country
      FROM ${PG_SCHEMA}.telescopes t JOIN ${PG_SCHEMA}.sites s ON s.id = t.site_id;
    ANALYZE ${PG_SCHEMA}.sites, ${PG_SCHEMA}.telescopes;
  END IF;
END $$;`;

const databaseUrl = withDatabase(serverUrl, PG_DB);
const VARIANTS = {
  embedded: { schema: 'demo', args: [], env: {} },
  'embedded-nopolicy': {
    schema: 'demo',
    args: [],
    env: { PGMCP_STATE_URL: withDatabase(serverUrl, STATE_DB) },
    before: () => ensureDatabase(STATE_DB),
  },
  postgres: {
    schema: PG_SCHEMA,
    args: ['--database', databaseUrl],
    env: { PGMCP_DENY_SCHEMAS: 'pgmcp_bench_hidden' },
    before: () => setupPostgres(false),
  },
  'postgres-generation': {
    schema: PG_SCHEMA,
    args: ['--database', databaseUrl],
    env: { PGMCP_DENY_SCHEMAS: 'pgmcp_bench_hidden' },
    before: () => setupPostgres(true),
  },
  'postgres-nopolicy': {
    schema: PG_SCHEMA,
    args: ['--database', databaseUrl],
    env: {},
    before: () => setupPostgres(false),
  },
};

function withDatabase(url, name) {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function withClient(url, work) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * The fixture, and the catalog generation installed (this checkout's sql/watch) or removed. The
 * catalogs are vacuumed after a change: dead catalog rows make the planner's work (the policy's
 * lookups are planned on every call) vary from one server to the next.
 */
async function setupPostgres(generation) {
  await ensureDatabase(PG_DB);
  await withClient(databaseUrl, async (c) => {
    await c.query(PG_SETUP);
    const { rows } = await c.query("SELECT to_regnamespace('pgmcp_watch') IS NOT NULL AS present");
    if (rows[0].present === generation) return;
    if (generation)
      for (const file of ['001_event_trigger.sql', '002_generation.sql'])
        await c.query(readFileSync(path.join(here, '..', 'sql', 'watch', file), 'utf8'));
    else await c.query('DROP SCHEMA pgmcp_watch CASCADE');
    await c.query(
      'VACUUM (ANALYZE) pg_catalog.pg_class, pg_catalog.pg_attribute, pg_catalog.pg_depend, pg_catalog.pg_rewrite, pg_catalog.pg_proc, pg_catalog.pg_type, pg_catalog.pg_namespace',
    );
  });
}

async function ensureDatabase(name) {
  await withClient(withDatabase(serverUrl, 'postgres'), async (c) => {
    const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) await c.query(`CREATE DATABASE ${name}`);
  });
}

function cleanEnv(extra) {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('PGMCP_') && k !== 'DATABASE_URL'),
  );
  return { ...env, ...extra };
}

async function startServer(root, variant, dataDir) {
  const args = [
    ...(process.env.EMBPOL_PROFILE_DIR
      ? ['--cpu-prof', '--cpu-prof-dir', process.env.EMBPOL_PROFILE_DIR]
      : []),
    '--import',
    path.join(here, 'count-statements.mjs'),
    path.join(root, 'bin', 'pgmcp'),
    'serve',
    '--http',
    '127.0.0.1:0',
    '--data-dir',
    dataDir,
    ...variant.args,
  ];
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: cleanEnv(variant.env),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  let stdout = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start in 180 s:\n${stderr}`)), 180_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /serving MCP at (\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`pgmcp exited (${code}) before serving:\n${stderr || stdout}`));
    });
  });
  child.stdout.resume();
  return { child, url };
}

function statementCounts(child) {
  return new Promise((resolve) => {
    const onMessage = (m) => {
      if (m?.type !== 'statement-counts') return;
      child.off('message', onMessage);
      resolve(new Map(m.counts));
    };
    child.on('message', onMessage);
    child.send({ type: 'statement-counts' });
  });
}

async function openSession(url) {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(await openLegacySession(url)),
  };
}

let nextId = 1;
async function callOnce(url, headers, query, i) {
  const args = { query: query.sql, ...(query.n > 0 ? { params: [1 + (i % query.n)] } : {}) };
  const started = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name: 'query_database', arguments: args },
    }),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200 || text.includes('"isError":true') || text.includes('"error":{'))
    throw new Error(`${query.name}: HTTP ${res.status} ${text.slice(0, 400)}`);
  const timing = res.headers.get('server-timing') ?? '';
  const policy = /policy;dur=([\d.]+)/.exec(timing);
  return { ms, policyMs: policy ? Number(policy[1]) : NaN };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor((s.length - 1) / 2)];
};

async function runVariant(name, root) {
  const variant = VARIANTS[name];
  await variant.before?.();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pgmcp-embpolicy-'));
  const { child, url } = await startServer(root, variant, dataDir);
  const rows = [];
  try {
    const headers = await openSession(url);
    // Every query warmed up before any is measured (the first calls also wait for the server's
    // start-up work: the SQL parser, the catalog, the routines).
    for (const query of queries(variant.schema))
      for (let i = 0; i < warmup; i++) await callOnce(url, headers, query, i);
    for (const query of queries(variant.schema)) {
      for (let i = 0; i < 5; i++) await callOnce(url, headers, query, i);
      await statementCounts(child); // reset
      const samples = [];
      for (let i = 0; i < calls; i++) samples.push(await callOnce(url, headers, query, i));
      const counts = await statementCounts(child);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      rows.push({
        root,
        variant: name,
        query: query.name,
        ms: median(samples.map((s) => s.ms)),
        policyMs: median(samples.map((s) => s.policyMs)),
        statements: total / calls,
      });
      if (verbose) {
        console.log(`  ${root} ${name} ${query.name}: statements per call`);
        for (const [text, n] of [...counts].sort((a, b) => b[1] - a[1]))
          console.log(`    ${(n / calls).toFixed(2).padStart(6)}  ${text}`);
      }
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

const only = process.env.EMBPOL_ONLY?.split(',') ?? Object.keys(VARIANTS);
const results = [];
for (let round = 0; round < rounds; round++)
  for (const name of only)
    for (const root of roots) results.push(...(await runVariant(name, root)));

console.log(
  `\n${calls} sequential calls per row (after ${warmup} warm-up), one session; ${rounds} round(s), median of the rounds`,
);
for (const root of roots) {
  console.log(`\n${root}`);
  console.log('variant              query   median ms  policy ms  statements/call');
  console.log('------------------------------------------------------------------');
  for (const name of only) {
    for (const query of ['plain', 'join', 'view']) {
      const mine = results.filter(
        (r) => r.root === root && r.variant === name && r.query === query,
      );
      if (mine.length === 0) continue;
      const m = (key) => median(mine.map((r) => r[key]));
      console.log(
        `${name.padEnd(20)} ${query.padEnd(7)} ${m('ms').toFixed(2).padStart(9)}  ${m('policyMs')
          .toFixed(2)
          .padStart(9)}  ${m('statements').toFixed(2).padStart(15)}`,
      );
    }
  }
}
