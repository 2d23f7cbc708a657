// The load generator, in its own process so it shares no event loop with the servers.
// run.mjs forks it once and sends one "cell" at a time over IPC; a cell is a closed loop:
// N workers, each sending its next request as soon as the previous answer arrived.
// Every response is checked cheaply (status, content type, id, no error markers) and every
// BENCH_VALIDATE_EVERY-th one is parsed and checked in full, so a fast error path cannot
// pass for throughput. Failed requests are never counted as completed.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { KV_HANDLER, KV_ROUTINE, KV_ROUTINE_SQL, KV_ROWS, KV_SQL, MODERN_META } from './shared.mjs';

const REQUEST_TIMEOUT_MS = 10_000;
const MAX_ERRORS = 50;
const MAX_SAMPLES = 5_000_000;
const META_JSON = JSON.stringify(MODERN_META);

/** Spreads lookups over the table without a shared random state. */
const keyFor = (worker, seq) => 1 + ((seq * 7919 + worker * 104_729) % KV_ROWS);

const fail = (message) => {
  throw new Error(message);
};

const resultOf = (text, id) => {
  const message = JSON.parse(text);
  if (message.jsonrpc !== '2.0') fail('not a JSON-RPC 2.0 message');
  if (message.id !== id) fail(`id ${JSON.stringify(message.id)} != ${id}`);
  if ('error' in message) fail(`JSON-RPC error ${JSON.stringify(message.error)}`);
  const result = message.result;
  if (typeof result !== 'object' || result === null) fail('no result object');
  return result;
};

const checkTools = (result) => {
  if (!Array.isArray(result.tools) || !result.tools.some((t) => t.name === 'query_database')) {
    fail('tools/list without query_database');
  }
};

/** A tool result whose structuredContent is {items: [{id: key, val: 'value-<key>'}]}. */
const checkItems = (result, key) => {
  if (result.isError === true) fail(`tool error: ${JSON.stringify(result.content)}`);
  const items = result.structuredContent?.items;
  if (!Array.isArray(items) || items.length !== 1) fail(`items: ${JSON.stringify(items)}`);
  if (items[0].id !== key || items[0].val !== `value-${key}`) {
    fail(`wrong row for key ${key}: ${JSON.stringify(items[0])}`);
  }
};

/** What each operation sends and how its answer is checked in full. */
const OPS = {
  echo: {
    body: (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`,
    check: (text, id) => resultOf(text, id),
  },
  ping: {
    body: (id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`,
    check: (text, id) => resultOf(text, id),
  },
  'tools/list': {
    body: (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{}}`,
    check: (text, id) => checkTools(resultOf(text, id)),
  },
  'tools/list-modern': {
    body: (id) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{"_meta":${META_JSON}}}`,
    check: (text, id) => {
      const result = resultOf(text, id);
      checkTools(result);
      if (result.resultType !== 'complete') fail(`resultType ${result.resultType}`);
    },
  },
  'tools/call': {
    body: (id, key) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'query_database', arguments: { query: KV_SQL, params: [key] } },
      }),
    check: (text, id, key) => {
      const result = resultOf(text, id);
      if (result.isError === true) fail(`tool error: ${JSON.stringify(result.content)}`);
      const row = result.structuredContent?.rows?.[0];
      if (!Array.isArray(row) || row[0] !== key || row[1] !== `value-${key}`) {
        fail(`wrong row for key ${key}: ${JSON.stringify(row)}`);
      }
    },
  },
  'tools/call-routine': {
    body: (id, key) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: KV_ROUTINE, arguments: { key } },
      }),
    check: (text, id, key) => checkItems(resultOf(text, id), key),
  },
  // The registry handler answers as kv_get does: {items: [{id, val}]}, and the same as text.
  'tools/call-handler': {
    body: (id, key) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: KV_HANDLER, arguments: { key } },
      }),
    check: (text, id, key) => {
      const result = resultOf(text, id);
      checkItems(result, key);
      const block = result.content?.[0];
      if (block?.type !== 'text' || JSON.parse(block.text)?.items?.[0]?.id !== key) {
        fail(`text content does not carry the row: ${JSON.stringify(result.content)}`);
      }
    },
  },
};

