// A stream outlives the request that authenticated it, but not its credential: a legacy GET SSE
// stream and a modern subscriptions/listen opened with a token end within auth.cacheTtlMs once
// the token is revoked by the CLI (another process), its user is disabled, its login session
// expires, or its OAuth access token's exp passes — on every server instance sharing the state
// database — and soon after the introspection endpoint stops calling an opaque token active.
// The listen ends with a final JSON-RPC error, the closing is logged once, and the same
// credential gets 401 afterwards. Real server processes, a PostgreSQL state database, raw HTTP
// for the wire and the SDK v2 client for the listen.
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeIssuer, type FakeIssuer } from '../helpers/issuer.js';
import {
  realPostgres,
  throwawayDatabase,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';
import {
  modernRequest,
  parseSse,
  postRpc,
  rawHttp,
  rawInitialize,
  runPgmcp,
  serverEnv,
  spawnPgmcp,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const info = await realPostgres(
  'test/e2e/stream-credentials.test.ts (streams of lapsed credentials)',
);

const CACHE_TTL_MS = 500;
/**
 * Process scheduling on a busy machine (two servers, a spawned CLI, other suites), the state
 * query, the stream's last bytes. A stream must close within CACHE_TTL_MS + MARGIN_MS: seconds,
 * where a stream that is never closed stays open for the whole test.
 */
const MARGIN_MS = 6_500;
const LAPSED_LOG = 'closed the open streams of a credential that is no longer valid';

interface OpenStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** JSON-RPC messages received so far. */
  events(): any[];
  /** Resolves with the time the server ended the response. */
  readonly ended: Promise<number>;
  /** Whether the server has ended it. */
  isEnded(): boolean;
  /** Resolves once a message matching `predicate` arrived. */
  until(predicate: (message: any) => boolean, timeoutMs?: number): Promise<any>;
  destroy(): void;
}

/** An HTTP request whose SSE response is read as it comes; resolves once the headers arrive. */
function openStream(
  url: string,
  request: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: object },
): Promise<OpenStream> {
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  const headers = { ...request.headers };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: request.method, headers }, (res) => {
      let text = '';
      let endedAt: number | null = null;
      const waiters = new Set<() => void>();
      const ended = new Promise<number>((done) => {
        const finish = (): void => {
          endedAt ??= Date.now();
          done(endedAt);
          for (const wake of waiters) wake();
        };
        res.on('end', finish);
        res.on('close', finish);
        res.on('error', finish);
      });
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        for (const wake of waiters) wake();
      });
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: () => parseSse(text),
        ended,
        isEnded: () => endedAt !== null,
        until(predicate, timeoutMs = 10_000) {
          return new Promise((found, fail) => {
            const check = (): void => {
              const hit = parseSse(text).find(predicate);
              if (hit !== undefined) {
                waiters.delete(check);
                clearTimeout(timer);
                found(hit);
              } else if (endedAt !== null) {
                waiters.delete(check);
                clearTimeout(timer);
                fail(new Error(`the stream ended without the awaited message: ${text}`));
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no awaited message within ${timeoutMs} ms: ${text}`));
            }, timeoutMs);
            waiters.add(check);
            check();
          });
        },
        destroy: () => req.destroy(),
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Whether `stream` ends within `ms`; the time it ended, or null. */
async function endsWithin(stream: OpenStream, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  const at = await Promise.race([stream.ended, late]);
  clearTimeout(timer);
  return at;
}

/**
 * Watches `streams` for `ms` (several of the server's re-checks): fails as soon as one of them
 * ends, while its credential is still good.
 */
async function staysOpen(streams: OpenStream[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    ...streams.map((s, i) => s.ended.then(() => i)),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), ms);
    }),
  ]);
  clearTimeout(timer);
  expect(ended, `stream ${ended} ended while its credential was still good`).toBeNull();
}

/** Polls `read` until `done` holds of its value (or the deadline passes); the last value. */
async function eventually<T>(
  read: () => T,
  done: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    value = read();
  }
  return value;
}

/** The lines of `server`'s log that say it closed the streams of `user`'s credential, once some are there. */
function lapsedLines(server: HttpServer, user: string): Promise<string[]> {
  const lines = (): string[] =>
    server
      .stderr()
      .split('\n')
      .filter((l) => l.includes(LAPSED_LOG) && l.includes(`"user":"${user}"`));
  return eventually(lines, (found) => found.length > 0);
}

const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** A legacy session's GET stream (server → client notifications), open. */
async function openGetStream(url: string, token: string): Promise<OpenStream> {
  const { headers } = await rawInitialize(url, '2025-11-25', {}, bearer(token));
  const stream = await openStream(url, {
    method: 'GET',
    headers: { ...headers, accept: 'text/event-stream' },
  });
  expect(stream.status).toBe(200);
  expect(stream.headers['content-type']).toBe('text/event-stream');
  return stream;
}

/** A modern subscriptions/listen, acknowledged. */
async function openListen(url: string, token: string, id: string): Promise<OpenStream> {
  const { message, headers } = modernRequest(id, 'subscriptions/listen', {
    notifications: { toolsListChanged: true },
  });
  const stream = await openStream(url, {
    method: 'POST',
    headers: {
      ...headers,
      ...bearer(token),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: message,
  });
  expect(stream.status).toBe(200);
  await stream.until((m) => m.method === 'notifications/subscriptions/acknowledged');
  return stream;
}

/** A modern request with this token: 200 while it is good, 401 once it lapsed. */
async function statusWith(url: string, token: string): Promise<number> {
  const { message, headers } = modernRequest('probe', 'tools/list');
  return (await postRpc(url, message, { ...headers, ...bearer(token) })).status;
}

/** The SDK v2 client's subscription, opened with this token. */
async function sdkListen(url: string, token: string) {
  const client = new Client(
    { name: 'pgmcp-stream-credentials', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: bearer(token) } }),
  );
  const subscription = await client.listen({ toolsListChanged: true });
  return { client, subscription };
}

/** The listen's last message: the JSON-RPC error that says why it ended. */
function expectLapsedAnswer(stream: OpenStream, id: string, reason: string): void {
  const last = stream.events().at(-1);
  expect(last).toMatchObject({
    jsonrpc: '2.0',
    id,
    error: { code: -32001, data: { reason } },
  });
  expect(last.error.message).toMatch(/^Stream closed: the bearer token it was opened with /);
}

const count = (text: string, needle: string): number => text.split(needle).length - 1;

describe.skipIf(!info)('streams whose credential lapses (PostgreSQL state database)', () => {
  const pgInfo = info as RealPostgres;
  const state = throwawayDatabase(pgInfo, 'pgmcp_streams_state');
  let env: Record<string, string>;
  let first: HttpServer;
  let second: HttpServer;

  const cli = async (args: string[], input?: string): Promise<string> => {
    if (input === undefined) {
      const run = await runPgmcp(args, { env, timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
      return run.stdout.trim();
    }
    const run = spawnPgmcp(args, { env, stdin: 'pipe' });
    run.process.stdin!.end(input);
    const exit = await run.exited;
    expect(exit.code, run.stderr()).toBe(0);
    return run.stdout().trim();
  };

  const login = async (server: HttpServer, username: string): Promise<string> => {
    const res = await rawHttp(`${server.origin}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: { username, password: 'correct horse battery' },
    });
    expect(res.status, res.text).toBe(200);
    return res.json.session_token as string;
  };

  beforeAll(async () => {
    env = serverEnv({
      PGMCP_LOG_LEVEL: 'info',
      PGMCP_STATE_URL: state.url,
      PGMCP_AUTH_CACHE_TTL_MS: String(CACHE_TTL_MS),
    });
    const args = ['--database', pgInfo.url, '--require-auth'];
    [first, second] = await Promise.all([
      startHttpServer(args, { env }),
      startHttpServer(args, { env }),
    ]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
  });

  it(
    'a token revoked with the CLI ends its GET stream and subscriptions/listen, on both instances',
    { timeout: 120_000 },
    async () => {
      const token = await cli(['token', 'create', '--name', 'streamer', '--expires', '1h']);
      const kept = await cli(['token', 'create', '--name', 'bystander', '--expires', '1h']);
      const getFirst = await openGetStream(first.url, token);
      const getSecond = await openGetStream(second.url, token);
      const listenFirst = await openListen(first.url, token, 'listen-first');
      const listenSecond = await openListen(second.url, token, 'listen-second');
      const sdk = await sdkListen(first.url, token);
      const bystander = await openListen(first.url, kept, 'listen-bystander');
      try {
        // Re-checked several times over while the token is good: nothing closes.
        await staysOpen(
          [getFirst, getSecond, listenFirst, listenSecond, bystander],
          CACHE_TTL_MS * 3,
        );

        await cli(['token', 'revoke', token.slice(0, 16)]);
        const revokedAt = Date.now();
        const streams = [getFirst, getSecond, listenFirst, listenSecond];
        const ends = await Promise.all(streams.map((s) => endsWithin(s, CACHE_TTL_MS + MARGIN_MS)));
        expect(ends.map((at) => at !== null)).toEqual([true, true, true, true]);
        for (const at of ends) expect(at! - revokedAt).toBeLessThan(CACHE_TTL_MS + MARGIN_MS);
        expect(await sdk.subscription.closed).toBe('remote');

        expectLapsedAnswer(listenFirst, 'listen-first', 'revoked');
        expectLapsedAnswer(listenSecond, 'listen-second', 'revoked');
        // Another token's stream is not touched.
        expect(bystander.isEnded()).toBe(false);
        // The same token gets 401 at once on either instance, however recently it was cached.
        expect(await statusWith(first.url, token)).toBe(401);
        expect(await statusWith(second.url, token)).toBe(401);
        expect(await statusWith(first.url, kept)).toBe(200);

        // Logged once per instance (one line for all of the token's streams), never the token.
        for (const server of [first, second]) {
          expect(await lapsedLines(server, 'streamer')).toHaveLength(1);
          expect(server.stderr()).not.toContain(token);
        }
      } finally {
        bystander.destroy();
        await sdk.client.close().catch(() => undefined);
      }
    },
  );

  it('disabling a user ends the streams of their session', { timeout: 120_000 }, async () => {
    await cli(['user', 'add', 'dora'], 'correct horse battery\n');
    const session = await login(first, 'dora');
    const get = await openGetStream(first.url, session);
    const listen = await openListen(second.url, session, 'listen-dora');
    await staysOpen([get, listen], CACHE_TTL_MS * 3);

    await cli(['user', 'disable', 'dora']);
    const disabledAt = Date.now();
    for (const stream of [get, listen]) {
      const at = await endsWithin(stream, CACHE_TTL_MS + MARGIN_MS);
      expect(at, 'the stream should have ended').not.toBeNull();
      expect(at! - disabledAt).toBeLessThan(CACHE_TTL_MS + MARGIN_MS);
    }
    // Disabling ends her sessions: the session is gone.
    expectLapsedAnswer(listen, 'listen-dora', 'ended');
    expect(await statusWith(first.url, session)).toBe(401);
    expect(await statusWith(second.url, session)).toBe(401);
    for (const server of [first, second]) {
      expect(await lapsedLines(server, 'dora')).toHaveLength(1);
    }
  });

  it('a login session that expires ends its streams', { timeout: 120_000 }, async () => {
    await cli(['user', 'add', 'ezra'], 'correct horse battery\n');
    const session = await login(second, 'ezra');
    const get = await openGetStream(second.url, session);
    const listen = await openListen(first.url, session, 'listen-ezra');
    // The session runs out four seconds from now (sessions last at least a minute otherwise).
    await withClient(state.url, (c) =>
      c.query(
        `UPDATE pgmcp.sessions SET expires_at = now() + interval '4 seconds'
          WHERE user_id = (SELECT id FROM pgmcp.users WHERE username = 'ezra')`,
      ),
    );
    const expiresAt = Date.now() + 4_000;
    // Open until then, through the re-checks before it.
    await staysOpen([get, listen], Math.max(0, expiresAt - Date.now() - 1_000));
    for (const stream of [get, listen]) {
      const at = await endsWithin(stream, expiresAt - Date.now() + CACHE_TTL_MS + MARGIN_MS);
      expect(at, 'the stream should have ended').not.toBeNull();
      expect(at! - expiresAt).toBeLessThan(CACHE_TTL_MS + MARGIN_MS);
    }
    expectLapsedAnswer(listen, 'listen-ezra', 'expired');
    expect(await statusWith(first.url, session)).toBe(401);
    expect(await statusWith(second.url, session)).toBe(401);
  });
});

describe.skipIf(!info)('streams of an OAuth access token that expires', () => {
  const pgInfo = info as RealPostgres;
  const state = throwawayDatabase(pgInfo, 'pgmcp_streams_oauth');
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-stream-oauth-'));
  let idp: FakeIssuer;
  let server: HttpServer;

  beforeAll(async () => {
    idp = await startFakeIssuer();
    const config = join(root, 'pgmcp.yaml');
    writeFileSync(
      config,
      [
        'auth:',
        '  oauth:',
        '    requireAuthorization: true',
        `    authorizationServers: ["${idp.issuer}"]`,
        '    clockSkewSeconds: 0',
        '',
      ].join('\n'),
    );
    const env = serverEnv({
      PGMCP_LOG_LEVEL: 'info',
      PGMCP_STATE_URL: state.url,
      PGMCP_AUTH_CACHE_TTL_MS: String(CACHE_TTL_MS),
    });
    server = await startHttpServer(['--database', pgInfo.url, '--config', config], { env });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await idp?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('ends the GET stream and the listen when the JWT expires', { timeout: 60_000 }, async () => {
    const exp = Math.floor(Date.now() / 1000) + 6;
    const token = await idp.mint({ aud: server.url, exp });
    const get = await openGetStream(server.url, token);
    const listen = await openListen(server.url, token, 'listen-jwt');
    const sdk = await sdkListen(server.url, token);
    try {
      // Open until then, through the re-checks before it (however long opening them took).
      await staysOpen([get, listen], Math.max(0, exp * 1000 - Date.now() - 1_000));
      for (const stream of [get, listen]) {
        const at = await endsWithin(stream, exp * 1000 - Date.now() + CACHE_TTL_MS + MARGIN_MS);
        expect(at, 'the stream should have ended').not.toBeNull();
        expect(at! - exp * 1000).toBeGreaterThanOrEqual(0);
        expect(at! - exp * 1000).toBeLessThan(CACHE_TTL_MS + MARGIN_MS);
      }
      expect(await sdk.subscription.closed).toBe('remote');
      expectLapsedAnswer(listen, 'listen-jwt', 'expired');
      expect(await statusWith(server.url, token)).toBe(401);
      expect(
        await eventually(
          () => count(server.stderr(), LAPSED_LOG),
          (n) => n > 0,
        ),
      ).toBe(1);
      expect(server.stderr()).not.toContain(token);
    } finally {
      await sdk.client.close().catch(() => undefined);
    }
  });
});

describe.skipIf(!info)('streams of an opaque OAuth token checked by introspection', () => {
  const pgInfo = info as RealPostgres;
  const state = throwawayDatabase(pgInfo, 'pgmcp_streams_introspection');
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-stream-introspection-'));
  /** introspection.cacheSeconds: the endpoint is asked again every max(this, cacheTtlMs). */
  const INTROSPECTION_CACHE_MS = 1_000;
  let idp: FakeIssuer;
  let server: HttpServer;

  beforeAll(async () => {
    idp = await startFakeIssuer();
    const config = join(root, 'pgmcp.yaml');
    writeFileSync(
      config,
      [
        'auth:',
        '  oauth:',
        '    requireAuthorization: true',
        '    clockSkewSeconds: 0',
        '    introspection:',
        `      url: "${idp.issuer}/introspect"`,
        `      cacheSeconds: ${INTROSPECTION_CACHE_MS / 1000}`,
        '',
      ].join('\n'),
    );
    const env = serverEnv({
      PGMCP_LOG_LEVEL: 'info',
      PGMCP_STATE_URL: state.url,
      PGMCP_AUTH_CACHE_TTL_MS: String(CACHE_TTL_MS),
    });
    server = await startHttpServer(['--database', pgInfo.url, '--config', config], { env });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await idp?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it(
    'ends the streams of a token the authorization server no longer calls active, with or without exp',
    { timeout: 60_000 },
    async () => {
      const noExp = `opaque-${randomUUID()}`;
      const withExp = `opaque-${randomUUID()}`;
      const kept = `opaque-${randomUUID()}`;
      const claims = { aud: server.url, scope: 'analyst' };
      idp.opaque.set(noExp, { ...claims, sub: 'no-exp' });
      idp.opaque.set(withExp, {
        ...claims,
        sub: 'with-exp',
        exp: Math.floor(Date.now() / 1000) + 3600,
      });
      idp.opaque.set(kept, { ...claims, sub: 'kept' });
      const get = await openGetStream(server.url, noExp);
      const listenNoExp = await openListen(server.url, noExp, 'listen-no-exp');
      const listenWithExp = await openListen(server.url, withExp, 'listen-with-exp');
      const bystander = await openListen(server.url, kept, 'listen-kept');
      const sdk = await sdkListen(server.url, withExp);
      try {
        // While the tokens are active the endpoint is asked again, and nothing closes.
        const asked = idp.hits.get('/introspect') ?? 0;
        await new Promise((r) => setTimeout(r, INTROSPECTION_CACHE_MS * 2.5));
        expect(idp.hits.get('/introspect') ?? 0).toBeGreaterThan(asked);
        for (const s of [get, listenNoExp, listenWithExp, bystander]) {
          expect(s.isEnded()).toBe(false);
        }

        // Revoked at the authorization server: it answers { active: false } from now on.
        idp.opaque.delete(noExp);
        idp.opaque.delete(withExp);
        const revokedAt = Date.now();
        const within = INTROSPECTION_CACHE_MS + MARGIN_MS;
        const ends = await Promise.all(
          [get, listenNoExp, listenWithExp].map((s) => endsWithin(s, within)),
        );
        expect(ends.map((at) => at !== null)).toEqual([true, true, true]);
        for (const at of ends) expect(at! - revokedAt).toBeLessThan(within);
        expect(await sdk.subscription.closed).toBe('remote');
        expectLapsedAnswer(listenNoExp, 'listen-no-exp', 'revoked');
        expectLapsedAnswer(listenWithExp, 'listen-with-exp', 'revoked');
        expect(bystander.isEnded()).toBe(false);
        // Refused at once, although an active answer for it may still have been cached.
        expect(await statusWith(server.url, noExp)).toBe(401);
        expect(await statusWith(server.url, withExp)).toBe(401);
        expect(await statusWith(server.url, kept)).toBe(200);

        // One line per token, never the token.
        const log = server.stderr();
        const lines = log.split('\n').filter((l) => l.includes(LAPSED_LOG));
        expect(lines.filter((l) => l.includes('"user":"no-exp"'))).toHaveLength(1);
        expect(lines.filter((l) => l.includes('"user":"with-exp"'))).toHaveLength(1);
        for (const token of [noExp, withExp, kept]) expect(log).not.toContain(token);
      } finally {
        bystander.destroy();
        await sdk.client.close().catch(() => undefined);
      }
    },
  );
});
