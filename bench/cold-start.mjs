// `node bench/cold-start.mjs` (run by `npm run bench` after the table): how long a freshly
// spawned stdio server takes to answer its first request, the way an MCP client that spawns a
// server per session sees it: spawn → the answer to `server/discover` on stdout, against
// PostgreSQL; and `pgmcp --version`, spawn → exit. Median of COLD_START_RUNS (default 10)
// each, with the CPU time the process used (less sensitive to a busy machine than the wall
// clock). Targets are reported, never enforced (issue 16: first answer ≤ 300 ms).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { MODERN_VERSION } from './shared.mjs';

// COLD_START_ROOT: another checkout's build to compare with (its bin/pgmcp and dist/).
const root =
  process.env.COLD_START_ROOT ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runs = Math.max(1, Number(process.env.COLD_START_RUNS ?? 10));
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const bin = path.join(root, 'bin', 'pgmcp');
const TICK_MS = 10; // CLK_TCK 100 on Linux

const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('PGMCP_') && k !== 'DATABASE_URL'),
);

/** utime + stime of a live process, in ms (null once it is gone or off Linux). */
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return null;
  }
}

const DISCOVER = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
})}\n`;

function firstAnswer() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'serve', '--stdio', '--database', databaseUrl], {
      cwd: root,
      env: { ...env, PGMCP_LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no answer within 30 s: ${err.slice(-500)}`));
    }, 30_000);
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"id":1'));
      if (!line) return;
      const ms = performance.now() - started;
      const cpu = cpuMs(child.pid);
      clearTimeout(timer);
      const answer = JSON.parse(line);
      if (!answer.result?.supportedVersions) {
        reject(new Error(`server/discover failed: ${line.slice(0, 300)}`));
      }
      answered = { ms, cpu };
      child.stdin.end();
      child.kill('SIGTERM');
    });
    let answered = null;
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (answered) resolve(answered);
      else reject(new Error(`exited (${code}) before answering: ${err.slice(-500)}`));
    });
    // Sent at once, as a client does: the server reads it when it is ready.
    child.stdin.write(DISCOVER);
  });
}

function version() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, '--version'], { cwd: root, env, stdio: 'pipe' });
    let cpu = null;
    const sample = setInterval(() => (cpu = cpuMs(child.pid) ?? cpu), 5);
    child.once('exit', (code) => {
      clearInterval(sample);
      if (code === 0) resolve({ ms: performance.now() - started, cpu });
      else reject(new Error(`pgmcp --version exited ${code}`));
    });
  });
}

const median = (v) => {
  const s = v.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (s.length === 0) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const answers = [];
const versions = [];
for (let i = 0; i < runs; i++) {
  answers.push(await firstAnswer());
  versions.push(await version());
}
const first = median(answers.map((a) => a.ms));
const firstCpu = median(answers.map((a) => a.cpu));
const ver = median(versions.map((a) => a.ms));
const verCpu = median(versions.map((a) => a.cpu));
const fmt = (x) => (x === null ? '—' : `${Math.round(x)} ms`);
console.log(`\ncold start (median of ${runs}; CPU is the process's utime+stime, 10 ms ticks):`);
console.log(
  `  stdio spawn → first server/discover answer (PostgreSQL)  ${fmt(first)}  (CPU ${fmt(firstCpu)})  target ≤ 300 ms  ${first <= 300 ? 'PASS' : 'FAIL'}`,
);
console.log(
  `  pgmcp --version                                        ${fmt(ver)}  (CPU ${fmt(verCpu)})`,
);
console.log(
  `  (all runs, ms: first answer ${answers.map((a) => Math.round(a.ms)).join(', ')}; --version ${versions.map((a) => Math.round(a.ms)).join(', ')})`,
);
