// Clients that hold on to the server: slow-loris connections (headers or a body trickling in, or
// nothing at all) are cut off after http.requestTimeoutMs with 408, while others are served;
// connections past http.maxConnections are closed at once; 10,000 idle legacy sessions stay
// bounded in memory, the oldest goes when the cap is reached, and idle sessions expire.
import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realPostgres, throwawayDatabase } from '../helpers/postgres.js';
import {
  postRpc,
  rawInitialize,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const pg = await realPostgres('test/e2e/slow-clients.test.ts (slow clients, idle sessions)');

const REQUEST_TIMEOUT_MS = 1_000;
const MAX_CONNECTIONS = 64;
/** How long a test waits for the server to act: far beyond the bound, far below Node's own. */
const PATIENCE_MS = 20_000;

interface Held {
  socket: Socket;
  /** Resolves with what the server sent once it closed the connection. */
  closed: Promise<string>;
}

function hold(port: number, start: (socket: Socket) => void): Held {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => socket.on('close', () => resolve(received)));
  socket.on('connect', () => start(socket));
  return { socket, closed };
}

/** Writes `text` a byte at a time, one every 100 ms, until the socket closes. */
function trickle(socket: Socket, text: string): void {
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    socket.write(text[at % text.length]!);
    at++;
  }, 100);
  socket.on('close', () => clearInterval(timer));
}

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: not within ${PATIENCE_MS} ms`)),
      PATIENCE_MS,
    );
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

function rssBytes(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(line![1]) * 1024;
}

const dir = mkdtempSync(join(tmpdir(), 'pgmcp-slow-'));
const state = pg ? throwawayDatabase(pg, 'pgmcp_slow_state') : null;
/** The server's arguments: the state in a database of its own (no embedded one to start). */
function serveArgs(): string[] {
  writeFileSync(join(dir, 'pgmcp.yaml'), `state:\n  url: ${state!.url}\n`);
  return ['--database', pg!.url, '--config', join(dir, 'pgmcp.yaml')];
}
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!pg)('slow and idle clients are bounded', () => {
  let server: HttpServer;
  let port: number;

  async function ping(): Promise<void> {
    const res = await postRpc(server.url, { jsonrpc: '2.0', id: 'alive', method: 'ping' });
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 'alive', result: {} });
  }

  beforeAll(async () => {
    server = await startHttpServer(serveArgs(), {
      env: serverEnv({
        PGMCP_HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        PGMCP_HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
        PGMCP_KEEP_ALIVE_MS: '200',
      }),
    });
    port = Number(new URL(server.url).port);
  });

  afterAll(async () => {
    expect(await server?.stop()).toEqual({ code: 0, signal: null });
  });

  it('headers sent a byte at a time: 408 and closed; others are served meanwhile', async () => {
    const held = Array.from({ length: 20 }, () =>
      hold(port, (s) => {
        s.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
        trickle(s, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
      }),
    );
    await ping();
    const answers = await within(Promise.all(held.map((h) => h.closed)), 'slow headers');
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 408/);
    await ping();
  });

  it('a body that trickles in after its headers: 408 and closed', async () => {
    const held = Array.from({ length: 10 }, () =>
      hold(port, (s) => {
        s.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
            'accept: application/json, text/event-stream\r\ncontent-length: 100000\r\n\r\n',
        );
        trickle(s, '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"');
      }),
    );
    const answers = await within(Promise.all(held.map((h) => h.closed)), 'slow bodies');
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 408/);
    await ping();
  });

  it('an SSE stream outlives requestTimeoutMs: the bound is on receiving the request only', async () => {
    const { headers } = await rawInitialize(server.url);
    const held = hold(port, (s) => {
      const lines = [
        `GET /mcp HTTP/1.1`,
        `Host: 127.0.0.1:${port}`,
        'accept: text/event-stream',
        ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      ];
      s.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    let received = '';
    held.socket.on('data', (chunk: string) => (received += chunk));
    await new Promise((resolve) => setTimeout(resolve, REQUEST_TIMEOUT_MS * 4));
    expect(held.socket.destroyed).toBe(false);
    expect(received).toMatch(/^HTTP\/1\.1 200/);
    // Keep-alive comments kept coming after the request timeout had passed.
    expect(received.match(/: keep-alive/g)?.length ?? 0).toBeGreaterThan(8);
    held.socket.destroy();
    await held.closed;
  });

  it('connections past http.maxConnections are closed at once; served again once the idle ones go', async () => {
    const idle = Array.from({ length: MAX_CONNECTIONS }, () => hold(port, () => undefined));
    await Promise.all(idle.map((h) => new Promise((resolve) => h.socket.once('connect', resolve))));
    // The server counts a connection once it accepts it: let it catch up with all of them.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const extra = hold(port, () => undefined);
    expect(await within(extra.closed, 'the connection past the cap')).toBe('');
    // The idle ones sent nothing: the request timeout cuts them too.
    await within(Promise.all(idle.map((h) => h.closed)), 'idle connections');
    await ping();
  });

  it('10,000 idle sessions stay bounded in memory; past the cap the oldest leaves memory, not the store', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const initialize = (): Promise<string> =>
      new Promise((resolve, reject) => {
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'idle', version: '1' },
          },
        });
        const req = httpRequest(
          server.url,
          {
            method: 'POST',
            agent,
            headers: {
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => {
              const id = res.headers['mcp-session-id'];
              if (res.statusCode === 200 && typeof id === 'string') resolve(id);
              else reject(new Error(`initialize: ${res.statusCode}`));
            });
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    await ping();
    const before = rssBytes(server.pid);
    // The first session is the oldest: made alone, a moment before the others.
    const ids: string[] = [await initialize()];
    await new Promise((resolve) => setTimeout(resolve, 20));
    const workers = Array.from({ length: 16 }, async () => {
      while (ids.length < 10_000) {
        const slot = ids.length;
        ids[slot] = '';
        ids[slot] = await initialize();
      }
    });
    await Promise.all(workers);
    agent.destroy();
    const grown = rssBytes(server.pid) - before;
    console.log(`10,000 idle sessions: RSS grew by ${(grown / 1048576).toFixed(1)} MiB`);
    expect(grown).toBeLessThan(256 * 1048576);
    const ping1 = { jsonrpc: '2.0', id: 'p', method: 'ping' };
    const status = async (id: string): Promise<number> =>
      (
        await postRpc(server.url, ping1, {
          'mcp-session-id': id,
          'mcp-protocol-version': '2025-11-25',
        })
      ).status;
    // Session 10,001: the one idle longest leaves this instance's memory. Sessions live in the
    // state database this server shares, so it is not ended: its next request loads it again.
    await initialize();
    for (const at of [0, 1, 2, 5_000, 9_999]) expect(await status(ids[at]!)).toBe(200);
  }, 180_000);
});

describe.skipIf(!pg)('idle sessions expire', () => {
  let server: HttpServer;
  const IDLE_MS = 1_500;

  beforeAll(async () => {
    server = await startHttpServer(serveArgs(), {
      env: serverEnv({ PGMCP_SESSION_IDLE_TIMEOUT_MS: String(IDLE_MS) }),
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('a session without requests for sessionIdleTimeoutMs is gone (404); a used one stays', async () => {
    const open = async (): Promise<Record<string, string>> => {
      const res = await postRpc(server.url, {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'i', version: '1' },
        },
      });
      return {
        'mcp-session-id': String(res.headers['mcp-session-id']),
        'mcp-protocol-version': '2025-11-25',
      };
    };
    const idle = await Promise.all(Array.from({ length: 50 }, open));
    const used = await open();
    const ping = { jsonrpc: '2.0', id: 'p', method: 'ping' };
    // Keep one session busy for three idle periods, the sweep running every second meanwhile.
    for (let i = 0; i < 9; i++) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS / 2));
      expect((await postRpc(server.url, ping, used)).status).toBe(200);
    }
    for (const headers of idle) expect((await postRpc(server.url, ping, headers)).status).toBe(404);
  });
});
