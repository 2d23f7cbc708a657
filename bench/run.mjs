// `npm run bench`: pgmcp's HTTP request path against a bare node:http JSON echo, and
// query_database against a raw pg.Pool, measured in the same run with the variants
// interleaved. Three child processes: the echo server, pgmcp (real PostgreSQL) and the load
// generator; this process only orchestrates, samples CPU time from /proc and reports.
//
// Environment (all optional):
//   BENCH_SECONDS          measured seconds per cell (default 5)
//   BENCH_WARMUP_SECONDS   warm-up seconds per cell (default min(2, BENCH_SECONDS))
//   BENCH_ROUNDS           rounds over all cells, order reversed every other round (default 2)
//   BENCH_CONCURRENCY      comma list (default 1,8,32)
//   BENCH_ONLY             comma list of variant keys (echo,echo-list,ping,list,list-modern,
//                          call,call-auth,raw,floor,raw-tx,routine,raw-routine,handler)
//   BENCH_VALIDATE_EVERY   parse and check every Nth HTTP answer in full (default 8; 1 = all)
//   BENCH_DATABASE_URL     default postgres://postgres@127.0.0.1:5432/test
//   BENCH_PROFILE=1        run pgmcp under --cpu-prof and print where its time went
//   BENCH_PIN=1            PostgreSQL's backends on the last core, the bench's own processes on
//                          the others (taskset): PostgreSQL's CPU without pgmcp beside it
//   BENCH_STAGES=0         skip the stage table (a pgmcp under --cpu-prof, after the rounds)
//   BENCH_STAGES_SECONDS   measured seconds per profiled cell (default BENCH_SECONDS)
//   BENCH_STAGES_C         the profiled cells' concurrency (default the highest of
//                          BENCH_CONCURRENCY)
//   BENCH_STAGES_US        the profiler's sampling interval in µs (default 500)
//   PGMCP_BENCH_ROOT       the checkout whose bin/pgmcp and dist/ are the server under test
//                          (default this one): a before/after pair measured on one machine state
//
// Exit status: 0 when every request succeeded (missed targets are reported, never fatal);
// 1 when a server did not start or any request failed.
import { execFileSync, fork, spawn } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { summarizeProfile } from './profile-summary.mjs';
import { attributeProfile, formatStageTables, stageRows } from './stages.mjs';
import {
  KV_HANDLER,
  KV_ROWS,
  KV_SCHEMA,
  MODERN_VERSION,
  lockFixture,
  openLegacySession,
} from './shared.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
/** The server under test: this checkout, or another build's (PGMCP_BENCH_ROOT). */
const serverRoot = path.resolve(process.env.PGMCP_BENCH_ROOT?.trim() || root);
const resultsDir = path.join(here, 'results');

// ---- settings ---------------------------------------------------------------------------

