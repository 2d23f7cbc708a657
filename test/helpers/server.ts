// Spawning the BUILT server (bin/pgmcp → dist/bundle/) the way users run it, or the conformance
// fixture server (`pgmcp serve` plus the fixtures, compiled by `npm run conformance:build`), and
// talking to it over raw HTTP or raw stdio when a test needs to see the wire itself.
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from './postgres.js';

export const PGMCP_BIN = join(REPO_ROOT, 'bin', 'pgmcp');
/** test/conformance/serve.ts as `npm run conformance:build` compiles it. */
export const FIXTURE_SERVER = join(
  REPO_ROOT,
  '.tmp',
  'conformance-server',
  'test',
  'conformance',
  'serve.js',
);

if (!existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.js'))) {
  throw new Error('dist/bundle/ is missing: run `npm run build` before the e2e suites.');
}

/**
 * The environment of a spawned server: only what Node needs plus the given PGMCP_* values, so
 * nothing from the developer's shell (DATABASE_URL, PGHOST, PGMCP_CONFIG…) changes the outcome.
 */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { PGMCP_LOG_LEVEL: 'info' };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'LC_ALL', 'SystemRoot']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

/**
 * What Node runs for `pgmcp serve <args>`, or with `fixtures` for the conformance fixture server,
 * which takes the same options.
 */
