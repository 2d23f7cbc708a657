// `npm run soak -- [duration] [--concurrency N]`: mixed traffic against the built server for a
// while (default 10 minutes, C=64), reported per interval (a minute; a sixth of the run when it
// is shorter than six minutes): requests, errors, p50/p99 latency, the server's RSS, heap
// (after a collection) and external memory (buffers, WASM), its open file descriptors and its
// PostgreSQL connections; then the slope of RSS and heap, and the verdict. Exit status 1 when anything grew past its threshold
// (docs/robustness.md) or a request failed.
//
// The traffic: tools/list, query_database and an @mcp routine on PostgreSQL, similarity_search on
// the embedded database (PGlite ships pgvector), /api/chat with a local fake model that calls
// query_database once and then answers; half the workers in legacy sessions, half stateless
// 2026-07-28 requests. PostgreSQL: the server PGMCP_TEST_DATABASE_URL names (else
// postgres://postgres@127.0.0.1:5432/test); the soak makes a database of its own there and
// drops it at the end.
import { spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import ts from 'typescript';
import { MODERN_META, MODERN_VERSION, openLegacySession } from './shared.mjs';

/** similarity_search calls in flight at most (they run on the embedded database). */
const SEARCHES_IN_FLIGHT = 2;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MiB = 1024 * 1024;

/** What counts as growth, between the end of the warm-up (two intervals) and the end of the run. */
export const THRESHOLDS = {
  /** Heap after a collection: at most this much more, or this share of where it started. */
  heapBytes: 16 * MiB,
  heapShare: 0.25,
  /**
   * RSS moves by ±100 MiB with the allocator's high-water mark under a changing load (the heap
   * is the leak measure): this is a backstop for memory outside the heap running away.
   */
  rssBytes: 256 * MiB,
  /** The server's own descriptors: files, pipes and sockets other than the connections below. */
  fds: 16,
  pgConnections: 4,
  /** Connections of clients and to the model: bounded by the concurrency, plus this slack. */
  connectionSlack: 16,
};

function parseArgs(argv) {
  const options = { durationMs: 600_000, concurrency: 64 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--concurrency') options.concurrency = Number(argv[++i]);
    else if (/^\d+(ms|s|m|h)?$/.test(arg)) {
      const [, n, unit = 's'] = /^(\d+)(ms|s|m|h)?$/.exec(arg);
      options.durationMs = Number(n) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit];
    } else {
      console.error('usage: npm run soak -- [duration: 600, 90s, 10m, 1h] [--concurrency N]');
      process.exit(2);
    }
  }
  if (!(options.concurrency >= 1) || !(options.durationMs >= 6_000)) {
    console.error('soak: the concurrency must be at least 1 and the duration at least 6 s');
    process.exit(2);
  }
  return options;
}

/** The fake model of the tests (test/helpers/fake-llm.ts), compiled for this script. */
async function loadFakeLlm(dir) {
  const source = readFileSync(join(ROOT, 'test/helpers/fake-llm.ts'), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const file = join(dir, 'fake-llm.mjs');
  writeFileSync(file, outputText);
  return import(file);
}

async function prepareDatabase(adminUrl, name) {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  await client.query(`
    CREATE SCHEMA soak;
    CREATE TABLE soak.items (id int PRIMARY KEY, name text NOT NULL, qty int NOT NULL);
    INSERT INTO soak.items SELECT g, 'item-' || g, g % 97 FROM generate_series(1, 10000) g;
    CREATE FUNCTION soak.item_get(item_id int) RETURNS TABLE (id int, name text, qty int)
      LANGUAGE sql STABLE AS $$ SELECT id, name, qty FROM soak.items WHERE id = item_id $$;
    COMMENT ON FUNCTION soak.item_get(int) IS '@mcp Look up one item by id (the soak''s routine).';
    ANALYZE soak.items;`);
  await client.end();
  return url.toString();
}

function startServer(args, env) {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      join(ROOT, 'bench/soak-probe.mjs'),
      join(ROOT, 'bin/pgmcp'),
      ...args,
    ],
    { cwd: ROOT, env: { ...env, PGMCP_SOAK_PROBE: '1' }, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] },
  );
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c) => (err = (err + c).slice(-20_000)));
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start:\n${err}`)), 180_000);
    child.stdout.on('data', () => {
      const match = /serving MCP at (\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}):\n${err}`)));
  });
  return { child, url, stderr: () => err };
}

function sampleMemory(child) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), 10_000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve(m.memory);
    });
    child.send('sample');
  });
}

function rssOf(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match[1]) * 1024;
}

const fdsOf = (pid) => readdirSync(`/proc/${pid}/fd`).length;

/**
 * The server's open descriptors by what they are: TCP connections by the port at the other end
 * (its own port: clients; PostgreSQL's; the fake model's), other sockets, everything else.
 */
