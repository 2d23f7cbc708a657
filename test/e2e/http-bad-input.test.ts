// Bad input over Streamable HTTP, sent raw: each gets its proper status and JSON-RPC error, and
// the server keeps serving (every test ends with a request that must still work). Also
// /health, with the database up and with it unreachable.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realPostgres } from '../helpers/postgres.js';
import {
  MODERN_VERSION,
  modernMeta,
  modernRequest,
  POST_HEADERS,
  postRpc,
  rawHttp,
  rawInitialize,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const pg = await realPostgres('test/e2e/http-bad-input.test.ts (bad input over HTTP, /health)');

const BODY_LIMIT = 100_000;
/** A port nothing listens on: connections are refused at once. */
const CLOSED_PORT_URL = 'postgres://pgmcp_test@127.0.0.1:1/test';

describe.skipIf(!pg)('HTTP: bad input gets its proper error, and the server keeps serving', () => {
  let server: HttpServer;
  let url: string;
  let session: Record<string, string>;

  /** A request that must keep working after each bad one. */
  async function stillServing(): Promise<void> {
    const res = await postRpc(url, { jsonrpc: '2.0', id: 'alive', method: 'ping' }, session);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 'alive', result: {} });
    const modern = modernRequest('alive-m', 'tools/list');
    const listed = await postRpc(url, modern.message, modern.headers);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.result.tools.map((t: { name: string }) => t.name)).toContain(
      'query_database',
    );
  }

  beforeAll(async () => {
    server = await startHttpServer(['--database', pg!.url], {
      env: serverEnv({ PGMCP_HTTP_BODY_LIMIT_BYTES: String(BODY_LIMIT) }),
      fixtures: true,
    });
    url = server.url;
    session = (await rawInitialize(url)).headers;
  });

  afterAll(async () => {
    const exit = await server?.stop();
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('serves a well-formed session (the baseline the other tests compare with)', async () => {
    await stillServing();
    const v1 = await postRpc(`${url}/v1`, { jsonrpc: '2.0', id: 1, method: 'ping' }, session);
    expect(v1.json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('malformed JSON → 400 with -32700', async () => {
    const res = await postRpc(url, '{"jsonrpc": "2.0", "id": 1, "method": ', session);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    await stillServing();
  });

  it('valid JSON that is not JSON-RPC → 400 with -32600', async () => {
    for (const body of [
      { hello: 'world' },
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: null, method: 'ping' },
      { jsonrpc: '2.0', id: 7, method: 'tools/list', params: 'not an object' },
      42,
    ]) {
      const res = await postRpc(url, JSON.stringify(body), session);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code, JSON.stringify(body)).toBe(-32600);
    }
    await stillServing();
  });

  it('wrong types in params → -32602, in both eras', async () => {
    const legacy = await postRpc(
      url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 42 } },
      session,
    );
    expect(legacy.json).toMatchObject({ id: 2, error: { code: -32602 } });
    const level = await postRpc(
      url,
      { jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 7 } },
      session,
    );
    expect(level.json).toMatchObject({ id: 3, error: { code: -32602 } });
    const cursor = await postRpc(
      url,
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 12 } },
      session,
    );
    expect(cursor.json).toMatchObject({ id: 4, error: { code: -32602 } });
    const modern = modernRequest(5, 'prompts/get', {
      name: 'test_prompt_with_arguments',
      arguments: { arg1: 1, arg2: 'x' },
    });
    const res = await postRpc(url, modern.message, modern.headers);
    expect(res.json).toMatchObject({ id: 5, error: { code: -32602 } });
    await stillServing();
  });

  it('unknown method → -32601 (legacy: in a 200; modern: 404)', async () => {
    const legacy = await postRpc(
      url,
      { jsonrpc: '2.0', id: 'u1', method: 'tools/frobnicate' },
      session,
    );
    expect(legacy.status).toBe(200);
    expect(legacy.json).toMatchObject({ id: 'u1', error: { code: -32601 } });
    for (const method of ['tools/frobnicate', 'ping', 'initialize', 'logging/setLevel']) {
      const modern = modernRequest('u2', method);
      const res = await postRpc(url, modern.message, modern.headers);
      expect(res.status, method).toBe(404);
      expect(res.json, method).toMatchObject({ id: 'u2', error: { code: -32601 } });
    }
    await stillServing();
  });

  it('a body over the limit → 413', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 'big',
      method: 'tools/call',
      params: {
        name: 'query_database',
        arguments: { query: `select '${'x'.repeat(BODY_LIMIT)}'` },
      },
    });
    const res = await postRpc(url, big, session);
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({ error: { code: -32600 } });
    // Just under the limit is fine.
    const fits = await postRpc(
      url,
      {
        jsonrpc: '2.0',
        id: 'fits',
        method: 'tools/call',
        params: { name: 'test_simple_text', arguments: { pad: 'x'.repeat(BODY_LIMIT / 2) } },
      },
      session,
    );
    expect(fits.status).toBe(200);
    await stillServing();
  });

  it('an unknown session id → 404; no session → served statelessly (POST) or 400 (GET)', async () => {
    const unknown = await postRpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...session, 'mcp-session-id': 'no-such-session' },
    );
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    const missing = await postRpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { 'mcp-protocol-version': '2025-11-25' },
    );
    // A legacy request that names no session is answered on its own, as plain JSON, with no
    // session created (docs/compatibility.md).
    expect(missing.status).toBe(200);
    expect(missing.headers['content-type']).toMatch(/^application\/json/);
    expect(missing.headers['mcp-session-id']).toBeUndefined();
    expect(missing.json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    const getMissing = await rawHttp(url, { headers: { accept: 'text/event-stream' } });
    expect(getMissing.status).toBe(400);
    await stillServing();
  });

  it('DELETE ends a session; using it afterwards → 404', async () => {
    const other = (await rawInitialize(url)).headers;
    const ok = await postRpc(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, other);
    expect(ok.status).toBe(200);
    const deleted = await rawHttp(url, { method: 'DELETE', headers: other });
    expect([200, 204]).toContain(deleted.status);
    const reuse = await postRpc(url, { jsonrpc: '2.0', id: 2, method: 'ping' }, other);
    expect(reuse.status).toBe(404);
    const again = await rawHttp(url, { method: 'DELETE', headers: other });
    expect(again.status).toBe(404);
    await stillServing();
  });

  it('a foreign Origin → 403; the server’s own and loopback origins pass', async () => {
    const foreign = await postRpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...session, origin: 'https://evil.example.com' },
    );
    expect(foreign.status).toBe(403);
    expect(foreign.json).toMatchObject({ error: { code: expect.any(Number) } });
    const init = await postRpc(
      url,
      {
        jsonrpc: '2.0',
        id: 'i',
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'x', version: '1' },
        },
      },
      { origin: 'http://evil.example.com' },
    );
    expect(init.status).toBe(403);
    expect(init.headers['mcp-session-id']).toBeUndefined();
    // A percent-encoded path routes to the endpoint too, and meets the same check.
    const encoded = await postRpc(
      url.replace(/\/mcp$/, '/%6Dcp'),
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { ...session, origin: 'https://evil.example.com' },
    );
    expect(encoded.status).toBe(403);
    for (const origin of [server.origin, server.origin.replace('127.0.0.1', 'localhost')]) {
      const res = await postRpc(
        url,
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { ...session, origin },
      );
      expect(res.status, origin).toBe(200);
    }
    await stillServing();
  });

  it('a foreign Host on a loopback bind → 403 (DNS rebinding)', async () => {
    const port = new URL(url).port;
    const hostOnly = await postRpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...session, host: 'evil.example.com' },
    );
    expect(hostOnly.status).toBe(403);
    const both = await postRpc(
      url,
      {
        jsonrpc: '2.0',
        id: 'i',
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'x', version: '1' },
        },
      },
      { host: `evil.example.com:${port}`, origin: `http://evil.example.com:${port}` },
    );
    expect(both.status).toBe(403);
    const localhost = await postRpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...session, host: `localhost:${port}` },
    );
    expect(localhost.status).toBe(200);
    await stillServing();
  });

  it('an unsupported MCP-Protocol-Version → 400', async () => {
    const res = await postRpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...session, 'mcp-protocol-version': '1999-01-01' },
    );
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: { code: -32600 } });
    expect(res.json.error.message).toContain('1999-01-01');
    await stillServing();
  });

  it('modern era: headers that disagree with the body → 400 with -32020', async () => {
    const good = modernRequest(1, 'tools/call', { name: 'test_simple_text', arguments: {} });
    const cases: Array<Record<string, string | undefined>> = [
      { 'mcp-protocol-version': '2025-11-25' },
      { 'mcp-protocol-version': undefined },
      { 'mcp-method': 'tools/list' },
      { 'mcp-method': undefined },
      { 'mcp-name': 'query_database' },
      { 'mcp-name': undefined },
    ];
    for (const change of cases) {
      const res = await postRpc(url, good.message, { ...good.headers, ...change });
      expect(res.status, JSON.stringify(change)).toBe(400);
      expect(res.json, JSON.stringify(change)).toMatchObject({ error: { code: -32020 } });
    }
    // Header names are case-insensitive and surrounding whitespace is allowed.
    const tolerant = await postRpc(url, good.message, {
      'MCP-Protocol-Version': ` ${MODERN_VERSION} `,
      'Mcp-Method': 'tools/call ',
      'MCP-NAME': ' test_simple_text',
    });
    expect(tolerant.status, tolerant.text).toBe(200);
    await stillServing();
  });

  it('modern era: an unsupported version → 400 with -32022 and the supported list', async () => {
    const message = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: modernMeta({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) },
    };
    const res = await postRpc(url, message, {
      'mcp-protocol-version': '2099-01-01',
      'mcp-method': 'tools/list',
    });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe(-32022);
    expect(res.json.error.data.requested).toBe('2099-01-01');
    expect(res.json.error.data.supported).toEqual(
      expect.arrayContaining([MODERN_VERSION, '2025-11-25']),
    );
    await stillServing();
  });

  it('modern era: a missing _meta envelope or clientCapabilities → 400 with -32602', async () => {
    const headers = { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/list' };
    const noCapabilities = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION } },
    };
    const res = await postRpc(url, noCapabilities, headers);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ id: 1, error: { code: -32602 } });
    const noMeta = await postRpc(
      url,
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
      headers,
    );
    expect(noMeta.status).toBe(400);
    expect(noMeta.json).toMatchObject({ id: 2, error: { code: -32602 } });
    // clientInfo is optional.
    const noInfo = modernRequest(
      3,
      'tools/list',
      {},
      { 'io.modelcontextprotocol/clientInfo': undefined },
    );
    const served = await postRpc(url, noInfo.message, noInfo.headers);
    expect(served.status).toBe(200);
    await stillServing();
  });

  it('modern era: input-required rounds driven by hand; a tampered requestState is refused', async () => {
    const capabilities = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
    const ask = modernRequest(
      'r1',
      'tools/call',
      { name: 'test_input_required_result_elicitation', arguments: {} },
      capabilities,
    );
    const round1 = await postRpc(url, ask.message, ask.headers);
    expect(round1.status).toBe(200);
    const asked = round1.json.result;
    expect(asked.resultType).toBe('input_required');
    expect(asked.inputRequests.user_name).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'What is your name?' },
    });
    expect(typeof asked.requestState).toBe('string');

    const answer = (id: string, requestState: string) =>
      modernRequest(
        id,
        'tools/call',
        {
          name: 'test_input_required_result_elicitation',
          arguments: {},
          inputResponses: { user_name: { action: 'accept', content: { name: 'Ada' } } },
          requestState,
        },
        capabilities,
      );
    const last = asked.requestState.at(-2) === 'A' ? 'B' : 'A';
    const tampered = `${asked.requestState.slice(0, -2)}${last}${asked.requestState.at(-1)}`;
    const refused = await postRpc(
      url,
      answer('r2', tampered).message,
      answer('r2', tampered).headers,
    );
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ id: 'r2', error: { code: -32602 } });

    const round2 = await postRpc(
      url,
      answer('r3', asked.requestState).message,
      answer('r3', asked.requestState).headers,
    );
    expect(round2.status).toBe(200);
    expect(round2.json.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'Hello, Ada!' }],
    });

    // Without the capability the request cannot proceed: -32021 names what is missing.
    const bare = modernRequest('r4', 'tools/call', {
      name: 'test_missing_capability',
      arguments: {},
    });
    const missing = await postRpc(url, bare.message, bare.headers);
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { sampling: {} } },
    });
    await stillServing();
  });

  it('an Accept header without text/event-stream → 406; a non-JSON Content-Type → 415', async () => {
    const res = await postRpc(
      url,
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { ...session, accept: 'application/json' },
    );
    expect(res.status).toBe(406);
    const getJson = await rawHttp(url, { headers: { ...session, accept: 'application/json' } });
    expect(getJson.status).toBe(406);
    const text = await postRpc(url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {
      ...session,
      'content-type': 'text/plain',
    });
    expect(text.status).toBe(415);
    await stillServing();
  });

  it('modern era: GET and DELETE on the endpoint → 405', async () => {
    const get = await rawHttp(url, {
      headers: { accept: 'text/event-stream', 'mcp-protocol-version': MODERN_VERSION },
    });
    expect(get.status).toBe(405);
    const del = await rawHttp(url, {
      method: 'DELETE',
      headers: { 'mcp-protocol-version': MODERN_VERSION },
    });
    expect(del.status).toBe(405);
    await stillServing();
  });

  it('another HTTP method (PUT, PATCH, OPTIONS) → 405 with Allow and a JSON-RPC error', async () => {
    for (const path of [url, `${url}/v1`]) {
      for (const method of ['PUT', 'PATCH', 'OPTIONS']) {
        const res = await rawHttp(path, {
          method,
          headers: { ...POST_HEADERS, ...session },
          body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers['allow']).toBe('GET, POST, DELETE');
        expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      }
    }
    await stillServing();
  });

  it('notifications are accepted with 202 and an empty body', async () => {
    const legacy = await postRpc(
      url,
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      session,
    );
    expect(legacy.status).toBe(202);
    expect(legacy.text).toBe('');
    const modern = await postRpc(
      url,
      {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 'none', _meta: modernMeta() },
      },
      { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'notifications/cancelled' },
    );
    expect(modern.status).toBe(202);
    await stillServing();
  });

  it('batches are accepted only on a 2025-03-26 session', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 'b1', method: 'ping' },
      { jsonrpc: '2.0', id: 'b2', method: 'tools/list' },
      { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
    ];
    const old = (await rawInitialize(url, '2025-03-26')).headers;
    const accepted = await postRpc(url, batch, old);
    expect(accepted.status).toBe(200);
    expect(accepted.json).toHaveLength(2);
    expect(accepted.json.map((r: { id: string }) => r.id).sort()).toEqual(['b1', 'b2']);
    expect((await postRpc(url, [], old)).status).toBe(400);

    for (const version of ['2025-06-18', '2025-11-25']) {
      const headers = (await rawInitialize(url, version)).headers;
      const refused = await postRpc(url, batch, headers);
      expect(refused.status, version).toBe(400);
      expect(refused.json, version).toMatchObject({ error: { code: -32600 } });
    }
    await stillServing();
  });

  it('a client that disconnects in the middle of an SSE stream does not upset the server', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 'sse',
      method: 'tools/call',
      params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'p1' } },
    };
    // Legacy POST stream, the session's GET stream, and a modern POST stream: each dropped
    // after its first bytes.
    await dropAfterFirstChunk(url, 'POST', { ...POST_HEADERS, ...session }, JSON.stringify(call));
    await dropAfterFirstChunk(url, 'GET', { accept: 'text/event-stream', ...session });
    const modern = modernRequest(
      'sse-m',
      'tools/call',
      { name: 'test_tool_with_progress', arguments: {} },
      {},
    );
    (modern.message as { params: Record<string, unknown> }).params['_meta'] = modernMeta({
      progressToken: 'p2',
    });
    await dropAfterFirstChunk(
      url,
      'POST',
      { ...POST_HEADERS, ...modern.headers },
      JSON.stringify(modern.message),
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the dropped calls finish
    await stillServing();
    // The dropped GET stream does not block a new one (no 409).
    await dropAfterFirstChunk(url, 'GET', { accept: 'text/event-stream', ...session });
    expect(server.process.exitCode).toBeNull();
  });

  it('GET /health → 200 with status, server, version and each database', async () => {
    const res = await rawHttp(`${server.origin}/health`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      status: 'ok',
      server: expect.any(String),
      version: expect.any(String),
      database: 'up',
      databases: [{ name: expect.any(String), status: 'up' }],
    });
  });
});