function post(agent, target, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode, type: res.headers['content-type'] ?? '', text }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** One HTTP request of an op; throws on anything but a good answer. */
function httpStep(spec) {
  const op = OPS[spec.op] ?? fail(`unknown op ${spec.op}`);
  const target = new URL(spec.url);
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...spec.headers,
  };
  const agent = new http.Agent({
    keepAlive: true,
    maxSockets: spec.concurrency,
    maxFreeSockets: spec.concurrency,
  });
  let nextId = 1;
  return {
    async once(worker, seq) {
      const id = nextId++;
      const key = keyFor(worker, seq);
      const res = await post(agent, target, headers, op.body(id, key));
      if (res.status !== 200) fail(`HTTP ${res.status}: ${res.text.slice(0, 300)}`);
      if (!res.type.startsWith('application/json')) fail(`content-type ${res.type}`);
      // Cheap checks on every answer; the full parse on a sample.
      if (!res.text.includes(`"id":${id},`)) fail(`answer without id ${id}`);
      if (res.text.includes('"error":{') || res.text.includes('"isError":true')) {
        fail(`error answer: ${res.text.slice(0, 300)}`);
      }
      if (seq % spec.validateEvery === 0) {
        try {
          op.check(res.text, id, key);
        } catch (error) {
          fail(`${error.message} (answer: ${res.text.slice(0, 300)})`);
        }
        return true;
      }
      return false;
    },
    async close() {
      agent.destroy();
    },
  };
}

/** One point lookup straight through a pg.Pool: plain, or in pgmcp's transaction shape. */
async function pgStep(spec) {
  const pool = new pg.Pool({
    connectionString: spec.databaseUrl,
    max: spec.poolSize,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    query_timeout: REQUEST_TIMEOUT_MS,
  });
  pool.on('error', () => undefined);
  // Open the pool's connections before the clock starts, as pgmcp's are by the warm-up.
  const clients = await Promise.all(Array.from({ length: spec.poolSize }, () => pool.connect()));
  for (const client of clients) client.release();

  const checkRow = (row, key) => {
    if (!Array.isArray(row) || row[0] !== key || row[1] !== `value-${key}`) {
      fail(`wrong row for key ${key}: ${JSON.stringify(row)}`);
    }
  };

  const plain = async (key) => {
    const result = await pool.query({ text: KV_SQL, values: [key], rowMode: 'array' });
    checkRow(result.rows[0], key);
  };

  // The annotated function, called the way an application would call it directly.
  const routine = async (key) => {
    const result = await pool.query({ text: KV_ROUTINE_SQL, values: [key], rowMode: 'array' });
    checkRow(result.rows[0], key);
  };

  // pgmcp's own statement path (src/db/database.ts runStatement: the transaction-local
  // settings and the statement pipelined before one Sync) without HTTP, MCP or the parser.
  const db =
    spec.mode === 'tx'
      ? await (async () => {
          const { createDatabase } = await import('../dist/db/database.js');
          const { pino } = await import('pino');
          const url = spec.databaseUrl;
          return createDatabase(
            {
              url,
              poolSize: spec.poolSize,
              embedded: { dataDir: '', demo: false },
            },
            pino({ level: 'silent' }),
          );
        })()
      : null;
  const transaction = async (key) => {
    const result = await db.runStatement({
      sql: KV_SQL,
      params: [key],
      offset: 0,
      limit: 100,
      maxBytes: 1_048_576,
      readOnly: true,
      timeoutMs: 30_000,
      principal: {
        kind: 'anonymous',
        userId: null,
        tenantId: null,
        roles: [],
        scopes: [],
        claims: {},
      },
    });
    checkRow(result.rows[0], key);
  };

  const run = spec.mode === 'tx' ? transaction : spec.mode === 'routine' ? routine : plain;
  return {
    async once(worker, seq) {
      await run(keyFor(worker, seq));
      return true;
    },
    async close() {
      await db?.close();
      await pool.end();
    },
  };
}

