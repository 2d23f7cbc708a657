// pgmcp's own fetches refuse addresses in loopback and other internal ranges, unless listed in
// auth.oauth.allowedFetchHosts: real listeners on other loopback addresses (127.0.0.2,
// 127.0.0.3, ::1) record every connection, and a refused fetch must leave them untouched —
// whether the URL names the address, an IPv4-mapped IPv6 form of it, a name that resolves to
// it (localhost), or a redirect that points at it. Loopback only: nothing leaves this machine.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthFailure } from '../../src/auth/index.js';
import { createFetchPolicy, fetchPolicyFor } from '../../src/auth/oauth/fetch-guard.js';
import { fetchJson, FetchProblem } from '../../src/auth/oauth/fetch-json.js';
import { createResourceServer } from '../../src/auth/oauth/resource-server.js';
import { configSchema } from '../../src/config/schema.js';
import type { Principal } from '../../src/core/principal.js';
import { startFakeIssuer } from '../helpers/issuer.js';

interface Listener {
  server: Server;
  host: string;
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  url(path?: string): string;
}

async function listen(
  host: string,
  answer: (url: string, res: ServerResponse) => void = (_url, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"ok":true}');
  },
): Promise<Listener> {
  const server = createServer((req, res) => answer(req.url ?? '/', res));
  const listener: Listener = {
    server,
    host,
    port: 0,
    connections: 0,
    url(path = '/doc.json') {
      const name = host.includes(':') ? `[${host}]` : host;
      return `http://${name}:${this.port}${path}`;
    },
  };
  server.on('connection', () => {
    listener.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  listener.port = (server.address() as AddressInfo).port;
  return listener;
}

const close = (l: Listener | undefined) =>
  l ? new Promise<void>((resolve) => l.server.close(() => resolve())) : Promise.resolve();

const LIMITS = { timeoutMs: 2000, maxBytes: 65_536 };

async function problem(promise: Promise<unknown>): Promise<FetchProblem> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FetchProblem);
  return error as FetchProblem;
}