describe('HTTP: /health with the database unreachable', () => {
  let server: HttpServer;
  beforeAll(async () => {
    server = await startHttpServer(['--database', CLOSED_PORT_URL]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('answers 503, and MCP requests still get answers', async () => {
    const res = await rawHttp(`${server.origin}/health`);
    expect(res.status).toBe(503);
    expect(res.json).toMatchObject({
      status: 'unavailable',
      database: 'unreachable',
      server: 'test',
    });
    const call = modernRequest(1, 'tools/call', {
      name: 'query_database',
      arguments: { query: 'select 1' },
    });
    const answered = await postRpc(server.url, call.message, call.headers);
    expect(answered.status).toBe(200);
    expect(answered.json.result.isError).toBe(true);
    expect(answered.json.result.content[0].text).toMatch(/unavailable/i);
    expect(answered.json.result.content[0].text).not.toContain('127.0.0.1:1');
  });
});

/** Open a streaming request, wait for its first bytes, then drop the connection. */
function dropAfterFirstChunk(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method,
        headers: body ? { ...headers, 'content-length': String(Buffer.byteLength(body)) } : headers,
      },
      (res) => {
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
        res.once('data', () => {
          req.destroy();
          resolve();
        });
        // A GET stream says nothing until there is something to say: drop it after a moment.
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 300);
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' ? resolve() : reject(error),
    );
    req.end(body);
  });
}