export function serveScript(args: string[], fixtures = false): string[] {
  if (!fixtures) return [PGMCP_BIN, 'serve', ...args];
  if (!existsSync(FIXTURE_SERVER)) {
    throw new Error(
      'the conformance fixture server is missing: run `npm run conformance:build` (npm test does).',
    );
  }
  return [FIXTURE_SERVER, ...args];
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Spawned {
  readonly process: ChildProcess;
  readonly pid: number;
  /** Everything written to stdout / stderr so far. */
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<Exit>;
  /** Send a signal and wait (at most `timeoutMs`) for the exit; SIGKILL after that. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

/** Run `pgmcp <args>` with piped stdio. */
export function spawnPgmcp(
  args: string[],
  options: { env?: Record<string, string>; stdin?: 'pipe' | 'ignore' } = {},
): Spawned {
  return spawnNode([PGMCP_BIN, ...args], options);
}

function spawnNode(
  args: string[],
  options: { env?: Record<string, string>; stdin?: 'pipe' | 'ignore'; node?: string },
): Spawned {
  const child = spawn(options.node ?? process.execPath, args, {
    cwd: REPO_ROOT,
    env: options.env ?? serverEnv(),
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  return {
    process: child,
    pid: child.pid!,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
}

/**
 * `stderr` without pgmcp's Node 20 start-up warning (src/cli/runtime.ts) and the hint Node
 * prints after a first warning: on Node 20 every command starts with them, and the tests that
 * read a command's stderr whole look at what comes after. test/e2e/runtime.test.ts checks the
 * warning itself.
 */
export function withoutNode20Warning(stderr: string): string {
  return stderr.replace(
    /^\(node:\d+\) \[PGMCP_NODE20\] [^\n]*\n(\(Use `node --trace-warnings[^\n]*\n)?/m,
    '',
  );
}

/** Run `pgmcp <args>` to completion (stderr without the Node 20 warning). */
export async function runPgmcp(
  args: string[],
  options: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Exit & { stdout: string; stderr: string }> {
  const run = spawnPgmcp(args, { env: options.env });
  const timer = setTimeout(() => run.process.kill('SIGKILL'), options.timeoutMs ?? 30_000);
  const exit = await run.exited;
  clearTimeout(timer);
  return { ...exit, stdout: run.stdout(), stderr: withoutNode20Warning(run.stderr()) };
}

export interface HttpServer extends Spawned {
  /** The MCP endpoint, e.g. http://127.0.0.1:41234/mcp */
  readonly url: string;
  /** http://127.0.0.1:41234 */
  readonly origin: string;
}

/**
 * `pgmcp serve --http 127.0.0.1:0 <args>` (with `fixtures`: the conformance fixture server);
 * resolves with the URL it printed on stdout.
 */
export async function startHttpServer(
  args: string[],
  options: {
    env?: Record<string, string>;
    startTimeoutMs?: number;
    fixtures?: boolean;
    /** Another Node binary (one of scripts/node-install.sh's in .tmp/); default: this one. */
    node?: string;
  } = {},
): Promise<HttpServer> {
  const spawned = spawnNode(serveScript(['--http', '127.0.0.1:0', ...args], options.fixtures), {
    env: options.env,
    ...(options.node ? { node: options.node } : {}),
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      spawned.process.kill('SIGKILL');
      reject(new Error(`the server did not start in time.\nstderr:\n${tail(spawned.stderr())}`));
    }, options.startTimeoutMs ?? 90_000);
    const check = (): void => {
      const match = /serving MCP at (\S+)/.exec(spawned.stdout());
      if (match) {
        clearTimeout(timer);
        spawned.process.stdout!.off('data', check);
        resolve(match[1]!);
      }
    };
    spawned.process.stdout!.on('data', check);
    void spawned.exited.then((exit) => {
      clearTimeout(timer);
      reject(
        new Error(
          `the server exited (${JSON.stringify(exit)}) before serving.\nstderr:\n${tail(spawned.stderr())}`,
        ),
      );
    });
  });
  return { ...spawned, url, origin: new URL(url).origin };
}

export function tail(text: string, lines = 30): string {
  return text.split('\n').slice(-lines).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP. node:http rather than fetch: fetch will not send a foreign Host header, and some
// tests read or drop an SSE stream part-way.

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
  /** JSON-RPC messages of an SSE body (event: message / data: …). */
  events: any[];
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string | undefined>;
  body?: string | object;
  timeoutMs?: number;
}

/** The headers a well-behaved Streamable HTTP client sends on POST. */
export const POST_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
} as const;

export function rawHttp(url: string, request: RawRequest = {}): Promise<RawResponse> {
  const body =
    request.body === undefined
      ? undefined
      : typeof request.body === 'string'
        ? request.body
        : JSON.stringify(request.body);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.headers ?? {})) if (v !== undefined) headers[k] = v;
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: request.method ?? (body === undefined ? 'GET' : 'POST'), headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json,
            events: parseSse(text),
          });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(request.timeoutMs ?? 20_000, () =>
      req.destroy(new Error('raw HTTP request timed out')),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** POST a JSON-RPC message with the usual headers (override or drop any with `headers`). */
export function postRpc(
  url: string,
  message: unknown,
  headers: Record<string, string | undefined> = {},
): Promise<RawResponse> {
  return rawHttp(url, {
    method: 'POST',
    headers: { ...POST_HEADERS, ...headers },
    body: typeof message === 'string' ? message : JSON.stringify(message),
  });
}

export function parseSse(text: string): any[] {
  const messages: unknown[] = [];
  for (const block of text.split(/\n\n/)) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trimStart())
      .join('\n');
    if (data === '') continue;
    try {
      messages.push(JSON.parse(data));
    } catch {
      // not JSON: ignore (keep-alive comments never reach here)
    }
  }
  return messages;
}

/** Start a legacy session with a raw initialize; returns its id and the headers later requests need. */
export async function rawInitialize(
  url: string,
  protocolVersion = '2025-11-25',
  capabilities: Record<string, unknown> = {},
  /** Sent with every request of the session (e.g. Authorization). */
  extraHeaders: Record<string, string> = {},
): Promise<{ sessionId: string; headers: Record<string, string> }> {
  const res = await postRpc(
    url,
    {
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: {
        protocolVersion,
        capabilities,
        clientInfo: { name: 'pgmcp-e2e-raw', version: '1.0.0' },
      },
    },
    extraHeaders,
  );
  const sessionId = res.headers['mcp-session-id'];
  if (res.status !== 200 || typeof sessionId !== 'string') {
    throw new Error(`initialize failed: ${res.status} ${res.text}`);
  }
  const headers = {
    ...extraHeaders,
    'mcp-session-id': sessionId,
    'mcp-protocol-version': protocolVersion,
  };
  const ack = await postRpc(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (ack.status !== 202) throw new Error(`notifications/initialized: ${ack.status} ${ack.text}`);
  return { sessionId, headers };
}

export const MODERN_VERSION = '2026-07-28';

/** _meta of a modern-era request. */
export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'pgmcp-e2e-raw', version: '1.0.0' },
    ...extra,
  };
}

/** A modern-era request and the headers that must mirror it. */
export function modernRequest(
  id: string | number,
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): { message: object; headers: Record<string, string> } {
  const headers: Record<string, string> = {
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': method,
  };
  const name =
    method === 'resources/read'
      ? params['uri']
      : method === 'tools/call' || method === 'prompts/get'
        ? params['name']
        : undefined;
  if (typeof name === 'string') headers['mcp-name'] = name;
  return {
    message: { jsonrpc: '2.0', id, method, params: { ...params, _meta: modernMeta(meta) } },
    headers,
  };
}

// ---------------------------------------------------------------------------------------------
// Raw stdio.

export interface StdioPeer extends Spawned {
  /** Write one line (a string is sent as is; anything else as JSON). */
  send(message: unknown): void;
  /** Every stdout line so far, raw. */
  readonly lines: string[];
  /** The next stdout line matching `predicate`, parsed as JSON. */
  next(predicate: (message: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Send a request and wait for the response with its id. */
  request(id: string | number, method: string, params?: Record<string, unknown>): Promise<any>;
}

/** `pgmcp serve --stdio <args>` (with `fixtures`: the conformance fixture server). */
export function spawnStdio(
  args: string[],
  options: { env?: Record<string, string>; fixtures?: boolean } = {},
): StdioPeer {
  const spawned = spawnNode(serveScript(['--stdio', ...args], options.fixtures), {
    env: options.env,
    stdin: 'pipe',
  });
  const lines: string[] = [];
  const messages: unknown[] = [];
  const consumed = new Set<number>();
  const waiters: Array<{ predicate: (m: any) => boolean; resolve: (m: any) => void }> = [];
  createInterface({ input: spawned.process.stdout! }).on('line', (line) => {
    lines.push(line);
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    const index = messages.push(parsed) - 1;
    const at = waiters.findIndex((w) => w.predicate(parsed));
    if (at !== -1) {
      consumed.add(index);
      waiters.splice(at, 1)[0]!.resolve(parsed);
    }
  });
  const peer: StdioPeer = {
    ...spawned,
    lines,
    send(message) {
      spawned.process.stdin!.write(
        `${typeof message === 'string' ? message : JSON.stringify(message)}\n`,
      );
    },
    next(predicate, timeoutMs = 20_000) {
      const index = messages.findIndex((m, i) => !consumed.has(i) && predicate(m));
      if (index !== -1) {
        consumed.add(index);
        return Promise.resolve(messages[index]);
      }
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (m: unknown) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(
            new Error(
              `no matching stdout line in ${timeoutMs} ms; stderr:\n${tail(spawned.stderr())}`,
            ),
          );
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    request(id, method, params) {
      peer.send({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) });
      return peer.next((m) => m.id === id && ('result' in m || 'error' in m));
    },
  };
  return peer;
}