function fdKinds(pid, ports) {
  const peerByInode = new Map();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const local = parseInt(cols[1].split(':')[1], 16);
      const remote = parseInt(cols[2].split(':')[1], 16);
      peerByInode.set(cols[9], { local, remote });
    }
  }
  const kinds = { clients: 0, postgres: 0, model: 0, sockets: 0, other: 0 };
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const peer = inode ? peerByInode.get(inode) : undefined;
    if (peer?.local === ports.server && peer.remote !== 0) kinds.clients++;
    else if (peer?.remote === ports.postgres) kinds.postgres++;
    else if (peer?.remote === ports.model) kinds.model++;
    else if (inode) kinds.sockets++;
    else kinds.other++;
  }
  return kinds;
}

/**
 * The soak's connections: at most one per worker, kept alive, so the server's descriptors
 * measure the server and not a client that opens more connections as it pleases.
 */
let agent = null;

function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: 60_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode, type: res.headers['content-type'] ?? '', text }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer in 60 s')));
    req.on('error', reject);
    req.end(body);
  });
}

async function withRetries(action, tries = 3) {
  for (let i = 1; ; i++) {
    try {
      return await action();
    } catch (error) {
      if (i >= tries) throw error;
    }
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Least-squares slope of ys over xs. */
function slope(xs, ys) {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** The last JSON-RPC message of a JSON or SSE body. */
function lastMessage(type, text) {
  if (!type.startsWith('text/event-stream')) return JSON.parse(text);
  const data = text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n'),
    )
    .filter((d) => d !== '');
  return JSON.parse(data.at(-1));
}

async function main() {
  const { durationMs, concurrency } = parseArgs(process.argv.slice(2));
  const intervalMs = Math.min(60_000, Math.floor(durationMs / 6));
  const adminUrl = process.env.PGMCP_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dbName = `pgmcp_soak_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-soak-'));
  mkdirSync(join(dir, 'embedded'));
  const { startFakeLlm } = await loadFakeLlm(dir);
  const fake = await startFakeLlm({
    flavor: 'openai',
    script: (request) =>
      request.toolResults.length === 0
        ? {
            toolCalls: [
              {
                name: 'query_database',
                args: { query: 'SELECT count(*) FROM soak.items', database: 'main' },
              },
            ],
          }
        : { text: 'done' },
  });
  const dbUrl = await prepareDatabase(adminUrl, dbName);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  writeFileSync(
    join(dir, 'pgmcp.yaml'),
    [
      `state:\n  url: ${dbUrl}`,
      `embedded:\n  dataDir: ${join(dir, 'embedded')}`,
      'databases:',
      `  - name: main\n    url: ${dbUrl}`,
      '  - name: demo\n    embedded: true',
      '',
    ].join('\n'),
  );
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    PGMCP_LOG_LEVEL: 'warn',
    OPENAI_API_KEY: 'sk-soak-000000',
    OPENAI_BASE_URL: fake.baseUrl,
  };
  const server = startServer(
    ['serve', '--http', '127.0.0.1:0', '--config', join(dir, 'pgmcp.yaml')],
    env,
  );
  let exitCode = 1;
  // Interrupted: the server and the database go too.
  const interrupted = new Promise((resolve) => process.once('SIGINT', resolve));
  try {
    const url = await server.url;
    const origin = new URL(url).origin;
    exitCode = await Promise.race([
      soak({
        url,
        origin,
        server,
        admin,
        dbName,
        durationMs,
        intervalMs,
        concurrency,
        ports: {
          server: Number(new URL(url).port),
          postgres: Number(new URL(adminUrl).port || 5432),
          model: Number(new URL(fake.baseUrl).port),
        },
      }),
      interrupted.then(() => 130),
    ]);
  } catch (error) {
    console.error(`soak: ${error.stack ?? error}`);
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => {
      const timer = setTimeout(() => {
        server.child.kill('SIGKILL');
        resolve();
      }, 15_000);
      server.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    await fake.close();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(exitCode);
}

async function soak({
  url,
  origin,
  server,
  admin,
  dbName,
  durationMs,
  intervalMs,
  concurrency,
  ports,
}) {
  const pid = server.child.pid;
  agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  let n = 0;
  const call = (name, args) => ({ name, arguments: args });
  const KINDS = {
    list: () => ({ method: 'tools/list', params: {} }),
    query: () => ({
      method: 'tools/call',
      params: call('query_database', {
        query: `SELECT id, name, qty FROM soak.items WHERE id = ${1 + (n++ % 10_000)}`,
        database: 'main',
      }),
    }),
    routine: () => ({
      method: 'tools/call',
      params: call('item_get', { item_id: 1 + (n++ % 10_000), database: 'main' }),
    }),
    search: () => ({
      method: 'tools/call',
      params: call('similarity_search', {
        table_name: 'demo.logbook_entries',
        query_text: ['dew heater', 'focuser slipped', 'clouds rolled in', 'spiral galaxy'][n++ % 4],
        top_n: 5,
        database: 'demo',
      }),
    }),
  };
  // Ten requests a round: what a client of an MCP server mostly does, plus a chat.
  const ROUND = [
    'query',
    'list',
    'routine',
    'query',
    'search',
    'routine',
    'query',
    'list',
    'chat',
    'query',
  ];

  async function mcp(kind, session) {
    const { method, params } = KINDS[kind]();
    const modern = session === null;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(modern
        ? {
            'mcp-protocol-version': MODERN_VERSION,
            'mcp-method': method,
            ...(params.name ? { 'mcp-name': params.name } : {}),
          }
        : session),
    };
    const body = {
      jsonrpc: '2.0',
      id: ++n,
      method,
      params: modern ? { ...params, _meta: MODERN_META } : params,
    };
    const res = await post(url, headers, JSON.stringify(body));
    const text = res.text;
    if (res.status !== 200) return `${kind}: HTTP ${res.status} ${text.slice(0, 200)}`;
    const message = lastMessage(res.type, text);
    if (message.error) return `${kind}: ${JSON.stringify(message.error).slice(0, 200)}`;
    if (message.result?.isError)
      return `${kind}: ${JSON.stringify(message.result.content).slice(0, 300)}`;
    return null;
  }

  async function chat() {
    const res = await post(
      `${origin}/api/chat`,
      { 'content-type': 'application/json' },
      JSON.stringify({
        id: `soak-${++n}`,
        trigger: 'submit-message',
        database: 'main',
        messages: [
          { id: `m${n}`, role: 'user', parts: [{ type: 'text', text: 'How many items?' }] },
        ],
      }),
    );
    const text = res.text;
    if (res.status !== 200) return `chat: HTTP ${res.status} ${text.slice(0, 200)}`;
    if (/"type":"error"/.test(text) || !/"type":"finish"/.test(text))
      return `chat: ${text.slice(-300)}`;
    return null;
  }

  const once = (kind, session) => (kind === 'chat' ? chat() : mcp(kind, session));
  // The embedded database has one session: more searches in flight than it serves would only
  // queue up there until they time out. A worker whose turn it is queries PostgreSQL instead.
  let searching = 0;
  const pick = (kind) => {
    if (kind !== 'search') return kind;
    if (searching >= SEARCHES_IN_FLIGHT) return 'query';
    searching++;
    return kind;
  };
  // Each kind once before the clock starts: a set-up mistake is one clear line, not a run of errors.
  for (const kind of ['list', 'query', 'routine', 'search', 'chat']) {
    const problem = await once(kind, null);
    if (problem) throw new Error(`the soak's ${problem}`);
  }

  // Half the workers in legacy sessions, opened before the clock starts.
  const sessions = [];
  for (let i = 0; i < concurrency; i++)
    sessions.push(i % 2 === 1 ? await withRetries(() => openLegacySession(url)) : null);

  const intervals = [];
  let current = { latencies: {}, requests: 0, errors: 0 };
  const errorsSeen = new Map();
  const started = Date.now();
  const endAt = started + durationMs;
  let stop = false;

  async function worker(index, session) {
    for (let i = index; !stop; i++) {
      const kind = pick(ROUND[i % ROUND.length]);
      const t0 = performance.now();
      let problem;
      try {
        problem = await once(kind, session);
      } catch (error) {
        problem = `${kind}: ${error.message}`;
      } finally {
        if (kind === 'search') searching--;
      }
      const ms = performance.now() - t0;
      (current.latencies[kind] ??= []).push(ms);
      current.requests++;
      if (problem) {
        current.errors++;
        errorsSeen.set(problem, (errorsSeen.get(problem) ?? 0) + 1);
      }
    }
  }

  const pgConnections = async () =>
    Number(
      (await admin.query('SELECT count(*) FROM pg_stat_activity WHERE datname = $1', [dbName]))
        .rows[0].count,
    );

  console.log(
    `soak: ${durationMs / 1000} s at C=${concurrency}, reported every ${intervalMs / 1000} s; server pid ${pid}`,
  );
  console.log(
    '   t(s)  requests  errors  p50 ms  p99 ms   rss MiB  heap MiB  ext MiB   fds  pg conns  (p50/p99 ms by kind)',
  );
  const workers = sessions.map((session, i) => worker(i, session));
  while (Date.now() < endAt) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, endAt - Date.now())));
    const done = current;
    current = { latencies: {}, requests: 0, errors: 0 };
    const memory = await sampleMemory(server.child);
    const sample = {
      t: (Date.now() - started) / 1000,
      requests: done.requests,
      errors: done.errors,
      all: Object.values(done.latencies)
        .flat()
        .sort((a, b) => a - b),
      byKind: Object.fromEntries(
        Object.entries(done.latencies).map(([k, v]) => [k, v.sort((a, b) => a - b)]),
      ),
      rss: rssOf(pid),
      heap: memory?.heapUsed ?? NaN,
      external: memory?.external ?? NaN,
      fds: fdsOf(pid),
      fdKinds: fdKinds(pid, ports),
      pg: await pgConnections(),
    };
    intervals.push(sample);
    const kinds = Object.entries(sample.byKind)
      .map(([k, v]) => `${k} ${percentile(v, 50).toFixed(0)}/${percentile(v, 99).toFixed(0)}`)
      .join(', ');
    console.log(
      [
        sample.t.toFixed(0).padStart(7),
        String(sample.requests).padStart(9),
        String(sample.errors).padStart(7),
        percentile(sample.all, 50).toFixed(1).padStart(7),
        percentile(sample.all, 99).toFixed(1).padStart(7),
        (sample.rss / MiB).toFixed(1).padStart(9),
        (sample.heap / MiB).toFixed(1).padStart(9),
        (sample.external / MiB).toFixed(1).padStart(8),
        String(sample.fds).padStart(5),
        String(sample.pg).padStart(9),
        ` (${kinds}; fds ${Object.entries(sample.fdKinds)
          .map(([k, v]) => `${k} ${v}`)
          .join(' ')})`,
      ].join(' '),
    );
  }
  stop = true;
  await Promise.all(workers);
  return verdict(intervals, errorsSeen, concurrency);
}

