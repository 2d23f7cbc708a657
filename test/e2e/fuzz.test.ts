// A hostile client, property-based (fast-check): random and mutated JSON-RPC messages, batches,
// wrong and missing headers, bodies up to and past the size limit, over HTTP in both eras and
// over stdio, and the REST routes the OpenAPI document lists (the chat with a fake model).
// Every answer must be a documented status with a well-formed JSON-RPC answer (or `{error}`
// under /api); no 5xx, no bug answered by reference, no crash, nothing the server logs as an
// error or an unhandled rejection. Time-bounded: PGMCP_FUZZ_SECONDS (default 24) is shared
// between the properties; `npm run fuzz -- <seconds>` runs it longer. A failure prints the
// counterexample and the seed to replay it (PGMCP_FUZZ_SEED).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import {
  fuzzSettings,
  loggedErrors,
  chatBody,
  HTTP_METHODS,
  LEGACY,
  mcpAnswerProblems,
  mcpHeaders,
  message,
  MODERN,
  body as mcpBody,
  restAnswerProblems,
  restCall,
  restOperations,
  rpcProblems,
  send,
  sessionSlot,
  type RestOperation,
  type Surface,
} from '../helpers/fuzz.js';
import { realPostgres, throwawayDatabase } from '../helpers/postgres.js';
import {
  postRpc,
  rawInitialize,
  serverEnv,
  spawnStdio,
  startHttpServer,
  type HttpServer,
  type StdioPeer,
} from '../helpers/server.js';

const pg = await realPostgres('test/e2e/fuzz.test.ts (a hostile client)');
const LIMIT = 65_536;
const DEFAULT_SECONDS = 24;

const settings = (share: number) => fuzzSettings(share, DEFAULT_SECONDS);

/** What node:http will send as a header value (a client cannot send anything else). */
function headerSafe(value: unknown): value is string {
  return typeof value === 'string' && /^[\x20-\x7e]*$/.test(value);
}

