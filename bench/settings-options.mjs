// `node bench/settings-options.mjs`: what each way of carrying the per-call safety settings
// costs PostgreSQL, in CPU µs of the backends per call (from /proc), the bench's point lookup
// as the statement. No HTTP and no pgmcp: each option is a pipeline of extended-protocol
// messages written by hand, so only the server-side cost differs. Options are interleaved,
// the order reversed every other round; the table shows medians.
//
//   BENCH_SECONDS (default 3), BENCH_ROUNDS (3), BENCH_CONCURRENCY (8: one connection per
//   worker), BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/test), OPTIONS (comma list).
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { KV_ROWS, KV_SCHEMA, KV_SQL, lockFixture, ensureKvTable } from './shared.mjs';

const url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
const APP = `pgmcp-settings-${process.pid}`;

// The settings statement pgmcp sent per call until this measurement (database.ts).
const SETTINGS =
  "SELECT set_config('transaction_read_only', 'on', true), set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $2, true)," +
  " set_config('auth.user_id', $3, true), set_config('auth.tenant_id', $4, true), set_config('auth.claims', $5, true)," +
  " set_config('standard_conforming_strings', 'on', true), set_config('role', $6, true)";
const SETTINGS_VALUES = ['30000ms', '35000ms', '', '', '{}', 'none'];
const SESSION_SETTINGS = SETTINGS.replaceAll(', true)', ', false)').replace(
  "set_config('transaction_read_only', 'on', false), ",
  '',
);
const IDENTITY =
  "SELECT set_config('auth.user_id', $1, true), set_config('auth.tenant_id', $2, true), set_config('auth.claims', $3, true)";
const IDENTITY_VALUES = ['alice', '', '{"sub":"alice"}'];
const NONCE = 'k3J9x0Qm2v';
const NONCE_SET = "SELECT set_config('pgmcp.session', $1, false)";
// Fails (division by zero) unless the session carries this connection's settings.
const CHECK = "SELECT 1 / (pg_catalog.current_setting('pgmcp.session', true) = $1)::int";
const CHECK_IDENTITY =
  "SELECT 1 / (pg_catalog.current_setting('pgmcp.session', true) = $1)::int, set_config('auth.user_id', $2, true), set_config('auth.tenant_id', $3, true), set_config('auth.claims', $4, true)";
const CONDITIONAL =
  "SELECT CASE WHEN pg_catalog.current_setting('pgmcp.session', true) = $1 THEN '' ELSE set_config('statement_timeout', $2, true) || set_config('idle_in_transaction_session_timeout', $3, true) || set_config('auth.user_id', $4, true) || set_config('auth.tenant_id', $5, true) || set_config('auth.claims', $6, true) || set_config('standard_conforming_strings', 'on', true) || set_config('role', $7, true) END";
const ROLE_ONLY = "SELECT set_config('role', $1, true)";

const step = (text, values = [], name) => ({ text, values, name });
const lookup = (key) => step(KV_SQL, [String(key)]);

/**
 * Each option: `prepare` (per connection, once) and `steps(key)` (per call; the statement is
 * the step with `rows: true`). Named steps are parsed once per connection.
 */
const OPTIONS = {
  raw: { steps: (k) => [{ ...lookup(k), rows: true }] },
  today: { steps: (k) => [step(SETTINGS, SETTINGS_VALUES), { ...lookup(k), rows: true }] },
  'today-prepared': {
    steps: (k) => [step(SETTINGS, SETTINGS_VALUES, 'pgmcp_settings'), { ...lookup(k), rows: true }],
  },
  'begin-rollback': {
    prepare: [step(SESSION_SETTINGS, SETTINGS_VALUES.slice(0))],
    steps: (k) => [step('BEGIN READ ONLY'), { ...lookup(k), rows: true }, step('ROLLBACK')],
  },
  'begin-rollback-prepared': {
    prepare: [step(SESSION_SETTINGS, SETTINGS_VALUES)],
    steps: (k) => [
      step('BEGIN READ ONLY', [], 'pgmcp_begin_ro'),
      { ...lookup(k), rows: true },
      step('ROLLBACK', [], 'pgmcp_rollback'),
    ],
  },
  'begin-rollback+identity': {
    prepare: [step(SESSION_SETTINGS, SETTINGS_VALUES)],
    steps: (k) => [
      step('BEGIN READ ONLY'),
      step(IDENTITY, IDENTITY_VALUES),
      { ...lookup(k), rows: true },
      step('ROLLBACK'),
    ],
  },
  'begin-rollback+identity-prepared': {
    prepare: [step(SESSION_SETTINGS, SETTINGS_VALUES)],
    steps: (k) => [
      step('BEGIN READ ONLY', [], 'pgmcp_begin_ro'),
      step(IDENTITY, IDENTITY_VALUES, 'pgmcp_identity'),
      { ...lookup(k), rows: true },
      step('ROLLBACK', [], 'pgmcp_rollback'),
    ],
  },
  'begin-check-rollback': {
    prepare: [step(SESSION_SETTINGS, SETTINGS_VALUES), step(NONCE_SET, [NONCE])],
    steps: (k) => [
      step('BEGIN READ ONLY'),
      step(CHECK, [NONCE]),
      { ...lookup(k), rows: true },
      step('ROLLBACK'),
    ],
  },
  'begin-check+identity-rollback': {
    prepare: [step(SESSION_SETTINGS, SETTINGS_VALUES), step(NONCE_SET, [NONCE])],
    steps: (k) => [
      step('BEGIN READ ONLY'),
      step(CHECK_IDENTITY, [NONCE, ...IDENTITY_VALUES]),
      { ...lookup(k), rows: true },
      step('ROLLBACK'),
    ],
  },
  'begin-conditional-rollback': {
    prepare: [step(SESSION_SETTINGS, SETTINGS_VALUES), step(NONCE_SET, [NONCE])],
    steps: (k) => [
      step('BEGIN READ ONLY'),
      step(CONDITIONAL, [NONCE, ...SETTINGS_VALUES]),
      { ...lookup(k), rows: true },
      step('ROLLBACK'),
    ],
  },
  'begin-commit': {
    prepare: [step(SESSION_SETTINGS, SETTINGS_VALUES)],
    steps: (k) => [step('BEGIN READ ONLY'), { ...lookup(k), rows: true }, step('COMMIT')],
  },
  'ro-only': {
    steps: (k) => [
      step("SELECT set_config('transaction_read_only', 'on', true)"),
      { ...lookup(k), rows: true },
    ],
  },
  'role-only': { steps: (k) => [step(ROLE_ONLY, ['none']), { ...lookup(k), rows: true }] },
  'statement-prepared': {
    steps: (k) => [{ ...step(KV_SQL, [String(k)], 'pgmcp_kv'), rows: true }],
  },
};
const chosen = (process.env.OPTIONS?.split(',') ?? Object.keys(OPTIONS)).filter((o) => OPTIONS[o]);