function numberFromEnv(name, fallback, { min = 0 } = {}) {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) {
    throw new Error(`${name} must be a number ≥ ${min}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

const measureSeconds = numberFromEnv('BENCH_SECONDS', 5, { min: 0.2 });
const warmupSeconds = numberFromEnv('BENCH_WARMUP_SECONDS', Math.min(2, measureSeconds));
const rounds = Math.max(1, Math.round(numberFromEnv('BENCH_ROUNDS', 2, { min: 1 })));
const validateEvery = Math.max(1, Math.round(numberFromEnv('BENCH_VALIDATE_EVERY', 8, { min: 1 })));
const concurrencies = (process.env.BENCH_CONCURRENCY ?? '1,8,32')
  .split(',')
  .map((c) => Number(c.trim()))
  .filter((c) => Number.isInteger(c) && c > 0 && c <= 256);
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const profiling = process.env.BENCH_PROFILE === '1';
const pinning = process.env.BENCH_PIN === '1';

/** Pin processes (every thread) to a CPU list with taskset; a process already gone is skipped. */
function pin(pids, cpuList) {
  for (const pid of pids) {
    try {
      execFileSync('taskset', ['-a', '-pc', cpuList, String(pid)], { stdio: 'ignore' });
    } catch {
      // ended meanwhile
    }
  }
}

/**
 * A process and its descendants (pgmcp's embedded state database runs as a child), the children
 * of every thread of each (a child belongs to the thread that forked it).
 */
function withChildren(pid) {
  const out = [pid];
  let tasks = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out; // not Linux, or gone
  }
  for (const task of tasks) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
    } catch {
      continue; // the thread ended meanwhile
    }
    for (const child of children ? children.split(/\s+/) : [])
      out.push(...withChildren(Number(child)));
  }
  return out;
}
/** pgmcp's database.poolSize (its default), and the raw pool's size. */
const POOL_SIZE = 10;
const START_TIMEOUT_MS = 30_000;
const CELL_SLACK_MS = 30_000;

// ---- variants ---------------------------------------------------------------------------

const VARIANTS = [
  { key: 'echo', label: 'bare node:http JSON echo', kind: 'http', server: 'echo', op: 'echo' },
  {
    key: 'echo-list',
    label: 'bare echo, same tools/list bytes',
    kind: 'http',
    server: 'echo',
    op: 'tools/list',
  },
  {
    key: 'ping',
    label: 'pgmcp ping (legacy session)',
    kind: 'http',
    server: 'pgmcp',
    op: 'ping',
    era: 'legacy',
  },
  {
    key: 'list',
    label: 'pgmcp tools/list (legacy session)',
    kind: 'http',
    server: 'pgmcp',
    op: 'tools/list',
    era: 'legacy',
  },
  {
    key: 'list-modern',
    label: `pgmcp tools/list (${MODERN_VERSION} stateless)`,
    kind: 'http',
    server: 'pgmcp',
    op: 'tools/list-modern',
    era: 'modern',
  },
  {
    key: 'call',
    label: 'pgmcp tools/call query_database (legacy)',
    kind: 'http',
    server: 'pgmcp',
    op: 'tools/call',
    era: 'legacy',
  },
  {
    // The same call with a bearer token, on the same server: every request's token is checked
    // (on loopback a bearer is verified even though auth is not required).
    key: 'call-auth',
    label: 'pgmcp tools/call, Authorization: Bearer',
    kind: 'http',
    server: 'pgmcp',
    op: 'tools/call',
    era: 'legacy',
    auth: true,
  },
  { key: 'raw', label: `raw pg.Pool(${POOL_SIZE}) same lookup`, kind: 'pg', mode: 'plain' },
  {
    // The same tools/call request, answered by the echo server through pg.Pool with nothing
    // else (bench/echo-server.mjs): a bare reference for HTTP + this SQL on this machine.
    key: 'floor',
    label: `bare node:http + pg.Pool(${POOL_SIZE}) lookup`,
    kind: 'http',
    server: 'echo',
    op: 'tools/call',
  },
  {
    key: 'routine',
    label: 'pgmcp tools/call kv_get (@mcp STABLE fn)',
    kind: 'http',
    server: 'pgmcp',
    op: 'tools/call-routine',
    era: 'legacy',
  },
  {
    key: 'raw-routine',
    label: `raw pg.Pool(${POOL_SIZE}) select * from kv_get($1)`,
    kind: 'pg',
    mode: 'routine',
  },
  {
    // A registry handler (schema mcp, installed for the run when missing) doing the lookup.
    key: 'handler',
    label: `pgmcp tools/call ${KV_HANDLER} (SQL handler)`,
    kind: 'http',
    server: 'pgmcp',
    op: 'tools/call-handler',
    era: 'legacy',
  },
  { key: 'raw-tx', label: 'pgmcp db layer only (1 trip, no HTTP/MCP)', kind: 'pg', mode: 'tx' },
];
const only = process.env.BENCH_ONLY?.split(',')
  .map((k) => k.trim())
  .filter(Boolean);
const variants = only ? VARIANTS.filter((v) => only.includes(v.key)) : VARIANTS;
/** The tool calls the stage table profiles (those of the run's variants). */
const STAGE_VARIANT_KEYS = ['call', 'routine', 'handler'];
const stageVariants =
  process.env.BENCH_STAGES === '0'
    ? []
    : variants.filter((v) => STAGE_VARIANT_KEYS.includes(v.key));
const stagesSeconds = numberFromEnv('BENCH_STAGES_SECONDS', measureSeconds, { min: 0.2 });
const stagesConcurrency = Math.round(
  numberFromEnv('BENCH_STAGES_C', Math.max(...concurrencies), { min: 1 }),
);
const stagesIntervalUs = Math.round(numberFromEnv('BENCH_STAGES_US', 500, { min: 50 }));

// ---- child processes --------------------------------------------------------------------

const children = new Set();

function track(child, name) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.benchName = name;
  return child;
}

function stopChild(child, timeoutMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

const profileFlags = (dir) => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);

async function startEcho(profileDir) {
  const child = track(
    fork(path.join(here, 'echo-server.mjs'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: profileFlags(profileDir),
    }),
    'echo',
  );
  const port = await withTimeout(
    new Promise((resolve, reject) => {
      child.on('message', (m) => m?.type === 'ready' && resolve(m.port));
      child.once('exit', (code) =>
        reject(new Error(`echo server exited (${code}) before listening`)),
      );
    }),
    START_TIMEOUT_MS,
    'echo server start',
  );
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

/** The URL with application_name set, so the bench can find its backends in pg_stat_activity. */
function withAppName(url, name) {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

/** The environment pgmcp children get: none of the caller's PGMCP_ settings. */
function pgmcpEnv() {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('PGMCP_') && k !== 'DATABASE_URL'),
  );
}

/**
 * pgmcp's state database (tokens, sessions, audit): the embedded one in a directory of the
 * bench's own, so a developer's server holding .pgmcp/data is never touched. It persists
 * between runs (results/ is ignored by git), which spares the embedded database's first start.
 * Another build (PGMCP_BENCH_ROOT) gets a directory of its own: its migrations may differ.
 */
const STATE_DIR = path.join(
  resultsDir,
  serverRoot === root
    ? 'state'
    : `state-${serverRoot.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`,
);

/**
 * An API token for the call-auth variant, made the way an operator makes one, in the state
 * database the server will use. A fresh name each run (names are unique among live tokens); it
 * expires within the hour, so tokens left by earlier runs are dead.
 */
function createToken() {
  const name = `bench-${new Date()
    .toISOString()
    .replace(/[^0-9]/g, '')
    .slice(0, 14)}-${process.pid}`;
  const args = [path.join(serverRoot, 'bin', 'pgmcp'), 'token', 'create', '--name', name];
  args.push('--expires', '1h', '--data-dir', STATE_DIR);
  const token = execFileSync(process.execPath, args, {
    cwd: serverRoot,
    env: pgmcpEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  }).trim();
  if (!/^pgmcp_[A-Za-z0-9_-]+$/.test(token)) throw new Error('pgmcp token create printed no token');
  return { name, token };
}

/**
 * profileDir: run under --cpu-prof. unbundled: run tsc's dist/cli/main.js instead of the bundle
 * bin/pgmcp loads (the same code, one module per source file, so a profile's frames name
 * their files; the stage table needs that). intervalUs: the profiler's sampling interval.
 */
async function startPgmcp(profileDir, { unbundled = false, intervalUs = null } = {}) {
  const env = pgmcpEnv();
  env.PGMCP_POOL_SIZE = String(POOL_SIZE);
  // No exchange log, so every variant measures what it did before the handler variant installed
  // schema mcp (where it exists the log is on by default: one row per request answered), and a
  // registry the bench found is not filled with its requests.
  env.PGMCP_EXCHANGE_LOG = 'false';
  // BENCH_METRICS=1: the same server with Prometheus metrics on (their own loopback port), to
  // measure what counting costs a request.
  if (process.env.BENCH_METRICS === '1') {
    env.PGMCP_METRICS_ENABLED = 'true';
    env.PGMCP_METRICS_LISTEN = '127.0.0.1:0';
  }
  const args = [
    ...profileFlags(profileDir),
    ...(profileDir && intervalUs ? [`--cpu-prof-interval=${intervalUs}`] : []),
    unbundled
      ? path.join(serverRoot, 'dist', 'cli', 'main.js')
      : path.join(serverRoot, 'bin', 'pgmcp'),
    'serve',
    '--http',
    '127.0.0.1:0',
    '--database',
    withAppName(databaseUrl, APP_NAMES.server),
    '--data-dir',
    STATE_DIR,
  ];
  const child = track(
    spawn(process.execPath, args, { cwd: serverRoot, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    'pgmcp',
  );
  const log = createWriteStream(path.join(resultsDir, 'pgmcp-stderr.log'));
  let stderrTail = '';
  child.stderr.on('data', (chunk) => {
    log.write(chunk);
    stderrTail = (stderrTail + chunk).slice(-2000);
  });
  child.once('exit', () => log.end());
  let stdout = '';
  const url = await withTimeout(
    new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        const match = /serving MCP at (\S+)/.exec(stdout);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) =>
        reject(new Error(`pgmcp exited (${code}) before serving:\n${stderrTail || stdout}`)),
      );
    }),
    START_TIMEOUT_MS,
    'pgmcp start',
  );
  child.stdout.resume();
  return { child, url };
}

function startLoadgen() {
  const child = track(
    fork(path.join(here, 'loadgen.mjs'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: [],
    }),
    'loadgen',
  );
  let nextId = 1;
  const pending = new Map();
  child.on('message', (m) => pending.get(m?.id)?.(m));
  child.once('exit', (code) => {
    for (const settle of pending.values())
      settle({ type: 'result', error: `load generator exited (${code})` });
  });
  return {
    child,
    /**
     * Runs one cell. onWindow('start') fires when the warm-up ends, onWindow('end') when the
     * measured window closes; the load generator keeps its pool open until the latter settles.
     */
    run(spec, onWindow) {
      const id = nextId++;
      const limit = (spec.warmupMs ?? 0) + spec.durationMs + CELL_SLACK_MS;
      return withTimeout(
        new Promise((resolve, reject) => {
          pending.set(id, (m) => {
            if (m.type === 'window') {
              void Promise.resolve()
                .then(() => onWindow?.(m.phase))
                .catch((error) => console.error(`CPU sampling failed: ${error.message}`))
                .finally(() => m.phase === 'end' && child.send({ type: 'ack', id }));
              return;
            }
            pending.delete(id);
            if (m.error) reject(new Error(m.error));
            else resolve(m.result);
          });
          child.send({ type: 'cell', id, spec });
        }),
        limit,
        `cell ${spec.op ?? spec.mode}`,
      ).finally(() => pending.delete(id));
    },
  };
}

// ---- CPU time from /proc (Linux; null elsewhere) ------------------------------------------

const TICK_US = (() => {
  try {
    return 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return 1e4;
  }
})();

function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return null;
  }
}

/** One thread's ticks (utime + stime): the main thread's is /proc/PID/task/PID. */
function threadTicks(pid, tid = pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

/**
 * A process's ticks by kind of thread: { main, profiler (V8's sampling thread under
 * --cpu-prof), others (V8's platform workers: GC, compiler; libuv's pool) }.
 */
function threadKinds(pid) {
  const out = { main: threadTicks(pid), profiler: 0, others: 0 };
  let tasks = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const task of tasks) {
    if (task === String(pid)) continue;
    const ticks = threadTicks(pid, task) ?? 0;
    let name = '';
    try {
      name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
    } catch {
      // ended meanwhile
    }
    if (name.startsWith('v8:Prof')) out.profiler += ticks;
    else out.others += ticks;
  }
  return out;
}

/**
 * Ticks of a process and every descendant, by pid: a server's CPU is its whole tree's (pgmcp's
 * embedded state database is a child process, and writes the audit rows of every call).
 */
function treeTicks(pid) {
  const ticks = new Map();
  for (const each of withChildren(pid)) {
    const t = cpuTicks(each);
    if (t !== null) ticks.set(each, t);
  }
  return { root: pid, ticks };
}

/**
 * Ticks a tree used between two snapshots: { total, children }, or null when its root is gone.
 * A descendant born inside the window counts from zero; one that ended inside it is not seen.
 */
function treeDelta(before, after) {
  if (!before.ticks.has(before.root) || !after.ticks.has(after.root)) return null;
  let total = 0;
  let children = 0;
  for (const [pid, t] of after.ticks) {
    const used = t - (before.ticks.get(pid) ?? 0);
    total += used;
    if (pid !== after.root) children += used;
  }
  return { total, children };
}

/** Busy ticks of the whole machine (all cores), from the first line of /proc/stat. */
function machineBusyTicks() {
  try {
    const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
    // user nice system idle iowait irq softirq steal …: everything but idle and iowait.
    const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
    return user + nice + system + irq + softirq + (steal || 0);
  } catch {
    return null;
  }
}

/** PostgreSQL backends opened by this bench (pgmcp's pool and the raw pools), by application_name. */
const APP_NAMES = {
  server: 'pgmcp-bench-server',
  raw: 'pgmcp-bench-raw',
  floor: 'pgmcp-bench-floor',
};

// ---- the stage table ------------------------------------------------------------------------

/**
 * Runs a pgmcp of its own under --cpu-prof (tsc's unbundled dist/, so frames name their source
 * files) through one primed, measured cell per tool-call variant, then attributes each cell's
 * samples to the stages of bench/stages.mjs and its /proc CPU (main thread, other threads,
 * child processes) to the rows. Returns one entry per variant.
 */
async function profileStages({ loadgen, specFor, warmupMs, validateEvery }) {
  const dir = path.join(resultsDir, 'profiles', `stages-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  console.log(
    `stage table: pgmcp (unbundled dist/) under --cpu-prof every ${stagesIntervalUs} µs, ${stageVariants.map((v) => v.key).join(', ')} at C=${stagesConcurrency}, ${stagesSeconds} s each`,
  );
  const server = await startPgmcp(dir, { unbundled: true, intervalUs: stagesIntervalUs });
  const pid = server.child.pid;
  const windows = [];
  try {
    const headers = await openLegacySession(server.url);
    const snap = () => ({
      us: Number(process.hrtime.bigint() / 1000n), // the profile's clock (monotonic, µs)
      threads: threadKinds(pid),
      tree: treeTicks(pid),
    });
    for (const variant of stageVariants) {
      const spec = specFor(variant, stagesConcurrency, {
        url: server.url,
        headers,
        durationMs: Math.round(stagesSeconds * 1000),
        validateEvery,
      });
      if (warmupMs > 0) await loadgen.run({ ...spec, warmupMs: 0, durationMs: warmupMs });
      let start = null;
      let end = null;
      const result = await loadgen.run(spec, (phase) => {
        if (phase === 'start') start = snap();
        else end = snap();
      });
      windows.push({ variant, result, start, end });
      console.log(
        `  profiled ${pad(variant.key, 8, true)} C=${stagesConcurrency} ${pad(int(result.rps), 7)} req/s${result.errors ? `  ERRORS ${result.errors}: ${result.errorSamples[0]}` : ''}`,
      );
    }
  } finally {
    await stopChild(server.child, 30_000);
  }
  // The main thread's profile: CPU.<date>.<time>.<pid>.<thread 0>.<seq>.cpuprofile.
  const file = readdirSync(dir).find((f) => f.includes(`.${pid}.0.`) && f.endsWith('.cpuprofile'));
  if (!file) {
    console.log(`\nno CPU profile from the profiled pgmcp in ${dir} (did it exit cleanly?)`);
    return [];
  }
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  return windows.map(({ variant, result, start, end }) => {
    const attributed =
      start && end
        ? attributeProfile(profile, { from: start.us, to: end.us })
        : { stages: {}, busySamples: 0, idleSamples: 0, unknownFiles: {}, topFrames: {} };
    const tree = start && end ? treeDelta(start.tree, end.tree) : null;
    const calls = result.completed;
    const perCall = (ticks) => (calls > 0 && ticks !== null ? (ticks * TICK_US) / calls : null);
    const used = (kind) =>
      start?.threads[kind] != null && end?.threads[kind] != null
        ? end.threads[kind] - start.threads[kind]
        : null;
    // The profiled process's own CPU per call; the report scales the stages to the unprofiled
    // cells' CPU where the same variant ran at the same concurrency.
    const profiled = {
      mainThread: perCall(used('main')),
      otherThreads: perCall(used('others')),
      profilerThread: perCall(used('profiler')),
      children: perCall(tree?.children ?? null),
      busySamples: attributed.busySamples,
    };
    return {
      key: variant.key,
      name: variant.key,
      concurrency: stagesConcurrency,
      errors: result.errors,
      rps: result.rps,
      profile: path.relative(root, path.join(dir, file)),
      calls,
      profiled,
      attributed,
    };
  });
}

// ---- database fixture ---------------------------------------------------------------------

async function withClient(work) {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

// One bench run per database at a time: the fixture's schema name is fixed, and a second run
// would drop and refill it under the first. A session-level advisory lock, held on a connection
// of its own until the run ends, says so instead.
let fixtureLock = null;

async function createFixture() {
  fixtureLock = await lockFixture(databaseUrl);
  return withClient(async (client) => {
    await client.query(`drop schema if exists ${KV_SCHEMA} cascade`);
    await client.query(`create schema ${KV_SCHEMA}`);
    await client.query(
      `create table ${KV_SCHEMA}.bench_kv (id int primary key, val text not null)`,
    );
    await client.query(
      `insert into ${KV_SCHEMA}.bench_kv select g, 'value-' || g from generate_series(1, $1::int) g`,
      [KV_ROWS],
    );
    await client.query(`analyze ${KV_SCHEMA}.bench_kv`);
    // The `routine` variant: a STABLE annotated function pgmcp serves as the tool kv_get.
    await client.query(
      `create function ${KV_SCHEMA}.kv_get(key int) returns table (id int, val text)
       language sql stable as $$ select b.id, b.val from ${KV_SCHEMA}.bench_kv b where b.id = key $$`,
    );
    await client.query(
      `comment on function ${KV_SCHEMA}.kv_get(int) is '@mcp Point lookup in bench_kv (bench).'`,
    );
    if (variants.some((v) => v.key === 'handler')) await registerHandler(client);
    const { rows } = await client.query('show server_version');
    return rows[0].server_version;
  });
}

/**
 * The `handler` variant's registry: installed the way `pgmcp install` installs it (the same
 * scripts, in one transaction; not the event trigger, which the bench does not need) when the
 * database has none, marked as the bench's in the schema's comment and dropped at the end; a
 * registry that was there is left as found but for the bench's handler, dropped at the end too.
 * The mark lets a run that died before its cleanup be cleaned by the next one.
 */
const BENCH_REGISTRY_MARK = 'installed by the pgmcp bench (bench/run.mjs), dropped when it ends';
/** Set once the bench's handler exists: { ownSchema } says whether to drop the whole schema. */
let registry = null;

async function registerHandler(client) {
  const { applyRegistryScripts, installedVersion, pgRunner } =
    await import('../dist/tools/handlers/index.js');
  const runner = pgRunner(client);
  const found = await client.query(
    "select obj_description(to_regnamespace('mcp'), 'pg_namespace') as note, to_regnamespace('mcp') is not null as present",
  );
  const { present, note } = found.rows[0];
  let ownSchema = present && note === BENCH_REGISTRY_MARK;
  if ((await installedVersion(runner)) === null) {
    if (present) {
      throw new Error(
        'the bench database has a schema mcp that is not pgmcp registry: run without the handler variant',
      );
    }
    await applyRegistryScripts(runner);
    await client.query(`comment on schema mcp is '${BENCH_REGISTRY_MARK}'`);
    ownSchema = true;
  }
  registry = { ownSchema };
  const metadata = {
    type: 'tool',
    name: KV_HANDLER,
    description: 'Point lookup in bench_kv (bench).',
    requiresAuth: false,
    inputSchema: {
      type: 'object',
      properties: { key: { type: 'integer' } },
      required: ['key'],
    },
  };
  // Read-only (pgmcp runs it in a read-only transaction: database.allowWrites is off); answers
  // as kv_get does, {items: [{id, val}]} as structured content and as text.
  const body = `
DECLARE
  v_result jsonb;
BEGIN
  SELECT jsonb_build_object('items', coalesce(jsonb_agg(jsonb_build_object('id', b.id, 'val', b.val)), '[]'))
    INTO v_result
    FROM ${KV_SCHEMA}.bench_kv b WHERE b.id = ((request).arguments->>'key')::int;
  RETURN mcp.tool_result(jsonb_build_array(mcp.text(v_result::text)), (request).request_id, false, v_result);
END`;
  await client.query('select mcp.create_or_replace_handler($1::jsonb, $2)', [
    JSON.stringify(metadata),
    body,
  ]);
}

const dropFixture = async () => {
  // Only the run that holds the lock made the fixture, and only it may drop it.
  if (fixtureLock === null) return;
  await withClient(async (client) => {
    if (registry?.ownSchema) await client.query('drop schema if exists mcp cascade');
    else if (registry) {
      await client.query("select mcp.drop_handler('tool', $1)", [KV_HANDLER]);
    }
    await client.query(`drop schema if exists ${KV_SCHEMA} cascade`);
  }).catch((error) =>
    console.error(`could not drop schema ${KV_SCHEMA} or the bench's handler: ${error.message}`),
  );
  await fixtureLock.end().catch(() => undefined);
  fixtureLock = null;
};

// ---- MCP legacy session -------------------------------------------------------------------

// ---- statistics and formatting -------------------------------------------------------------

const median = (values) => {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
};
const fixed = (value, digits) =>
  value === null || value === undefined ? '—' : value.toFixed(digits);
const int = (value) =>
  value === null || value === undefined ? '—' : Math.round(value).toLocaleString('en-US');
const pad = (text, width, left = false) =>
  left ? String(text).padEnd(width) : String(text).padStart(width);

// ---- main ---------------------------------------------------------------------------------

async function main() {
  if (!existsSync(path.join(root, 'dist', 'bundle', 'main.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm run bench does).');
  }
  if (!existsSync(path.join(serverRoot, 'dist', 'bundle', 'main.js'))) {
    throw new Error(`PGMCP_BENCH_ROOT=${serverRoot} has no dist/bundle/main.js: build it first`);
  }
  if (variants.length === 0 || concurrencies.length === 0) {
    throw new Error('nothing to run: check BENCH_ONLY and BENCH_CONCURRENCY');
  }
  mkdirSync(resultsDir, { recursive: true });
  const profileDir = profiling ? path.join(resultsDir, 'profiles', `${Date.now()}`) : null;
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  const cpus = os.availableParallelism?.() ?? os.cpus().length;
  const postgresVersion = await createFixture();
  // Before the server starts, so the command opens the state database itself.
  const bearer = variants.some((v) => v.auth) ? createToken() : null;
  const startedAt = performance.now();
  const [echo, pgmcp] = await Promise.all([
    startEcho(profileDir && path.join(profileDir, 'echo')),
    startPgmcp(profileDir && path.join(profileDir, 'pgmcp')),
  ]);
  const loadgen = startLoadgen();
  const pgCore = String(cpus - 1);
  if (pinning) {
    if (cpus < 2) throw new Error('BENCH_PIN needs at least two cores');
    pin(
      [process.pid, echo.child.pid, loadgen.child.pid, ...withChildren(pgmcp.child.pid)],
      cpus === 2 ? '0' : `0-${cpus - 2}`,
    );
  }
  const legacyHeaders = await openLegacySession(pgmcp.url);
  const authHeaders = bearer
    ? await openLegacySession(pgmcp.url, { authorization: `Bearer ${bearer.token}` })
    : null;
  if (bearer) {
    // The server must take the token for who it names, or call-auth measures nothing.
    const info = await fetch(new URL('/api/user/info', pgmcp.url), {
      headers: { authorization: authHeaders.authorization },
      signal: AbortSignal.timeout(10_000),
    }).then((r) => r.json());
    if (info.authenticated !== true || info.kind !== 'token' || info.username !== bearer.name) {
      throw new Error(`the bench token was not accepted: ${JSON.stringify(info)}`);
    }
  }
  const modernHeaders = { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/list' };
  // The echo learns pgmcp's tools/list answer, for the same-payload baseline.
  const listed = await fetch(pgmcp.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...legacyHeaders,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'bench-list', method: 'tools/list', params: {} }),
    signal: AbortSignal.timeout(10_000),
  }).then((r) => r.json());
  echo.child.send({ type: 'tools-list', result: listed.result });
  if (variants.some((v) => v.key === 'floor')) {
    const url = withAppName(databaseUrl, APP_NAMES.floor);
    const opened = new Promise((resolve) => {
      const onMessage = (m) => {
        if (m?.type !== 'database-ready') return;
        echo.child.off('message', onMessage);
        resolve();
      };
      echo.child.on('message', onMessage);
    });
    echo.child.send({ type: 'database', url, poolSize: POOL_SIZE });
    await withTimeout(opened, START_TIMEOUT_MS, 'echo server database pool');
  }

  const warmupMs = Math.round(warmupSeconds * 1000);
  const durationMs = Math.round(measureSeconds * 1000);
  const specFor = (variant, concurrency, overrides = {}) => {
    const timing = { concurrency, warmupMs, durationMs, validateEvery, ...overrides };
    if (variant.kind === 'pg') {
      return {
        kind: 'pg',
        mode: variant.mode,
        databaseUrl: withAppName(databaseUrl, APP_NAMES.raw),
        poolSize: POOL_SIZE,
        ...timing,
      };
    }
    const headers = variant.auth
      ? authHeaders
      : variant.era === 'legacy'
        ? legacyHeaders
        : variant.era === 'modern'
          ? modernHeaders
          : {};
    const url = variant.server === 'echo' ? echo.url : pgmcp.url;
    return { kind: 'http', op: variant.op, url, headers, ...timing };
  };

  // Smoke test: a few fully checked requests per variant, so a broken path fails fast.
  for (const variant of variants) {
    const r = await loadgen.run(
      specFor(variant, 1, { warmupMs: 0, durationMs: 10_000, maxRequests: 3, validateEvery: 1 }),
    );
    if (r.errors > 0 || r.completed < 3) {
      throw new Error(
        `smoke test of ${variant.key} failed: ${r.errorSamples.join(' | ') || 'no answers'}`,
      );
    }
  }

  // Priming, unmeasured: one warm-up's length of every variant at the highest concurrency. The
  // cells' own warm-up did not warm the processes themselves (JIT, the parser's WASM tier-up,
  // lazily loaded modules, the pools): the first measured cell of the first round cost pgmcp and
  // the load generator 2.5–3× the CPU per request of the same cell in later rounds, which skewed
  // every ratio against the first variant of each server (`call` with BENCH_ONLY=call,…).
  for (const variant of variants) {
    if (warmupMs === 0) break;
    const r = await loadgen.run(
      specFor(variant, Math.max(...concurrencies), { warmupMs: 0, durationMs: warmupMs }),
    );
    if (r.errors > 0) {
      throw new Error(`priming of ${variant.key} failed: ${r.errorSamples.join(' | ')}`);
    }
  }

  // CPU accounting per cell: the server processes, this bench's PostgreSQL backends (found by
  // application_name when the measured window opens), the load generator, and whatever else
  // kept the machine busy meanwhile ("other": other users' work, shown in cores).
  const monitor = new pg.Client({
    connectionString: withAppName(databaseUrl, 'pgmcp-bench-monitor'),
    connectionTimeoutMillis: 10_000,
  });
  await monitor.connect();
  const ourBackends = async () =>
    (
      await monitor.query('select pid from pg_stat_activity where application_name = any($1)', [
        [APP_NAMES.server, APP_NAMES.raw, APP_NAMES.floor],
      ])
    ).rows.map((r) => r.pid);
  const snapshot = (pids) => ({
    at: performance.now(),
    pgmcp: treeTicks(pgmcp.child.pid),
    pgmcpMain: threadTicks(pgmcp.child.pid),
    echo: treeTicks(echo.child.pid),
    loadgen: cpuTicks(loadgen.child.pid),
    backends: new Map(pids.map((pid) => [pid, cpuTicks(pid)])),
    machine: machineBusyTicks(),
  });
  const cpuDeltas = (before, after) => {
    const delta = (key) =>
      before[key] === null || after[key] === null ? null : after[key] - before[key];
    let postgres = 0;
    for (const [pid, ticks] of before.backends) {
      // A backend that ended inside the window contributes what /proc last showed: nothing.
      postgres += (after.backends.get(pid) ?? ticks ?? 0) - (ticks ?? 0);
    }
    const pgmcpTree = treeDelta(before.pgmcp, after.pgmcp);
    const d = {
      pgmcp: pgmcpTree?.total ?? null,
      pgmcpChildren: pgmcpTree?.children ?? null,
      pgmcpMain: delta('pgmcpMain'),
      echo: treeDelta(before.echo, after.echo)?.total ?? null,
      loadgen: delta('loadgen'),
      postgres,
    };
    const machine = delta('machine');
    const seconds = (after.at - before.at) / 1000;
    const ours = (d.pgmcp ?? 0) + (d.echo ?? 0) + (d.loadgen ?? 0) + postgres;
    d.otherCores =
      machine === null ? null : Math.max(0, ((machine - ours) * TICK_US) / 1e6 / seconds);
    return d;
  };
  const perRequest = (ticks, completed) =>
    ticks === null || ticks === undefined || completed === 0 ? null : (ticks * TICK_US) / completed;

  const cellSeconds = warmupSeconds + measureSeconds;
  const totalCells = rounds * concurrencies.length * variants.length;
  console.log(
    `pgmcp bench: ${totalCells} cells × ${cellSeconds} s (${warmupSeconds} s warm-up + ${measureSeconds} s measured)${stageVariants.length ? `, then the stage table: ${stageVariants.length} profiled cell(s) × ${2 * warmupSeconds + stagesSeconds} s` : ''} ≈ ${Math.ceil((totalCells * cellSeconds + stageVariants.length * (2 * warmupSeconds + stagesSeconds)) / 60)} min`,
  );
  const cells = [];
  let failed = 0;
  // Requests each server answered in timed cells (warm-up included), and when those began:
  // the profile summary divides busy time after that point by these counts.
  const served = { echo: 0, pgmcp: 0 };
  const cellsBeganMs = performance.now() - startedAt;
  for (let round = 0; round < rounds; round++) {
    for (const concurrency of concurrencies) {
      // Interleave: every variant once per concurrency, order reversed every other round.
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const variant of order) {
        let opened = null;
        let closed = null;
        const result = await loadgen.run(specFor(variant, concurrency), async (phase) => {
          if (phase === 'start')
            opened = ourBackends().then((pids) => {
              if (pinning) pin(pids, pgCore);
              return snapshot(pids);
            });
          else if (opened) {
            const start = await opened;
            closed = { start, end: snapshot([...start.backends.keys()]) };
          }
        });
        const d = closed ? cpuDeltas(closed.start, closed.end) : {};
        const server = variant.kind === 'pg' ? null : variant.server === 'echo' ? 'echo' : 'pgmcp';
        const usesDb = variant.op?.startsWith('tools/call') || variant.kind === 'pg';
        const cell = {
          round,
          variant: variant.key,
          concurrency,
          ...result,
          // The server's whole process tree; of it, its child processes (the state database).
          serverCpuUsPerReq: server ? perRequest(d[server], result.completed) : null,
          serverChildrenCpuUsPerReq:
            server === 'pgmcp' ? perRequest(d.pgmcpChildren, result.completed) : null,
          serverMainThreadCpuUsPerReq:
            server === 'pgmcp' ? perRequest(d.pgmcpMain, result.completed) : null,
          postgresCpuUsPerReq: usesDb ? perRequest(d.postgres, result.completed) : null,
          otherCores: d.otherCores ?? null,
        };
        cells.push(cell);
        if (server) served[server] += result.sent;
        if (cell.errors > 0) failed += cell.errors;
        console.log(
          `  round ${round + 1}/${rounds} C=${pad(concurrency, 2)} ${pad(variant.key, 11, true)} ${pad(int(cell.rps), 7)} req/s  p50 ${fixed(cell.p50, 2)} ms  p99 ${fixed(cell.p99, 2)} ms${cell.errors ? `  ERRORS ${cell.errors}: ${cell.errorSamples[0]}` : ''}`,
        );
      }
    }
  }

  // A server that exited during the rounds makes the run invalid (checked before the stage
  // phase stops pgmcp on purpose).
  const exited = [
    ['pgmcp', pgmcp.child],
    ['echo server', echo.child],
  ].filter(([, child]) => child.exitCode !== null || child.signalCode !== null);

  // ---- the stage table: pgmcp again, under --cpu-prof, the same loads ----
  let stageCells = [];
  if (stageVariants.length > 0 && exited.length === 0) {
    // The embedded state database's directory is held by its server: the first one goes.
    await stopChild(pgmcp.child);
    stageCells = await profileStages({ loadgen, specFor, warmupMs, validateEvery });
    if (stageCells.some((c) => c.errors > 0))
      failed += stageCells.reduce((n, c) => n + c.errors, 0);
  }

  // ---- summary ----
  const summary = {};
  for (const variant of variants) {
    summary[variant.key] = {};
    for (const concurrency of concurrencies) {
      const mine = cells.filter((c) => c.variant === variant.key && c.concurrency === concurrency);
      summary[variant.key][concurrency] = {
        rps: median(mine.map((c) => c.rps)),
        p50: median(mine.map((c) => c.p50)),
        p99: median(mine.map((c) => c.p99)),
        serverCpuUsPerReq: median(mine.map((c) => c.serverCpuUsPerReq)),
        postgresCpuUsPerReq: median(mine.map((c) => c.postgresCpuUsPerReq)),
        loadgenCpuUsPerReq: median(mine.map((c) => c.loadgenCpuUsPerReq)),
        otherCores: median(mine.map((c) => c.otherCores)),
        errors: mine.reduce((n, c) => n + c.errors, 0),
        rounds: mine.map((c) => c.rps),
      };
    }
  }
  /** Median over rounds of the paired ratio a/b (pairs share a round, so share its noise). */
  const ratio = (a, b, concurrency, field = 'rps') => {
    const pairs = [];
    for (let round = 0; round < rounds; round++) {
      const x = cells.find(
        (c) => c.variant === a && c.concurrency === concurrency && c.round === round,
      );
      const y = cells.find(
        (c) => c.variant === b && c.concurrency === concurrency && c.round === round,
      );
      if (x?.[field] && y?.[field]) pairs.push(x[field] / y[field]);
    }
    return median(pairs);
  };
  const p50Overhead = (a, b, concurrency) => {
    const diffs = [];
    for (let round = 0; round < rounds; round++) {
      const x = cells.find(
        (c) => c.variant === a && c.concurrency === concurrency && c.round === round,
      );
      const y = cells.find(
        (c) => c.variant === b && c.concurrency === concurrency && c.round === round,
      );
      if (x?.p50 != null && y?.p50 != null) diffs.push(x.p50 - y.p50);
    }
    // Rounded to the microsecond: the measurement is far coarser than that anyway.
    const value = median(diffs);
    return value === null ? null : Math.round(value * 1000) / 1000;
  };
  const has = (key) => variants.some((v) => v.key === key);
  const maxC = Math.max(...concurrencies);
  const ratios = {
    listVsEcho: {},
    listVsEchoSameBytes: {},
    listModernVsEcho: {},
    pingVsEcho: {},
    callVsRaw: {},
    callVsRawTx: {},
    rawTxVsRaw: {},
    routineVsRaw: {},
    callAuthVsCall: {},
  };
  /** Median over rounds of the paired difference in server CPU per request, a − b (µs). */
  const serverCpuDelta = (a, b, concurrency) => {
    const diffs = [];
    for (let round = 0; round < rounds; round++) {
      const x = cells.find(
        (c) => c.variant === a && c.concurrency === concurrency && c.round === round,
      );
      const y = cells.find(
        (c) => c.variant === b && c.concurrency === concurrency && c.round === round,
      );
      if (x?.serverCpuUsPerReq != null && y?.serverCpuUsPerReq != null) {
        diffs.push(x.serverCpuUsPerReq - y.serverCpuUsPerReq);
      }
    }
    return median(diffs);
  };
  const bearerCpuUs = {};
  for (const c of concurrencies) {
    if (has('list') && has('echo')) ratios.listVsEcho[c] = ratio('list', 'echo', c);
    if (has('list') && has('echo-list')) {
      ratios.listVsEchoSameBytes[c] = ratio('list', 'echo-list', c);
    }
    if (has('list-modern') && has('echo'))
      ratios.listModernVsEcho[c] = ratio('list-modern', 'echo', c);
    if (has('ping') && has('echo')) ratios.pingVsEcho[c] = ratio('ping', 'echo', c);
    if (has('call') && has('raw')) ratios.callVsRaw[c] = ratio('call', 'raw', c);
    if (has('call') && has('raw-tx')) ratios.callVsRawTx[c] = ratio('call', 'raw-tx', c);
    if (has('raw-tx') && has('raw')) ratios.rawTxVsRaw[c] = ratio('raw-tx', 'raw', c);
    if (has('routine') && has('raw-routine'))
      ratios.routineVsRaw[c] = ratio('routine', 'raw-routine', c);
    if (has('call-auth') && has('call')) {
      ratios.callAuthVsCall[c] = ratio('call-auth', 'call', c);
      bearerCpuUs[c] = serverCpuDelta('call-auth', 'call', c);
    }
  }
  const minC = Math.min(...concurrencies);
  const callOverheadP50 = has('call') && has('raw') ? p50Overhead('call', 'raw', minC) : null;
  const callOverheadVsTxP50 =
    has('call') && has('raw-tx') ? p50Overhead('call', 'raw-tx', minC) : null;
  const targets = {
    listVsEchoAt32: { target: '>= 0.60', value: ratios.listVsEcho[32] ?? null },
    callVsRawAt32: {
      target: '>= 0.75 (issue 3, not enforced)',
      value: ratios.callVsRaw[32] ?? null,
    },
    callP50OverheadAt1Ms: {
      target: '<= 0.5 ms (issue 3, not enforced)',
      value: minC === 1 ? callOverheadP50 : null,
    },
  };
  targets.routineVsRawAt32 = {
    target: '>= 0.75 (issue 4, not enforced)',
    value: ratios.routineVsRaw[32] ?? null,
  };
  targets.routineVsRawAt32.pass =
    targets.routineVsRawAt32.value === null ? null : targets.routineVsRawAt32.value >= 0.75;
  targets.callAuthVsCallAt32 = {
    target: '>= 0.90 (issue 8, not enforced)',
    value: ratios.callAuthVsCall[32] ?? null,
  };
  targets.callAuthVsCallAt32.pass =
    targets.callAuthVsCallAt32.value === null ? null : targets.callAuthVsCallAt32.value >= 0.9;
  targets.listVsEchoAt32.pass =
    targets.listVsEchoAt32.value === null ? null : targets.listVsEchoAt32.value >= 0.6;
  targets.callVsRawAt32.pass =
    targets.callVsRawAt32.value === null ? null : targets.callVsRawAt32.value >= 0.75;
  targets.callP50OverheadAt1Ms.pass =
    targets.callP50OverheadAt1Ms.value === null ? null : targets.callP50OverheadAt1Ms.value <= 0.5;

  // ---- report ----
  const verdict = (pass) => (pass === null ? 'n/a' : pass ? 'PASS' : 'FAIL');
  const lines = [];
  lines.push('');
  lines.push(
    `pgmcp bench — node ${process.version}, PostgreSQL ${postgresVersion}, ${new Date().toISOString()}`,
  );
  if (serverRoot !== root) lines.push(`server under test: ${serverRoot} (PGMCP_BENCH_ROOT)`);
  lines.push(
    `closed loop, HTTP/1.1 keep-alive, ${warmupSeconds} s warm-up + ${measureSeconds} s measured per cell, ${rounds} round(s) interleaved (median shown)`,
  );
  if (pinning)
    lines.push(
      `BENCH_PIN: PostgreSQL's backends on core ${cpus - 1}, the servers and the load generator on the others`,
    );
  lines.push(
    `NOTE: this machine has ${cpus} CPU core(s), shared by the load generator, the server under test and PostgreSQL;`,
  );
  lines.push(
    '      absolute numbers are low and noisy — compare the ratios, which are paired per round.',
  );
  lines.push(
    `pool size ${POOL_SIZE} for pgmcp (PGMCP_POOL_SIZE) and the raw pg.Pool; every ${validateEvery}th HTTP answer parsed and checked in full, all checked for status/id/error`,
  );
  lines.push(
    "CPU per completed request in µs: srv = pgmcp or echo process, pg = this bench's PostgreSQL backends,",
  );
  lines.push(
    '  gen = load generator; other = cores busy with anything else during the cell (other users, background).',
  );
  lines.push('');
  const head = `${pad('variant', 41, true)} ${pad('C', 3)} ${pad('req/s', 8)} ${pad('p50 ms', 7)} ${pad('p99 ms', 7)} ${pad('srv µs', 7)} ${pad('pg µs', 6)} ${pad('gen µs', 6)} ${pad('other', 5)} ${pad('err', 4)}`;
  lines.push(head);
  lines.push('-'.repeat(head.length));
  for (const variant of variants) {
    for (const c of concurrencies) {
      const s = summary[variant.key][c];
      lines.push(
        `${pad(variant.label, 41, true)} ${pad(c, 3)} ${pad(int(s.rps), 8)} ${pad(fixed(s.p50, 2), 7)} ${pad(fixed(s.p99, 2), 7)} ${pad(fixed(s.serverCpuUsPerReq, 0), 7)} ${pad(fixed(s.postgresCpuUsPerReq, 0), 6)} ${pad(fixed(s.loadgenCpuUsPerReq, 0), 6)} ${pad(fixed(s.otherCores, 2), 5)} ${pad(s.errors, 4)}`,
      );
    }
  }
  lines.push('');
  lines.push('ratios (median of per-round pairs):');
  const row = (name, map) =>
    lines.push(
      `  ${pad(name, 40, true)} ${concurrencies.map((c) => `C=${c}: ${fixed(map[c], 2)}×`).join('   ')}`,
    );
  if (Object.keys(ratios.listVsEcho).length) row('tools/list (legacy) / echo', ratios.listVsEcho);
  if (Object.keys(ratios.listVsEchoSameBytes).length) {
    row('tools/list (legacy) / echo, same bytes', ratios.listVsEchoSameBytes);
  }
  if (Object.keys(ratios.listModernVsEcho).length)
    row(`tools/list (${MODERN_VERSION}) / echo`, ratios.listModernVsEcho);
  if (Object.keys(ratios.pingVsEcho).length) row('ping / echo', ratios.pingVsEcho);
  if (Object.keys(ratios.callVsRaw).length) row('tools/call / raw pg.Pool', ratios.callVsRaw);
  if (Object.keys(ratios.callVsRawTx).length)
    row('tools/call / pgmcp db layer alone', ratios.callVsRawTx);
  if (Object.keys(ratios.rawTxVsRaw).length) row('pgmcp db layer / raw pg.Pool', ratios.rawTxVsRaw);
  if (Object.keys(ratios.routineVsRaw).length)
    row('tools/call kv_get / raw select kv_get', ratios.routineVsRaw);
  if (Object.keys(ratios.callAuthVsCall).length) {
    row('tools/call with bearer / anonymous', ratios.callAuthVsCall);
    lines.push(
      `  ${pad('bearer check, server CPU per request', 40, true)} ${concurrencies.map((c) => `C=${c}: ${fixed(bearerCpuUs[c], 1)} µs`).join('   ')}`,
    );
  }
  if (callOverheadP50 !== null)
    lines.push(
      `  p50 overhead tools/call − raw pg.Pool at C=${minC}: ${fixed(callOverheadP50, 3)} ms`,
    );
  if (callOverheadVsTxP50 !== null)
    lines.push(
      `  p50 overhead tools/call − db layer alone at C=${minC}: ${fixed(callOverheadVsTxP50, 3)} ms (HTTP + MCP + tool code)`,
    );
  // Issue 16: where the CPU goes, from the CPU columns (paired per round).
  const cpuOf = (key, c, field) =>
    median(
      cells.filter((x) => x.variant === key && x.concurrency === c).map((x) => x[field] ?? null),
    );
  const totalCpu = (key, c) => {
    const parts = ['serverCpuUsPerReq', 'postgresCpuUsPerReq', 'loadgenCpuUsPerReq'].map((f) =>
      cpuOf(key, c, f),
    );
    return parts.some((v) => v === null) && parts[1] === null
      ? null
      : parts.reduce((n, v) => n + (v ?? 0), 0);
  };
  if (has('call') && has('raw')) {
    const pgRatio = {};
    for (const c of concurrencies) pgRatio[c] = ratio('call', 'raw', c, 'postgresCpuUsPerReq');
    row('pg µs tools/call / raw (≤ 1.5×)', pgRatio);
    ratios.callVsRawPostgresCpu = pgRatio;
    if (has('raw-tx')) {
      // The same statements without pgmcp's process beside them: what the SQL itself costs.
      const txRatio = {};
      for (const c of concurrencies) txRatio[c] = ratio('raw-tx', 'raw', c, 'postgresCpuUsPerReq');
      row('  pg µs db layer alone / raw', txRatio);
      ratios.rawTxVsRawPostgresCpu = txRatio;
    }
  }
  if (has('call') && has('echo')) {
    const srvRatio = {};
    for (const c of concurrencies) srvRatio[c] = ratio('call', 'echo', c, 'serverCpuUsPerReq');
    row('srv µs tools/call / echo (≤ 2.5×)', srvRatio);
    ratios.callVsEchoServerCpu = srvRatio;
    if (has('ping')) {
      // pgmcp's HTTP and MCP layers with no tool and no database: the floor under a call.
      const pingRatio = {};
      for (const c of concurrencies) pingRatio[c] = ratio('ping', 'echo', c, 'serverCpuUsPerReq');
      row('  srv µs ping / echo', pingRatio);
      ratios.pingVsEchoServerCpu = pingRatio;
    }
  }
  // The floor: a bare reference server answering the call with HTTP and pg.Pool and nothing else.
  if (has('floor') && has('echo')) {
    const floorRatio = {};
    for (const c of concurrencies) floorRatio[c] = ratio('floor', 'echo', c, 'serverCpuUsPerReq');
    row('srv µs floor (HTTP + pg.Pool) / echo', floorRatio);
    ratios.floorVsEchoServerCpu = floorRatio;
  }
  if (has('floor') && has('raw')) {
    const r = {};
    for (const c of concurrencies) r[c] = ratio('floor', 'raw', c, 'postgresCpuUsPerReq');
    row('pg µs floor / raw (the same statement)', r);
    ratios.floorVsRawPostgresCpu = r;
  }
  if (has('call') && has('floor')) {
    const srv = {};
    const pgR = {};
    for (const c of concurrencies) {
      srv[c] = ratio('call', 'floor', c, 'serverCpuUsPerReq');
      pgR[c] = ratio('call', 'floor', c, 'postgresCpuUsPerReq');
    }
    row('srv µs tools/call / floor', srv);
    row('pg µs tools/call / floor', pgR);
    ratios.callVsFloorServerCpu = srv;
    ratios.callVsFloorPostgresCpu = pgR;
  }
  if (has('routine') && has('call')) {
    const r = {};
    const pgR = {};
    for (const c of concurrencies) {
      r[c] = ratio('routine', 'call', c);
      pgR[c] = ratio('routine', 'call', c, 'postgresCpuUsPerReq');
    }
    row('tools/call kv_get / query_database (≥ 1×)', r);
    row('  pg µs kv_get / query_database', pgR);
    ratios.routineVsCall = r;
  }
  if (has('handler') && has('call')) {
    const r = {};
    const pgR = {};
    for (const c of concurrencies) {
      r[c] = ratio('handler', 'call', c);
      pgR[c] = ratio('handler', 'call', c, 'postgresCpuUsPerReq');
    }
    row(`tools/call ${KV_HANDLER} / query_database (≥ 1×)`, r);
    row(`  pg µs ${KV_HANDLER} / query_database`, pgR);
    ratios.handlerVsCall = r;
    ratios.handlerVsCallPostgresCpu = pgR;
  }
  if (has('call') && has('raw')) {
    // On a saturated machine throughput is the inverse of the CPU a request costs everywhere:
    // the ratio the CPU columns predict, next to the one measured.
    const predicted = {};
    for (const c of concurrencies) {
      const a = totalCpu('call', c);
      const b = totalCpu('raw', c);
      predicted[c] = a && b ? b / a : null;
    }
    row('tools/call / raw predicted from CPU', predicted);
    for (const c of concurrencies) {
      const part = (k, f) => fixed(cpuOf(k, c, f), 0);
      lines.push(
        `    C=${c}: raw ${part('raw', 'postgresCpuUsPerReq')} pg + ${part('raw', 'loadgenCpuUsPerReq')} gen = ${fixed(totalCpu('raw', c), 0)} µs; call ${part('call', 'serverCpuUsPerReq')} srv + ${part('call', 'postgresCpuUsPerReq')} pg + ${part('call', 'loadgenCpuUsPerReq')} gen = ${fixed(totalCpu('call', c), 0)} µs`,
      );
    }
    ratios.callVsRawPredictedFromCpu = predicted;
  }
  // Issue 31: the four measures against the floor of the same run, for each tool call path.
  const issue31 = {};
  if (has('floor')) {
    const judge = (value, target, below) =>
      value === null || value === undefined ? null : below ? value <= target : value >= target;
    const cellText = (value, pass, unit = '×', digits = 2) =>
      pad(`${fixed(value, digits)}${unit} ${verdict(pass)}`, 16, true);
    for (const [key, rawKey] of [
      ['call', 'raw'],
      ['routine', 'raw-routine'],
      ['handler', null],
    ]) {
      if (!has(key)) continue;
      const m = { serverCpu: {}, postgresCpu: {}, rpsAt32: null, p50OverheadAt1Ms: null };
      for (const c of concurrencies) {
        const srv = ratio(key, 'floor', c, 'serverCpuUsPerReq');
        const pgR = ratio(key, 'floor', c, 'postgresCpuUsPerReq');
        m.serverCpu[c] = { value: srv, target: '<= 1.5', pass: judge(srv, 1.5, true) };
        m.postgresCpu[c] = { value: pgR, target: '<= 1.15', pass: judge(pgR, 1.15, true) };
      }
      if (concurrencies.includes(32)) {
        const v = ratio(key, 'floor', 32);
        m.rpsAt32 = { value: v, target: '>= 0.65', pass: judge(v, 0.65, false) };
      }
      if (concurrencies.includes(1) && rawKey && has(rawKey)) {
        const v = p50Overhead(key, rawKey, 1);
        m.p50OverheadAt1Ms = { value: v, target: '<= 0.25 ms', pass: judge(v, 0.25, true) };
      }
      issue31[key] = m;
      lines.push('');
      lines.push(
        `issue 31: ${key} against the floor (bare node:http + pg.Pool, this run; medians of per-round pairs; reported only)`,
      );
      lines.push(
        `  ${pad('measure', 44, true)} ${concurrencies.map((c) => pad(`C=${c}`, 16, true)).join(' ')} target`,
      );
      const line = (name, map, target) =>
        lines.push(
          `  ${pad(name, 44, true)} ${concurrencies.map((c) => cellText(map[c]?.value, map[c]?.pass ?? null)).join(' ')} ${target}`,
        );
      line(`server CPU per call (process tree) / floor's`, m.serverCpu, '≤ 1.5×');
      line(`PostgreSQL CPU per call / floor's`, m.postgresCpu, '≤ 1.15×');
      if (m.rpsAt32)
        lines.push(
          `  ${pad("req/s / floor's at C=32", 44, true)} ${cellText(m.rpsAt32.value, m.rpsAt32.pass)} ≥ 0.65×`,
        );
      if (m.p50OverheadAt1Ms)
        lines.push(
          `  ${pad(`p50 overhead over ${rawKey} at C=1`, 44, true)} ${cellText(m.p50OverheadAt1Ms.value, m.p50OverheadAt1Ms.pass, ' ms', 3)} ≤ 0.25 ms`,
        );
    }
    const children = {};
    for (const c of concurrencies) children[c] = cpuOf('call', c, 'serverChildrenCpuUsPerReq');
    if (has('call'))
      lines.push(
        `  of the call's server CPU, child processes (embedded state database): ${concurrencies.map((c) => `C=${c}: ${fixed(children[c], 0)} µs`).join('   ')}`,
      );
  }

  // Where each tool call's CPU goes, by stage (the profiled pgmcp, after the rounds). The
  // profile gives the shares of the main thread's time; the CPU is the unprofiled cells' (mean
  // over rounds, so the rows add up to their total) where the variant ran at that concurrency,
  // else the profiled run's own.
  for (const cell of stageCells) {
    const mine = cells.filter((c) => c.variant === cell.key && c.concurrency === cell.concurrency);
    const mean = (field) => {
      const v = mine.map((c) => c[field]).filter((x) => typeof x === 'number');
      return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
    };
    const total = mean('serverCpuUsPerReq');
    const main = mean('serverMainThreadCpuUsPerReq');
    const kids = mean('serverChildrenCpuUsPerReq');
    const measured = total !== null && main !== null && kids !== null;
    cell.source = measured
      ? `the ${profiling ? 'cells (themselves under --cpu-prof: BENCH_PROFILE=1)' : 'unprofiled cells'} at C=${cell.concurrency} (bundle, mean of ${mine.length} round(s))`
      : 'the profiled run (no unprofiled cell at this concurrency)';
    cell.cpuPerCall = measured
      ? { mainThread: main, otherThreads: Math.max(0, total - main - kids), children: kids }
      : {
          mainThread: cell.profiled.mainThread,
          otherThreads: cell.profiled.otherThreads,
          children: cell.profiled.children,
        };
    cell.table = stageRows(cell.attributed, cell.cpuPerCall);
    cell.unknownFiles = cell.attributed.unknownFiles;
  }
  if (stageCells.length > 0) {
    lines.push('');
    lines.push(
      `CPU per call by stage (shares from pgmcp under --cpu-prof, unbundled dist/, C=${stagesConcurrency}; bench/stages.mjs maps files to stages):`,
    );
    lines.push(...formatStageTables(stageCells).map((l) => `  ${l}`));
  }

  lines.push('');
  lines.push('targets:');
  lines.push(
    `  tools/list / echo at C=32        ${fixed(targets.listVsEchoAt32.value, 2)}×  (target ≥ 0.60×)  ${verdict(targets.listVsEchoAt32.pass)}`,
  );
  lines.push(
    `  tools/call / raw at C=32         ${fixed(targets.callVsRawAt32.value, 2)}×  (issue 3: ≥ 0.75×, reported only)  ${verdict(targets.callVsRawAt32.pass)}`,
  );
  lines.push(
    `  tools/call p50 overhead at C=1   ${fixed(targets.callP50OverheadAt1Ms.value, 3)} ms (issue 3: ≤ 0.5 ms, reported only)  ${verdict(targets.callP50OverheadAt1Ms.pass)}`,
  );
  lines.push(
    `  routine tools/call / raw at C=32 ${fixed(targets.routineVsRawAt32.value, 2)}×  (issue 4: ≥ 0.75×, reported only)  ${verdict(targets.routineVsRawAt32.pass)}`,
  );
  lines.push(
    `  bearer / anonymous call at C=32  ${fixed(targets.callAuthVsCallAt32.value, 2)}×  (issue 8: ≥ 0.90×, reported only)  ${verdict(targets.callAuthVsCallAt32.pass)}`,
  );
  if (maxC !== 32)
    lines.push(`  (C=32 not measured: BENCH_CONCURRENCY=${concurrencies.join(',')})`);
  if (failed) lines.push(`\nERRORS: ${failed} request(s) failed — numbers are not valid.`);
  console.log(lines.join('\n'));

  // ---- shut down, profile, write ----
  for (const [name, child] of exited) {
    console.log(
      `\nERROR: the ${name} exited during the run (${child.exitCode ?? child.signalCode}).`,
    );
    failed++;
  }
  await monitor.end().catch(() => undefined);
  await stopChild(loadgen.child);
  await stopChild(echo.child);
  await stopChild(pgmcp.child);
  const profiles = {};
  if (profileDir) {
    for (const name of ['pgmcp', 'echo']) {
      const dir = path.join(profileDir, name);
      const files = existsSync(dir)
        ? readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))
        : [];
      if (files.length === 0) console.log(`\nno CPU profile from ${name} (did it exit cleanly?)`);
      for (const file of files) {
        const full = path.join(dir, file);
        const summary = summarizeProfile(full, { skipMs: cellsBeganMs, requests: served[name] });
        profiles[name] = { file: path.relative(root, full), ...summary };
        console.log(`\nCPU profile of ${name}: ${profiles[name].file}`);
        console.log(summary.text);
      }
    }
  }

  let commit = null;
  let dirty = null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    dirty =
      execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).trim() !== '';
  } catch {
    // not a git checkout
  }
  let serverCommit = commit;
  if (serverRoot !== root) {
    try {
      serverCommit = execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: serverRoot,
        encoding: 'utf8',
      }).trim();
    } catch {
      serverCommit = null;
    }
  }
  const output = {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      postgres: postgresVersion,
      cpus,
      cpuModel: os.cpus()[0]?.model ?? null,
      loadAverage: os.loadavg(),
      commit,
      workingTreeDirty: dirty,
      serverRoot,
      serverCommit,
      warmupSeconds,
      measureSeconds,
      rounds,
      concurrencies,
      poolSize: POOL_SIZE,
      validateEvery,
      profiling,
      pinned: pinning,
      variants: variants.map(({ key, label }) => ({ key, label })),
    },
    summary,
    ratios,
    bearerServerCpuUsPerReq: bearerCpuUs,
    callP50OverheadMs: { vsRaw: callOverheadP50, vsRawTx: callOverheadVsTxP50, concurrency: minC },
    targets,
    issue31,
    stages: stageCells,
    failedRequests: failed,
    cells,
    profiles: Object.fromEntries(
      Object.entries(profiles).map(([name, p]) => [
        name,
        {
          file: p.file,
          requests: p.requests,
          busyUsPerRequest: p.busyUsPerRequest,
          byCategory: p.byCategory,
          bySelf: p.bySelf,
          byInclusive: p.byInclusive,
        },
      ]),
    ),
  };
  writeFileSync(path.join(resultsDir, 'latest.json'), `${JSON.stringify(output, null, 2)}\n`);
  console.log(`\nresults written to ${path.relative(root, path.join(resultsDir, 'latest.json'))}`);
  return failed === 0 ? 0 : 1;
}

async function shutdown() {
  await Promise.all([...children].map((child) => stopChild(child, 5_000)));
  await dropFixture();
}

let interrupted = false;
process.on('SIGINT', () => {
  if (interrupted) return;
  interrupted = true;
  console.error('\ninterrupted: stopping children and dropping the fixture');
  void shutdown().finally(() => process.exit(130));
});

main().then(
  async (code) => {
    await shutdown();
    process.exit(code);
  },
  async (error) => {
    console.error(`bench failed: ${error?.stack ?? error}`);
    await shutdown();
    process.exit(1);
  },
);