function verdict(intervals, errorsSeen, concurrency) {
  // The first two intervals are the warm-up (connections opened, caches filled, code compiled):
  // growth is measured from the end of the second.
  const after = intervals.slice(1);
  const base = intervals[1];
  const last = intervals.at(-1);
  const minutes = after.map((s) => s.t / 60);
  const rssSlope = slope(
    minutes,
    after.map((s) => s.rss / MiB),
  );
  const heapSlope = slope(
    minutes,
    after.map((s) => s.heap / MiB),
  );
  const total = intervals.reduce((a, s) => a + s.requests, 0);
  const errors = intervals.reduce((a, s) => a + s.errors, 0);
  console.log(
    `\n${total} requests, ${errors} errors; after the warm-up: RSS ${rssSlope.toFixed(2)} MiB/min, heap ${heapSlope.toFixed(2)} MiB/min`,
  );
  const flags = [];
  const heapAllowed = Math.max(THRESHOLDS.heapBytes, base.heap * THRESHOLDS.heapShare);
  if (last.heap - base.heap > heapAllowed) {
    flags.push(
      `heap grew ${((last.heap - base.heap) / MiB).toFixed(1)} MiB (allowed ${(heapAllowed / MiB).toFixed(1)})`,
    );
  }
  if (last.rss - base.rss > THRESHOLDS.rssBytes) {
    flags.push(
      `RSS grew ${((last.rss - base.rss) / MiB).toFixed(1)} MiB (allowed ${THRESHOLDS.rssBytes / MiB})`,
    );
  }
  const own = (s) => s.fdKinds.sockets + s.fdKinds.other;
  if (own(last) - own(base) > THRESHOLDS.fds) {
    flags.push(
      `the server's own descriptors grew from ${own(base)} to ${own(last)} (allowed +${THRESHOLDS.fds}): ` +
        `${JSON.stringify(base.fdKinds)} → ${JSON.stringify(last.fdKinds)}`,
    );
  }
  for (const kind of ['clients', 'model']) {
    const most = Math.max(...intervals.map((s) => s.fdKinds[kind]));
    if (most > concurrency + THRESHOLDS.connectionSlack) {
      flags.push(
        `${most} ${kind} connections at once, more than the concurrency ${concurrency} allows`,
      );
    }
  }
  const pgBase = Math.max(...intervals.slice(0, 2).map((s) => s.pg));
  if (last.pg - pgBase > THRESHOLDS.pgConnections) {
    flags.push(
      `PostgreSQL connections grew from ${pgBase} to ${last.pg} (allowed +${THRESHOLDS.pgConnections})`,
    );
  }
  if (Number.isNaN(last.heap)) flags.push('the server did not report its heap');
  if (errors > 0) {
    flags.push(`${errors} requests failed:`);
    for (const [problem, count] of [...errorsSeen].slice(0, 10))
      flags.push(`  ${count}× ${problem}`);
  }
  if (flags.length === 0) {
    console.log('soak: flat (no growth past the thresholds, no failed request)');
    return 0;
  }
  console.log(`soak: FAILED\n${flags.map((f) => `  ${f}`).join('\n')}`);
  return 1;
}

await main();
