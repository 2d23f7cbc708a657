// `node bench/wire-options.mjs`: what each form of a call's transaction wrapper costs
// PostgreSQL, in CPU nanoseconds of the backend per call, read from /proc/<pid>/schedstat
// (nanosecond resolution, unlike the 10 ms ticks of /proc/<pid>/stat). One connection per
// option over a raw socket (no driver: the bytes sent are exactly the option's), calls one
// after the other, options interleaved and their order reversed every other round; medians.
// The connection carries the session settings a direct pgmcp connection carries (its base).
//
//   BENCH_CALLS (default 3000 per option and round), BENCH_ROUNDS (5), OPTIONS (comma list),
//   BENCH_DATABASE_URL (postgres://postgres@127.0.0.1:5432/test; trust authentication).
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pg from 'pg';
import { KV_ROWS, KV_SCHEMA, KV_SQL, lockFixture, ensureKvTable } from './shared.mjs';

const require = createRequire(import.meta.url);
const { serialize } = createRequire(require.resolve('pg'))('pg-protocol');

const url = new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
const calls = Number(process.env.BENCH_CALLS ?? 3000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);

const BASE =
  "SELECT set_config('statement_timeout', '30000ms', false), set_config('idle_in_transaction_session_timeout', '35000ms', false), set_config('auth.user_id', '', false), set_config('auth.tenant_id', '', false), set_config('auth.claims', '{}', false), set_config('standard_conforming_strings', 'on', false), set_config('role', 'none', false)";

const parse = (text, name = '') => serialize.parse({ text, name });
const bind = (statement = '', values = []) => serialize.bind({ statement, values });
const execute = () => serialize.execute({ rows: 0 });
const describe = () => serialize.describe({ type: 'P', name: '' });
const query = (text) => serialize.query(text);
const SYNC = serialize.sync();
const lookup = (key) => [parse(KV_SQL), bind('', [String(key)]), describe(), execute()];

/** Each option: `once` (sent at connect, names parsed once), `call(key)`, ReadyForQuery count. */
const OPTIONS = {
  raw: { call: (k) => [...lookup(k), SYNC], ready: 1 },
  // What pgmcp sent until issue 31 (on a connection with its base).
  unnamed: {
    call: (k) => [
      parse('BEGIN READ ONLY'),
      bind(),
      execute(),
      ...lookup(k),
      parse('ROLLBACK'),
      bind(),
      execute(),
      SYNC,
    ],
    ready: 1,
  },
  named: {
    once: [parse('BEGIN READ ONLY', 'b'), parse('ROLLBACK', 'r'), SYNC],
    call: (k) => [bind('b'), execute(), ...lookup(k), bind('r'), execute(), SYNC],
    ready: 1,
  },
  'named-rollback': {
    once: [parse('ROLLBACK', 'r'), SYNC],
    call: (k) => [
      parse('BEGIN READ ONLY'),
      bind(),
      execute(),
      ...lookup(k),
      bind('r'),
      execute(),
      SYNC,
    ],
    ready: 1,
  },
  'simple-begin': {
    call: (k) => [
      query('BEGIN READ ONLY'),
      ...lookup(k),
      parse('ROLLBACK'),
      bind(),
      execute(),
      SYNC,
    ],
    ready: 2,
  },
  'simple-both': {
    call: (k) => [query('BEGIN READ ONLY'), ...lookup(k), SYNC, query('ROLLBACK')],
    ready: 3,
  },
};
const chosen = (process.env.OPTIONS?.split(',') ?? Object.keys(OPTIONS)).filter((o) => OPTIONS[o]);

/** A raw protocol connection: send bytes, wait for n ReadyForQuery, count errors. */
async function open() {
  const socket = net.connect(Number(url.port || 5432), url.hostname);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.setNoDelay(true);
  let buffered = Buffer.alloc(0);
  let waiting = null;
  let pid = 0;
  let errors = 0;
  let lastError = '';
  socket.on('data', (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    let at = 0;
    while (buffered.length - at >= 5) {
      const length = buffered.readUInt32BE(at + 1);
      if (buffered.length - at < length + 1) break;
      const type = String.fromCharCode(buffered[at]);
      if (type === 'K') pid = buffered.readUInt32BE(at + 5);
      if (type === 'E') {
        errors++;
        lastError = buffered.subarray(at + 5, at + 1 + length).toString('utf8');
      }
      if (type === 'Z' && waiting && --waiting.n === 0) {
        const w = waiting;
        waiting = null;
        w.resolve(String.fromCharCode(buffered[at + 5]));
      }
      at += length + 1;
    }
    buffered = buffered.subarray(at);
  });
  const send = (chunks, n) =>
    new Promise((resolve) => {
      waiting = { n, resolve };
      socket.write(Buffer.concat(chunks));
    });
  const params = Buffer.from(
    `user\0${decodeURIComponent(url.username || 'postgres')}\0database\0${url.pathname.slice(1)}\0application_name\0pgmcp-wire\0\0`,
  );
  const startup = Buffer.alloc(8);
  startup.writeUInt32BE(8 + params.length, 0);
  startup.writeUInt32BE(196608, 4);
  await send([startup, params], 1);
  return {
    send,
    get pid() {
      return pid;
    },
    get errors() {
      return errors ? `${errors} errors, last: ${lastError}` : null;
    },
    end: () => socket.end(serialize.end()),
  };
}

const cpuNs = (pid) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);

async function runOption(name) {
  const option = OPTIONS[name];
  const c = await open();
  await c.send([query(BASE)], 1);
  if (option.once) await c.send(option.once, 1);
  // Warm-up: the plan cache, the catalog caches.
  for (let i = 0; i < 200; i++) await c.send(option.call(1 + i), option.ready);
  const before = cpuNs(c.pid);
  for (let i = 0; i < calls; i++) {
    const status = await c.send(option.call(1 + ((i * 7919) % KV_ROWS)), option.ready);
    if (status !== 'I') throw new Error(`${name}: ended in status ${status}`);
  }
  const used = cpuNs(c.pid) - before;
  if (c.errors) throw new Error(`${name}: ${c.errors}`);
  c.end();
  return used / calls / 1000;
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const fixtureLock = await lockFixture(url.href);
const monitor = new pg.Client({ connectionString: url.href });
await monitor.connect();
const created = await ensureKvTable(monitor);
try {
  const results = Object.fromEntries(chosen.map((o) => [o, []]));
  for (let round = 0; round < rounds; round++) {
    for (const o of round % 2 ? [...chosen].reverse() : chosen) {
      const us = await runOption(o);
      results[o].push(us);
      console.error(`round ${round + 1} ${o.padEnd(16)} ${us.toFixed(1)} µs`);
    }
  }
  const rawUs = median(results.raw ?? [NaN]);
  console.log(`\nPostgreSQL backend CPU per call, ${rounds} rounds × ${calls} calls (median)`);
  console.log(`${'option'.padEnd(16)} ${'pg µs'.padStart(7)} ${'× raw'.padStart(6)}`);
  for (const o of chosen) {
    const us = median(results[o]);
    console.log(
      `${o.padEnd(16)} ${us.toFixed(1).padStart(7)} ${(us / rawUs).toFixed(2).padStart(6)}`,
    );
  }
} finally {
  if (created) await monitor.query(`drop schema ${KV_SCHEMA} cascade`);
  await monitor.end();
  await fixtureLock.end();
}
