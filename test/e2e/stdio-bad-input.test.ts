// stdio, raw: garbage gets a JSON-RPC error and the next request still works; stdout carries
// nothing but JSON-RPC messages, one per line; closing stdin ends the server cleanly. None of
// this needs the database, so the server points at one that is not there (nothing connects
// until a tool runs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modernMeta, serverEnv, spawnStdio, type StdioPeer } from '../helpers/server.js';

const NO_DATABASE = 'postgres://pgmcp_test@127.0.0.1:1/test';

describe('stdio: bad input gets an error and the server keeps serving', () => {
  let peer: StdioPeer;

  async function stillServing(id: string): Promise<void> {
    const pong = await peer.request(id, 'ping');
    expect(pong).toEqual({ jsonrpc: '2.0', id, result: {} });
  }

  beforeAll(async () => {
    peer = spawnStdio(['--database', NO_DATABASE], {
      env: serverEnv({ PGMCP_LOG_LEVEL: 'debug' }),
      fixtures: true,
    });
    const init = await peer.request('init', 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'pgmcp-e2e-raw', version: '1.0.0' },
    });
    expect(init.result.protocolVersion).toBe('2025-11-25');
    peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  });

  afterAll(async () => {
    await peer?.stop('SIGKILL');
  });

  it('a garbage line gets a parse error (-32700, id null), and the next request works', async () => {
    peer.send('this is not json {');
    const error = await peer.next((m) => m.error?.code === -32700);
    expect(error).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    await stillServing('after-garbage');
  });

  it('JSON that is not JSON-RPC gets -32600', async () => {
    peer.send({ hello: 'world' });
    expect(await peer.next((m) => m.error?.code === -32600)).toMatchObject({ id: null });
    peer.send({ jsonrpc: '2.0', id: 'bad-params', method: 'tools/list', params: [1, 2] });
    expect(await peer.next((m) => m.id === 'bad-params')).toMatchObject({
      error: { code: -32600 },
    });
    await stillServing('after-invalid');
  });

  it('an unknown method gets -32601, wrong param types -32602', async () => {
    expect(await peer.request('u', 'tools/frobnicate')).toMatchObject({ error: { code: -32601 } });
    expect(await peer.request('t', 'tools/call', { name: ['query_database'] })).toMatchObject({
      error: { code: -32602 },
    });
    await stillServing('after-unknown');
  });

  it('a method named like a member of every object (__proto__, constructor) is unknown: -32601, not a bug', async () => {
    for (const method of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const answer = await peer.request(`proto-${method}`, method);
      expect(answer, method).toMatchObject({ error: { code: -32601 } });
      const modern = await peer.request(`proto-m-${method}`, method, { _meta: modernMeta() });
      expect(modern, method).toMatchObject({ error: { code: -32601 } });
    }
    expect(peer.stderr()).not.toContain('request failed');
    await stillServing('after-proto');
  });

  it('a batch is refused on a 2025-11-25 connection', async () => {
    peer.send([
      { jsonrpc: '2.0', id: 'b1', method: 'ping' },
      { jsonrpc: '2.0', id: 'b2', method: 'ping' },
    ]);
    expect(await peer.next((m) => m.error?.code === -32600 && m.id === null)).toBeTruthy();
    await stillServing('after-batch');
  });

  it('a modern-era request is served statelessly on the same stream', async () => {
    const listed = await peer.request('m1', 'tools/list', { _meta: modernMeta() });
    expect(listed.result.resultType).toBe('complete');
    expect(listed.result.tools.map((t: { name: string }) => t.name)).toContain('query_database');
    await stillServing('after-modern');
  });

  it('stdout carried only JSON-RPC messages, one per line', () => {
    expect(peer.lines.length).toBeGreaterThan(10);
    for (const line of peer.lines) {
      let message: any;
      expect(() => (message = JSON.parse(line)), line).not.toThrow();
      const messages = Array.isArray(message) ? message : [message];
      for (const m of messages) expect(m.jsonrpc, line).toBe('2.0');
    }
    // The logs went to stderr.
    expect(peer.stderr()).toContain('serving MCP on stdio');
  });
});

describe('stdio: lifecycle', () => {
  it('exits 0 when stdin closes', async () => {
    const peer = spawnStdio(['--database', NO_DATABASE]);
    await peer.request(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    peer.process.stdin!.end();
    const timer = setTimeout(() => peer.process.kill('SIGKILL'), 10_000);
    expect(await peer.exited).toEqual({ code: 0, signal: null });
    clearTimeout(timer);
  });

  it('ends an open subscription gracefully when stdin closes, then exits 0', async () => {
    const peer = spawnStdio(['--database', NO_DATABASE]);
    peer.send({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: modernMeta() },
    });
    const ack = await peer.next((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect(ack.params).toEqual({
      notifications: { toolsListChanged: true },
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
    });
    peer.process.stdin!.end();
    const closing = await peer.next((m) => m.id === 'listen-1');
    expect(closing.result).toMatchObject({ resultType: 'complete' });
    const timer = setTimeout(() => peer.process.kill('SIGKILL'), 10_000);
    expect(await peer.exited).toEqual({ code: 0, signal: null });
    clearTimeout(timer);
  });

  it('answers query_database with "database unavailable" when the database is down, and keeps serving', async () => {
    const peer = spawnStdio(['--database', NO_DATABASE]);
    try {
      const call = await peer.request('q', 'tools/call', {
        name: 'query_database',
        arguments: { query: 'select 1' },
        _meta: modernMeta(),
      });
      expect(call.result.isError).toBe(true);
      expect(call.result.content[0].text).toMatch(/unavailable/i);
      const listed = await peer.request('l', 'tools/list', { _meta: modernMeta() });
      expect(listed.result.tools.length).toBeGreaterThan(0);
    } finally {
      await peer.stop('SIGKILL');
    }
  });
});