describe("pgmcp's own fetches and internal addresses", () => {
  let second: Listener; // 127.0.0.2
  let third: Listener; // 127.0.0.3, where a redirect points
  let first: Listener; // 127.0.0.1, reached through the name localhost
  let six: Listener; // ::1
  let redirector: Listener; // 127.0.0.2, answering 302 to the third

  beforeAll(async () => {
    [second, third, first, six] = await Promise.all([
      listen('127.0.0.2'),
      listen('127.0.0.3'),
      listen('127.0.0.1'),
      listen('::1'),
    ]);
    redirector = await listen('127.0.0.2', (_url, res) => {
      res.writeHead(302, { location: third.url() });
      res.end();
    });
  });
  afterAll(async () => {
    await Promise.all([second, third, first, six, redirector].map(close));
  });

  it('refuses loopback addresses, however written, without connecting', async () => {
    const policy = createFetchPolicy([]);
    const cases: [string, Listener][] = [
      [second.url(), second],
      [`http://[::ffff:127.0.0.2]:${second.port}/doc.json`, second],
      [`http://[::ffff:7f00:2]:${second.port}/doc.json`, second],
      [`http://localhost:${first.port}/doc.json`, first],
      [`http://LOCALHOST:${first.port}/doc.json`, first],
      [six.url(), six],
    ];
    for (const [url, listener] of cases) {
      const before = listener.connections;
      const refused = await problem(fetchJson(url, { ...LIMITS, policy }));
      expect(refused.kind, url).toBe('forbidden');
      expect(refused.message, url).toMatch(/loopback.*allowedFetchHosts/);
      expect(listener.connections, url).toBe(before);
    }
  });

  it('fetches from a listed host, and only from it', async () => {
    const policy = createFetchPolicy(['127.0.0.2']);
    expect(await fetchJson(second.url(), { ...LIMITS, policy })).toEqual({ ok: true });
    expect(second.connections).toBe(1);
    const before = third.connections;
    expect((await problem(fetchJson(third.url(), { ...LIMITS, policy }))).kind).toBe('forbidden');
    expect(third.connections).toBe(before);
    const byName = createFetchPolicy(['localhost']);
    const at = first.connections;
    expect(
      await fetchJson(`http://localhost:${first.port}/`, { ...LIMITS, policy: byName }),
    ).toEqual({
      ok: true,
    });
    expect(first.connections).toBe(at + 1);
  });

  it("allows a configured issuer's origin, not the other ports of its host", async () => {
    // Two listeners on 127.0.0.2: the issuer's configured port, and another one.
    const other = await listen('127.0.0.2');
    const issuer = await listen('127.0.0.2');
    try {
      for (const settings of [
        { authorizationServers: [issuer.url('/realms/a')] },
        { introspection: { url: issuer.url('/introspect') } },
        { server: { issuer: issuer.url('') } },
      ]) {
        const policy = fetchPolicyFor(configSchema.parse({ auth: { oauth: settings } }).auth.oauth);
        const at = issuer.connections;
        expect(await fetchJson(issuer.url('/jwks'), { ...LIMITS, policy })).toEqual({ ok: true });
        expect(issuer.connections).toBe(at + 1);
        for (const url of [
          other.url('/jwks'),
          `http://127.0.0.2:${other.port}/`,
          `http://[::ffff:127.0.0.2]:${issuer.port}/jwks`,
        ]) {
          const refused = await problem(fetchJson(url, { ...LIMITS, policy }));
          expect(refused.kind, url).toBe('forbidden');
        }
        expect(other.connections).toBe(0);
      }
      // Listed in allowedFetchHosts, the host is allowed on every port.
      const listed = createFetchPolicy(['127.0.0.2']);
      expect(await fetchJson(other.url(), { ...LIMITS, policy: listed })).toEqual({ ok: true });
      expect(other.connections).toBe(1);
    } finally {
      await Promise.all([close(other), close(issuer)]);
    }
  });

  it('follows no redirect, so a listed host cannot send a fetch on to an internal one', async () => {
    const policy = createFetchPolicy(['127.0.0.2']);
    const refused = await problem(fetchJson(redirector.url(), { ...LIMITS, policy }));
    expect(refused.kind).toBe('refused');
    expect(refused.message).toMatch(/redirect \(HTTP 302\)/);
    expect(redirector.connections).toBe(1);
    expect(third.connections).toBe(0);
  });

  it("refuses an issuer's jwks_uri on an internal address it does not share, and says 503", async () => {
    const idp = await startFakeIssuer({ defaultAudience: 'http://127.0.0.1:8080/mcp' });
    // The issuer's metadata points its keys at another loopback address.
    const issuer = await listen('127.0.0.1', (url, res) => {
      res.writeHead(url.includes('well-known') ? 200 : 404, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ issuer: issuerUrl, jwks_uri: `http://127.0.0.3:${third.port}/jwks` }),
      );
    });
    const issuerUrl = `http://127.0.0.1:${issuer.port}`;
    try {
      const settings = configSchema.parse({
        auth: { oauth: { authorizationServers: [issuerUrl, idp.issuer] } },
      }).auth.oauth;
      const rs = createResourceServer({ settings });
      const context = { resource: 'http://127.0.0.1:8080/mcp', origin: 'http://127.0.0.1:8080' };
      const before = third.connections;
      const token = await idp.mint({ iss: issuerUrl });
      const verdict = (await rs.verify(token, context)) as AuthFailure;
      expect(verdict.reason).toBe('unavailable');
      expect(third.connections).toBe(before);
      // The configured issuer's own host is allowed without being listed.
      const own = (await rs.verify(await idp.mint(), context)) as Principal;
      expect(own.kind).toBe('oauth');
    } finally {
      await close(issuer);
      await idp.close();
    }
  });
});