describe.skipIf(!pg)('a hostile client gets documented answers and never breaks the server', () => {
  let fake: FakeLlm;
  let server: HttpServer;
  let peer: StdioPeer;
  let surface: Surface;
  const sessions: string[] = [];
  let operations: RestOperation[] = [];
  const counts: Record<string, number> = {};
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-fuzz-'));
  const state = pg ? throwawayDatabase(pg, 'pgmcp_fuzz_state') : null;

  const args = (): string[] => ['--database', pg!.url, '--config', join(dir, 'pgmcp.yaml')];
  const env = (): Record<string, string> =>
    serverEnv({
      PGMCP_LOG_LEVEL: 'warn',
      PGMCP_HTTP_BODY_LIMIT_BYTES: String(LIMIT),
      PGMCP_STATEMENT_TIMEOUT_MS: '2000',
      OPENAI_API_KEY: 'sk-fuzz-123456',
      OPENAI_BASE_URL: fake.baseUrl,
    });

  beforeAll(async () => {
    writeFileSync(join(dir, 'pgmcp.yaml'), `state:\n  url: ${state!.url}\n`);
    fake = await startFakeLlm({
      flavor: 'openai',
      script: (r, i) =>
        i % 3 === 0 && r.toolResults.length === 0
          ? {
              toolCalls: [
                { name: 'query_database', args: { query: r.lastUserText ?? 'select 1' } },
              ],
            }
          : { text: 'fuzzed' },
    });
    server = await startHttpServer(args(), { env: env(), fixtures: true });
    peer = spawnStdio(args(), { env: env(), fixtures: true });
    const listed = async (method: string, key: string, field: string): Promise<string[]> => {
      const res = await postRpc(server.url, { jsonrpc: '2.0', id: 1, method });
      return (res.json.result[key] as Record<string, string>[]).map((x) => x[field]!);
    };
    surface = {
      tools: await listed('tools/list', 'tools', 'name'),
      prompts: await listed('prompts/list', 'prompts', 'name'),
      resources: await listed('resources/list', 'resources', 'uri'),
    };
    for (let i = 0; i < 3; i++) sessions.push((await rawInitialize(server.url)).sessionId);
    const openapi = await send(`${server.origin}/api/openapi.json`, 'GET', {}, undefined);
    operations = restOperations(JSON.parse(openapi.text)).filter((op) => op.path !== '/api/chat');
    const init = await peer.request('init', 'initialize', {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: 'fuzz', version: '1' },
    });
    expect(init.result.protocolVersion).toBe(LEGACY);
  });

  afterAll(async () => {
    console.log(`fuzz cases per property: ${JSON.stringify(counts)}`);
    await peer?.stop('SIGTERM');
    await server?.stop();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const count = (name: string): void => void (counts[name] = (counts[name] ?? 0) + 1);

  it('legacy era over HTTP: sessions, headers, batches, bodies past the limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...HTTP_METHODS),
        fc.constantFrom('', '/v1'),
        mcpHeaders(),
        mcpBody(surface, 'legacy', LIMIT),
        async (method, suffix, headers, text) => {
          count('legacy');
          const hasBody = method !== 'GET' && method !== 'HEAD';
          const slot = sessionSlot(headers['mcp-session-id']);
          const sent = slot === -1 ? headers : { ...headers, 'mcp-session-id': sessions[slot] };
          const res = await send(
            server.url + suffix,
            method,
            sent,
            hasBody ? text : undefined,
            300,
          );
          expect(mcpAnswerProblems(res, method)).toEqual([]);
          // A DELETE that ended one of the sessions: the next cases get a new one in its place.
          if (slot !== -1 && method === 'DELETE' && res.status === 200) {
            sessions[slot] = (await rawInitialize(server.url)).sessionId;
          }
        },
      ),
      settings(0.3),
    );
    expect(counts['legacy']).toBeGreaterThan(20);
  });

  it('2026-07-28 era over HTTP: headers that mirror the body, or do not', async () => {
    const overrides = mcpHeaders().chain((h) =>
      fc.subarray(Object.keys(h)).map((keys) => Object.fromEntries(keys.map((k) => [k, h[k]]))),
    );
    await fc.assert(
      fc.asyncProperty(message(surface, 'modern'), overrides, async (m, override) => {
        count('modern');
        const record = (m ?? {}) as Record<string, unknown>;
        const params = (record['params'] ?? {}) as Record<string, unknown>;
        const headers: Record<string, string | undefined> = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          ...(headerSafe(record['method']) ? { 'mcp-method': record['method'] } : {}),
          ...(headerSafe(params['name']) ? { 'mcp-name': params['name'] } : {}),
          ...(headerSafe(params['uri']) ? { 'mcp-name': params['uri'] } : {}),
          ...override,
        };
        const slot = sessionSlot(headers['mcp-session-id']);
        if (slot !== -1) headers['mcp-session-id'] = sessions[slot];
        const res = await send(server.url, 'POST', headers, JSON.stringify(m) ?? 'null', 300);
        expect(mcpAnswerProblems(res, 'POST')).toEqual([]);
      }),
      settings(0.25),
    );
    expect(counts['modern']).toBeGreaterThan(20);
  });

  it('stdio: every line gets a well-formed answer or none, and the next ping is answered', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(mcpBody(surface, 'legacy', LIMIT), mcpBody(surface, 'modern', LIMIT)),
        async (line) => {
          count('stdio');
          peer.send(line);
          const id = `alive-${++n}`;
          peer.send({ jsonrpc: '2.0', id, method: 'ping' });
          expect(await peer.next((m) => m?.id === id, 15_000)).toEqual({
            jsonrpc: '2.0',
            id,
            result: {},
          });
        },
      ),
      settings(0.2),
    );
    const problems = peer.lines.flatMap((line) => {
      try {
        return rpcProblems(JSON.parse(line), 'stdout');
      } catch {
        return [`stdout line is not JSON: ${line.slice(0, 200)}`];
      }
    });
    expect(loggedErrors(peer.stderr())).toEqual([]);
    expect(problems).toEqual([]);
    expect(peer.process.exitCode).toBeNull();
  });

  it('REST routes of /api/openapi.json, and /api/chat with a fake model', async () => {
    await fc.assert(
      fc.asyncProperty(restCall(operations), async (call) => {
        count('rest');
        const headers = { 'content-type': call.contentType, accept: 'application/json' };
        const hasBody = call.body !== undefined && call.method !== 'GET' && call.method !== 'HEAD';
        const res = await send(
          `${server.origin}${call.path}${call.query}`,
          call.method,
          headers,
          hasBody ? call.body : undefined,
        );
        expect(restAnswerProblems(res, `${call.method} ${call.path}`)).toEqual([]);
      }),
      settings(0.15),
    );
    await fc.assert(
      fc.asyncProperty(chatBody(), async (text) => {
        count('chat');
        const res = await send(
          `${server.origin}/api/chat`,
          'POST',
          { 'content-type': 'application/json' },
          text,
          5_000,
        );
        expect(restAnswerProblems(res, 'POST /api/chat')).toEqual([]);
      }),
      settings(0.1),
    );
    expect(counts['rest']).toBeGreaterThan(10);
  });

  it('the server is still serving and logged no error or unhandled rejection', async () => {
    const res = await postRpc(server.url, { jsonrpc: '2.0', id: 'end', method: 'ping' });
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 'end', result: {} });
    expect(server.process.exitCode).toBeNull();
    expect(loggedErrors(server.stderr())).toEqual([]);
  });
});