/** A pg Submittable sending the steps before one Sync; resolves on ReadyForQuery. */
class Steps {
  constructor(steps, parsed) {
    this.steps = steps;
    this.parsed = parsed;
    this.rows = 0;
    this.at = 0;
    this.promise = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
  submit(connection) {
    connection.stream.cork?.();
    for (const s of this.steps) {
      if (!s.name || !this.parsed.has(s.name)) {
        connection.parse({ text: s.text, name: s.name ?? '' });
        if (s.name) this.parsed.add(s.name);
      }
      connection.bind({ statement: s.name ?? '', values: s.values });
      if (s.rows) connection.describe({ type: 'P', name: '' });
      connection.execute({ rows: 0 });
    }
    connection.sync();
    connection.stream.uncork?.();
    return null;
  }
  handleDataRow() {
    if (this.steps[this.at]?.rows) this.rows++;
  }
  handleRowDescription() {}
  handleCommandComplete() {
    this.at++;
  }
  handleEmptyQuery() {
    this.at++;
  }
  handlePortalSuspended() {
    this.at++;
  }
  handleError(error) {
    this.error = error;
  }
  handleReadyForQuery() {
    if (this.error) this.reject(this.error);
    else this.resolve(this.rows);
  }
}

const ticks = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
};

async function runOption(name, monitor) {
  const option = OPTIONS[name];
  const clients = [];
  for (let i = 0; i < concurrency; i++) {
    const client = new pg.Client({ connectionString: url, application_name: APP });
    await client.connect();
    for (const s of option.prepare ?? []) await client.query(s.text, s.values);
    clients.push({ client, parsed: new Set() });
  }
  const pids = (
    await monitor.query('select pid from pg_stat_activity where application_name = $1', [APP])
  ).rows.map((r) => r.pid);
  let done = 0;
  let measuring = false;
  let stop = false;
  const worker = async ({ client, parsed }, w) => {
    for (let seq = 0; !stop; seq++) {
      const key = 1 + ((seq * 7919 + w * 104_729) % KV_ROWS);
      const s = new Steps(option.steps(key), parsed);
      client.query(s);
      const rows = await s.promise;
      if (rows !== 1) throw new Error(`${name}: ${rows} rows`);
      if (measuring) done++;
    }
  };
  const running = clients.map((c, w) => worker(c, w));
  await new Promise((r) => setTimeout(r, 500));
  const before = pids.map(ticks);
  const started = performance.now();
  measuring = true;
  await new Promise((r) => setTimeout(r, seconds * 1000));
  measuring = false;
  const after = pids.map(ticks);
  const elapsed = (performance.now() - started) / 1000;
  stop = true;
  await Promise.all(running);
  await Promise.all(clients.map((c) => c.client.end()));
  const used = after.reduce((n, t, i) => n + t - before[i], 0) * 1e4; // µs at 100 Hz
  return { us: used / done, rps: done / elapsed };
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// The fixture schema is shared with run.mjs: one script per database at a time.
const fixtureLock = await lockFixture(url);
const monitor = new pg.Client({ connectionString: url });
await monitor.connect();
const created = await ensureKvTable(monitor);
const results = Object.fromEntries(chosen.map((o) => [o, []]));
for (let round = 0; round < rounds; round++) {
  const order = round % 2 ? [...chosen].reverse() : chosen;
  for (const o of order) {
    const r = await runOption(o, monitor);
    results[o].push(r);
    console.error(
      `round ${round + 1} ${o.padEnd(34)} ${r.us.toFixed(1)} µs  ${r.rps.toFixed(0)}/s`,
    );
  }
}
const rawUs = median(results.raw?.map((r) => r.us) ?? [NaN]);
console.log(
  `\nPostgreSQL CPU per call, C=${concurrency}, ${rounds} rounds × ${seconds} s (median)`,
);
console.log(
  `${'option'.padEnd(34)} ${'pg µs'.padStart(7)} ${'× raw'.padStart(6)} ${'calls/s'.padStart(8)}`,
);
for (const o of chosen) {
  const us = median(results[o].map((r) => r.us));
  const rps = median(results[o].map((r) => r.rps));
  console.log(
    `${o.padEnd(34)} ${us.toFixed(1).padStart(7)} ${(us / rawUs).toFixed(2).padStart(6)} ${rps.toFixed(0).padStart(8)}`,
  );
}
if (created) await monitor.query(`drop schema ${KV_SCHEMA} cascade`);
await monitor.end();
await fixtureLock.end();