/**
 * onWindow('start' | 'end') tells the orchestrator when the measured window opens and closes;
 * the promise it returns for 'end' settles once the orchestrator has sampled CPU time, so
 * the pool's backends are still alive when it reads them.
 */
async function closedLoop(spec, step, onWindow) {
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const stopAt = measureFrom + spec.durationMs;
  const latencies = [];
  const errors = [];
  let errorCount = 0;
  let validated = 0;
  let sent = 0;
  let stopped = false;
  let cpuAtMeasure = null;
  let cpu = null;
  let windowClosed = Promise.resolve();

  const measureTimer = setTimeout(() => {
    cpuAtMeasure = process.cpuUsage();
    void onWindow('start');
  }, spec.warmupMs);
  let ended = false;
  const closeWindow = () => {
    if (ended) return;
    ended = true;
    if (cpuAtMeasure) cpu = process.cpuUsage(cpuAtMeasure);
    windowClosed = onWindow('end');
  };
  const endTimer = setTimeout(closeWindow, spec.warmupMs + spec.durationMs);

  const worker = async (w) => {
    for (let seq = 0; !stopped; seq++) {
      const t0 = performance.now();
      if (t0 >= stopAt || (spec.maxRequests !== undefined && sent >= spec.maxRequests)) break;
      sent++;
      try {
        if (await step.once(w, seq)) validated++;
      } catch (error) {
        errorCount++;
        if (errors.length < 5) errors.push(String(error?.message ?? error));
        if (errorCount >= MAX_ERRORS) stopped = true;
        continue;
      }
      const t1 = performance.now();
      if (t1 >= measureFrom && t1 <= stopAt && latencies.length < MAX_SAMPLES) {
        latencies.push(t1 - t0);
      }
    }
  };

  await Promise.all(Array.from({ length: spec.concurrency }, (_, w) => worker(w)));
  clearTimeout(measureTimer);
  clearTimeout(endTimer);
  // The workers can see the deadline pass before the timer's callback runs (its clock started a
  // moment after `start`): the window that opened is closed here then, or the cell would have
  // no CPU figures (it showed — at C=1 in some cells).
  if (cpuAtMeasure) closeWindow();
  await windowClosed;
  await step.close();

  const sorted = Float64Array.from(latencies).sort();
  const pct = (p) =>
    sorted.length === 0
      ? null
      : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
  const completed = latencies.length;
  return {
    completed,
    sent,
    validated,
    errors: errorCount,
    errorSamples: errors,
    rps: completed / (spec.durationMs / 1000),
    p50: pct(0.5),
    p90: pct(0.9),
    p99: pct(0.99),
    max: sorted.length ? sorted[sorted.length - 1] : null,
    mean: completed ? latencies.reduce((a, b) => a + b, 0) / completed : null,
    loadgenCpuUsPerReq: cpu && completed ? (cpu.user + cpu.system) / completed : null,
  };
}

const acks = new Map();

/** Tells the orchestrator about the window; resolves on its ack (or after 5 s regardless). */
function signal(id, phase) {
  process.send?.({ type: 'window', id, phase });
  if (phase !== 'end') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 5_000);
    acks.set(id, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function runCell(id, spec) {
  const step = spec.kind === 'pg' ? await pgStep(spec) : httpStep(spec);
  return closedLoop(spec, step, (phase) => signal(id, phase));
}

process.on('message', (message) => {
  if (message?.type === 'ack') {
    acks.get(message.id)?.();
    acks.delete(message.id);
    return;
  }
  if (message?.type !== 'cell') return;
  runCell(message.id, message.spec).then(
    (result) => process.send?.({ type: 'result', id: message.id, result }),
    (error) =>
      process.send?.({ type: 'result', id: message.id, error: String(error?.stack ?? error) }),
  );
});
process.on('disconnect', () => process.exit(0));
