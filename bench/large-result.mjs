// A 1,000,000-row query through query_database with a large limit: pgmcp's memory must stay
// bounded (target: peak RSS under 200 MB), because rows past the byte cap are read off the
// wire and dropped, never held. Samples the server process's RSS while the call runs.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const TARGET_MB = 200;
const ROWS = 1_000_000;

function rssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

const env = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('PGMCP_')),
);
env.PGMCP_MAX_ROWS = String(ROWS);
env.PGMCP_STATEMENT_TIMEOUT_MS = '120000';
const child = spawn(
  process.execPath,
  [
    path.join(root, 'bin', 'pgmcp'),
    'serve',
    '--http',
    '127.0.0.1:0',
    '--database',
    databaseUrl,
    '--log-level',
    'warn',
  ],
  { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] },
);
const timer = setTimeout(() => {
  console.error('large-result bench: timed out');
  child.kill('SIGKILL');
  process.exit(1);
}, 180_000);

try {
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /serving MCP at (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`pgmcp exited with ${code}`)));
  });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'query_database',
  };
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const idle = rssMb(child.pid);
  let peak = idle ?? 0;
  const sampler = setInterval(() => {
    const now = rssMb(child.pid);
    if (now !== null && now > peak) peak = now;
  }, 20);
  const started = Date.now();
  const response = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'query_database',
        arguments: {
          query: `select g, md5(g::text), now() from generate_series(1, ${ROWS}) g`,
          limit: ROWS,
        },
        _meta: meta,
      },
    }),
  });
  const body = await response.json();
  const seconds = (Date.now() - started) / 1000;
  clearInterval(sampler);
  const result = body.result;
  if (!result || result.isError)
    throw new Error(`the call failed: ${JSON.stringify(body).slice(0, 500)}`);
  const structured = result.structuredContent;
  console.log('\nlarge result: 1,000,000-row query with limit 1,000,000 through query_database');
  console.log(
    `  rows returned ${structured.rowCount} (truncated: ${structured.truncated}, next offset ${structured.nextOffset})`,
  );
  console.log(
    `  time ${seconds.toFixed(2)} s, pgmcp RSS idle ${idle?.toFixed(0)} MB, peak ${peak.toFixed(0)} MB`,
  );
  console.log(`  target peak RSS < ${TARGET_MB} MB: ${peak < TARGET_MB ? 'PASS' : 'FAIL'}`);
} catch (error) {
  console.error(`large-result bench failed: ${error?.stack ?? error}`);
  process.exitCode = 1;
} finally {
  clearTimeout(timer);
  child.kill('SIGTERM');
}
