// A client_id URL is fetched by pgmcp itself, so what a client can learn from it is limited: a
// configured issuer's internal host is fetchable at the issuer's own origin only (not on any
// other port of that host), and a document that cannot be fetched is reported to the client the
// same way whether the port answered 404 or nothing listens there (the reason goes to the
// server's log). A spawned pgmcp with its built-in authorization server, and real listeners on
// loopback addresses (127.0.0.2, 127.0.0.3) that count their connections.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/errors.js';
import { openAuthorization } from '../helpers/oauth-browser.js';
import { REDIRECT_URL } from '../helpers/oauth-client.js';
import { realPostgres, throwawayDatabase, type RealPostgres } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const info = await realPostgres('test/e2e/oauth-fetch-guard.test.ts');

interface Site {
  server: Server;
  port: number;
  /** Requests for the client document. */
  documentRequests: number;
  /** TCP connections accepted. */
  connections: number;
  url(path: string): string;
}

/** A client's site on `host`: its metadata document at /client.json, 404 elsewhere. */
async function site(host: string, status = 200): Promise<Site> {
  const server = createServer((req, res) => {
    if (req.url === '/client.json' && status === 200) {
      self.documentRequests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          client_id: self.url('/client.json'),
          client_name: `Client on port ${self.port}`,
          redirect_uris: [REDIRECT_URL],
        }),
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not_found"}');
  });
  const self: Site = {
    server,
    port: 0,
    documentRequests: 0,
    connections: 0,
    url: (path) => `http://${host}:${self.port}${path}`,
  };
  server.on('connection', () => self.connections++);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  self.port = (server.address() as AddressInfo).port;
  return self;
}

/** A port on `host` where nothing listens (it did a moment ago). */
async function closedPort(host: string): Promise<number> {
  const probe = await site(host);
  await new Promise((resolve) => probe.server.close(resolve));
  return probe.port;
}

describe.skipIf(!info)('client_id URLs and the addresses pgmcp fetches from', () => {
  const pgInfo = info as RealPostgres;
  const state = throwawayDatabase(pgInfo, 'pgmcp_oauth_fetch_guard');
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-oauth-fetch-guard-'));
  let server: HttpServer;
  let configured: Site; // 127.0.0.2, the port a configured issuer names
  let otherPort: Site; // 127.0.0.2, another port
  let listed: Site; // 127.0.0.3 (allowedFetchHosts), answering 404
  let closed: number; // 127.0.0.3, nothing listening

  /** The server's log once it matches `pattern` (pino writes it a moment later). */
  const logged = async (pattern: RegExp): Promise<string> => {
    for (let i = 0; i < 50 && !pattern.test(server.stderr()); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    return server.stderr();
  };

  const authorize = (clientId: string) => {
    const url = new URL(`${server.origin}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
      code_challenge: createHash('sha256')
        .update(randomBytes(32).toString('base64url'))
        .digest('base64url'),
      code_challenge_method: 'S256',
    }).toString();
    return openAuthorization(url);
  };

  beforeAll(async () => {
    [configured, otherPort, listed] = await Promise.all([
      site('127.0.0.2'),
      site('127.0.0.2'),
      site('127.0.0.3', 404),
    ]);
    closed = await closedPort('127.0.0.3');
    const config = join(root, 'pgmcp.yaml');
    writeFileSync(
      config,
      [
        'auth:',
        '  oauth:',
        '    requireAuthorization: true',
        `    authorizationServers: ["${configured.url('')}"]`,
        '    allowedFetchHosts: [127.0.0.3]',
        '    server:',
        '      enabled: true',
        '',
      ].join('\n'),
    );
    const env = serverEnv({ PGMCP_LOG_LEVEL: 'info', PGMCP_STATE_URL: state.url });
    server = await startHttpServer(['--database', pgInfo.url, '--config', config], { env });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await Promise.all(
      [configured, otherPort, listed].map((s) =>
        s ? new Promise((resolve) => s.server.close(resolve)) : undefined,
      ),
    );
    rmSync(root, { recursive: true, force: true });
  });

  it("fetches a document at a configured issuer's origin, and from no other port of its host", async () => {
    const allowed = await authorize(configured.url('/client.json'));
    expect(allowed.status, allowed.html).toBe(200);
    expect(allowed.html).toContain(`Client on port ${configured.port}`);
    expect(configured.documentRequests).toBe(1);

    const refused = await authorize(otherPort.url('/client.json'));
    expect(refused.status).toBe(400);
    expect(refused.html).toContain(ErrorCodes.OAUTH_INVALID_CLIENT);
    expect(refused.html).toContain('not one pgmcp may fetch from');
    expect(refused.html).not.toMatch(/loopback/i);
    expect(otherPort.connections).toBe(0);
    // The reason is the server's to know.
    const reason = /loopback address.*its URL is not allowed/;
    expect(await logged(reason)).toMatch(reason);
  });

  it('says the same to the client whether the port answered or nothing listens there', async () => {
    const answered = await authorize(listed.url('/client.json'));
    const nothing = await authorize(`http://127.0.0.3:${closed}/client.json`);
    expect(listed.connections).toBe(1);
    for (const page of [answered, nothing]) {
      expect(page.status).toBe(answered.status);
      expect(page.html).toContain(ErrorCodes.OAUTH_CLIENT_METADATA_UNAVAILABLE);
      expect(page.html).toContain('metadata document could not be fetched.');
      expect(page.html).not.toMatch(/HTTP 404|connection failed|refused|ECONNREFUSED/i);
    }
    // The two pages differ only in what the client sent (its client_id, the form's tokens).
    const strip = (html: string) =>
      html.replace(/http:\/\/127\.0\.0\.3:\d+\/client\.json/g, 'URL').replace(/"[\w-]{20,}"/g, '');
    expect(strip(nothing.html)).toBe(strip(answered.html));
    const log = await logged(
      /answered HTTP 404[^]*connection failed|connection failed[^]*answered HTTP 404/,
    );
    expect(log).toContain('answered HTTP 404');
    expect(log).toContain('connection failed');
  });
});
