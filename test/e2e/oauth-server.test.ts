// The built-in authorization server end to end, against a spawned pgmcp with its state in
// PostgreSQL: the SDK's OAuth client completes 401 → discovery → registration → PKCE → the sign-in
// form → consent → token → tools/list; a client identified by a metadata document (served from
// loopback) signs in too; refresh tokens rotate and a reused one revokes its family; codes are
// single-use; a wrong PKCE verifier, an unregistered redirect URI and forms without the browser's
// cookie or CSRF token are refused with their documented errors; keys rotate by command.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/errors.js';
import { openAuthorization, postForm, signInAndAllow } from '../helpers/oauth-browser.js';
import { connectWithOAuth, MemoryOAuthProvider, REDIRECT_URL } from '../helpers/oauth-client.js';
import {
  realPostgres,
  REPO_ROOT,
  throwawayDatabase,
  type RealPostgres,
} from '../helpers/postgres.js';
import {
  postRpc,
  runPgmcp,
  serverEnv,
  spawnPgmcp,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const info = await realPostgres('test/e2e/oauth-server.test.ts');
const PASSWORD = 'correct horse battery';

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

describe.skipIf(!info)('built-in OAuth authorization server, end to end', () => {
  const pgInfo = info as RealPostgres;
  const state = throwawayDatabase(pgInfo, 'pgmcp_oauth_as');
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-oauth-as-'));
  let server: HttpServer;
  let env: Record<string, string>;
  let documents: Server;
  let documentUrl: string;

  const token = (fields: Record<string, string>) =>
    postForm(`${server.origin}/oauth/token`, fields, null);

  /** DCR, authorize, sign in, allow: a code for a fresh client. */
  const codeFor = async (scope = 'analyst') => {
    const reg = await fetch(`${server.origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Manual client', redirect_uris: [REDIRECT_URL] }),
    });
    expect(reg.status).toBe(201);
    const { client_id: clientId } = (await reg.json()) as { client_id: string };
    const { verifier, challenge } = pkce();
    const url = new URL(`${server.origin}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      scope,
      state: 'xyz',
      resource: server.url,
    }).toString();
    const back = await signInAndAllow(url, 'alice', PASSWORD);
    return { clientId, verifier, code: back.searchParams.get('code')!, back };
  };

  beforeAll(async () => {
    const config = join(root, 'pgmcp.yaml');
    writeFileSync(
      config,
      [
        'auth:',
        '  oauth:',
        '    requireAuthorization: true',
        '    scopesSupported: [analyst]',
        // The client metadata document below is served from this host, as a client's site.
        '    allowedFetchHosts: [127.0.0.1]',
        '    server:',
        '      enabled: true',
        '',
      ].join('\n'),
    );
    env = serverEnv({ PGMCP_LOG_LEVEL: 'warn', PGMCP_STATE_URL: state.url });
    const add = spawnPgmcp(['user', 'add', 'alice', '--role', 'analyst'], { env, stdin: 'pipe' });
    add.process.stdin!.end(`${PASSWORD}\n`);
    expect((await add.exited).code, add.stderr()).toBe(0);
    server = await startHttpServer(['--database', pgInfo.url, '--config', config], { env });
    // A client metadata document, served from loopback as a client's own site would serve it.
    documents = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          client_id: documentUrl,
          client_name: 'Document Client',
          redirect_uris: [REDIRECT_URL],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    documentUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}/client.json`;
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await new Promise((resolve) => documents?.close(resolve));
    rmSync(root, { recursive: true, force: true });
  });

  it('publishes RFC 8414 metadata and a JWKS, and names itself in the resource metadata', async () => {
    const meta = (await (
      await fetch(`${server.origin}/.well-known/oauth-authorization-server`)
    ).json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      issuer: server.origin,
      authorization_endpoint: `${server.origin}/oauth/authorize`,
      token_endpoint: `${server.origin}/oauth/token`,
      registration_endpoint: `${server.origin}/oauth/register`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    });
    const jwks = (await (await fetch(`${server.origin}/oauth/jwks`)).json()) as {
      keys: { kty: string; d?: string }[];
    };
    expect(jwks.keys.length).toBeGreaterThan(0);
    expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
    const prm = (await (
      await fetch(`${server.origin}/.well-known/oauth-protected-resource/mcp`)
    ).json()) as Record<string, unknown>;
    expect(prm.authorization_servers).toEqual([server.origin]);
  });

  it('lets the SDK OAuth client register, sign in through the form, consent and list tools', async () => {
    const provider = new MemoryOAuthProvider({ scope: 'analyst' });
    const { client, callback } = await connectWithOAuth(server.url, provider, (url) =>
      signInAndAllow(url, 'alice', PASSWORD),
    );
    try {
      expect(callback.searchParams.get('iss')).toBe(server.origin);
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('query_database');
    } finally {
      await client.close();
    }
    expect(provider.saved?.refresh_token).toMatch(/^pgmcpr_/);
    expect(provider.saved?.scope).toBe('analyst');
  });

  it('signs in a client identified by its metadata document', async () => {
    const { challenge } = pkce();
    const url = new URL(`${server.origin}/oauth/authorize`);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: documentUrl,
      redirect_uri: REDIRECT_URL,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 's1',
    }).toString();
    const page = await openAuthorization(url);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Document Client');
    const other = new URL(url);
    other.searchParams.set('redirect_uri', 'https://evil.example/cb');
    const refused = await openAuthorization(other);
    expect(refused.status).toBe(400);
  });

  it('refuses a client_id URL on an internal address it may not fetch from, without connecting', async () => {
    // The same kind of document, on a loopback address not in allowedFetchHosts.
    let connections = 0;
    const internal = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ client_id: 'x', redirect_uris: [REDIRECT_URL] }));
    });
    internal.on('connection', () => connections++);
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.2', resolve));
    const port = (internal.address() as AddressInfo).port;
    try {
      for (const clientId of [
        `http://127.0.0.2:${port}/client.json`,
        `https://127.0.0.2:${port}/client.json`,
      ]) {
        const url = new URL(`${server.origin}/oauth/authorize`);
        url.search = new URLSearchParams({
          response_type: 'code',
          client_id: clientId,
          redirect_uri: REDIRECT_URL,
          code_challenge: pkce().challenge,
          code_challenge_method: 'S256',
        }).toString();
        const page = await openAuthorization(url);
        expect(page.status, clientId).toBe(400);
        expect(page.html, clientId).toContain(ErrorCodes.OAUTH_INVALID_CLIENT);
        expect(page.html, clientId).toContain('not one pgmcp may fetch from');
        expect(page.html, clientId).toContain('allowedFetchHosts');
        // What kind of address it is stays in the server's log.
        expect(page.html, clientId).not.toMatch(/loopback/i);
      }
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => internal.close(resolve));
    }
    expect((await fetch(`${server.origin}/health`)).status).toBe(200);
  });

  it('rotates refresh tokens and revokes the family when an old one comes back', async () => {
    const { clientId, verifier, code, back } = await codeFor();
    expect(back.searchParams.get('state')).toBe('xyz');
    const first = await token({
      grant_type: 'authorization_code',
      code,
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
      code_verifier: verifier,
    });
    expect(first.status).toBe(200);
    const tokens = JSON.parse(first.html) as { refresh_token: string; access_token: string };
    const second = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(second.status).toBe(200);
    const rotated = JSON.parse(second.html) as { refresh_token: string };
    expect(rotated.refresh_token).not.toBe(tokens.refresh_token);
    const reused = await token({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(reused.status).toBe(400);
    expect(JSON.parse(reused.html)).toMatchObject({
      error: 'invalid_grant',
      pgmcp_code: ErrorCodes.OAUTH_INVALID_GRANT,
    });
    const afterReuse = await token({
      grant_type: 'refresh_token',
      refresh_token: rotated.refresh_token,
      client_id: clientId,
    });
    expect(afterReuse.status).toBe(400);
  });

  it('refuses a replayed code and a wrong PKCE verifier', async () => {
    const a = await codeFor();
    const ok = await token({
      grant_type: 'authorization_code',
      code: a.code,
      client_id: a.clientId,
      redirect_uri: REDIRECT_URL,
      code_verifier: a.verifier,
    });
    expect(ok.status).toBe(200);
    const refresh = (JSON.parse(ok.html) as { refresh_token: string }).refresh_token;
    const replay = await token({
      grant_type: 'authorization_code',
      code: a.code,
      client_id: a.clientId,
      redirect_uri: REDIRECT_URL,
      code_verifier: a.verifier,
    });
    expect(replay.status).toBe(400);
    expect(JSON.parse(replay.html).error_description).toMatch(/used already/);
    // The replay revoked what the code had given.
    const revoked = await token({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: a.clientId,
    });
    expect(revoked.status).toBe(400);

    const b = await codeFor();
    const wrong = await token({
      grant_type: 'authorization_code',
      code: b.code,
      client_id: b.clientId,
      redirect_uri: REDIRECT_URL,
      code_verifier: pkce().verifier,
    });
    expect(wrong.status).toBe(400);
    expect(JSON.parse(wrong.html)).toMatchObject({
      error: 'invalid_grant',
      pgmcp_code: ErrorCodes.OAUTH_INVALID_GRANT,
    });
  });

  it('revokes refresh tokens (RFC 7009) and answers 200 for unknown ones', async () => {
    const a = await codeFor();
    const ok = await token({
      grant_type: 'authorization_code',
      code: a.code,
      client_id: a.clientId,
      redirect_uri: REDIRECT_URL,
      code_verifier: a.verifier,
    });
    const refresh = (JSON.parse(ok.html) as { refresh_token: string }).refresh_token;
    expect((await postForm(`${server.origin}/oauth/revoke`, { token: refresh }, null)).status).toBe(
      200,
    );
    expect(
      (await postForm(`${server.origin}/oauth/revoke`, { token: 'nonsense' }, null)).status,
    ).toBe(200);
    const after = await token({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: a.clientId,
    });
    expect(after.status).toBe(400);
  });

  it('never redirects to an unregistered URI, and refuses forms without the cookie or CSRF token', async () => {
    const reg = await fetch(`${server.origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URL] }),
    });
    const { client_id: clientId } = (await reg.json()) as { client_id: string };
    const base = {
      response_type: 'code',
      client_id: clientId,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
    };
    for (const redirect of [
      'https://evil.example/cb',
      `${REDIRECT_URL}/../x`,
      `${REDIRECT_URL}?x=1`,
    ]) {
      const page = await openAuthorization(
        `${server.origin}/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: redirect })}`,
      );
      expect(page.status).toBe(400);
      expect(page.html).toContain(ErrorCodes.OAUTH_REDIRECT_MISMATCH);
    }
    const noPkce = await fetch(
      `${server.origin}/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URL, state: 'q' })}`,
      { redirect: 'manual' },
    );
    expect(noPkce.status).toBe(302);
    const location = new URL(noPkce.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('state')).toBe('q');

    const page = await openAuthorization(
      `${server.origin}/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: REDIRECT_URL })}`,
    );
    expect(page.status).toBe(200);
    const login = { request: page.request, csrf: page.csrf, username: 'alice', password: PASSWORD };
    const noCookie = await postForm(`${server.origin}/oauth/login`, login, null);
    expect(noCookie.status).toBe(403);
    expect(noCookie.html).toContain(ErrorCodes.OAUTH_CSRF);
    const badCsrf = await postForm(
      `${server.origin}/oauth/login`,
      { ...login, csrf: 'forged' },
      page.cookie,
    );
    expect(badCsrf.status).toBe(403);
    const otherBrowser = await postForm(
      `${server.origin}/oauth/login`,
      login,
      `pgmcp_oauth=${randomBytes(32).toString('base64url')}`,
    );
    expect(otherBrowser.status).toBe(403);
    const wrongPassword = await postForm(
      `${server.origin}/oauth/login`,
      { ...login, password: 'nope-nope' },
      page.cookie,
    );
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.html).toContain('Wrong user name or password');
    expect(wrongPassword.html).not.toContain('nope-nope');
    const consentForged = await postForm(
      `${server.origin}/oauth/consent`,
      { request: page.request, csrf: page.csrf, decision: 'allow' },
      null,
    );
    expect(consentForged.status).toBe(403);
    const pageHeaders = await fetch(
      `${server.origin}/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: REDIRECT_URL })}`,
    );
    expect(pageHeaders.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(pageHeaders.headers.get('x-frame-options')).toBe('DENY');
  });

  it('accepts its own tokens on /mcp and issues none for another resource', async () => {
    const a = await codeFor();
    const ok = await token({
      grant_type: 'authorization_code',
      code: a.code,
      client_id: a.clientId,
      redirect_uri: REDIRECT_URL,
      code_verifier: a.verifier,
    });
    const access = (JSON.parse(ok.html) as { access_token: string }).access_token;
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      },
    };
    expect((await postRpc(server.url, init, { authorization: `Bearer ${access}` })).status).toBe(
      200,
    );
    const elsewhere = new URL(`${server.origin}/oauth/authorize`);
    elsewhere.search = new URLSearchParams({
      response_type: 'code',
      client_id: a.clientId,
      redirect_uri: REDIRECT_URL,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      resource: 'https://other.example/mcp',
    }).toString();
    const res = await fetch(elsewhere, { redirect: 'manual' });
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('invalid_target');
  });

  it('rotates signing keys by command; the old key stays published', async () => {
    const before = (await (await fetch(`${server.origin}/oauth/jwks`)).json()) as {
      keys: unknown[];
    };
    const run = await runPgmcp(['oauth', 'rotate-keys'], { env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    const after = (await (await fetch(`${server.origin}/oauth/jwks`)).json()) as {
      keys: unknown[];
    };
    expect(after.keys.length).toBe(before.keys.length + 1);
  });

  it('answers garbage at every endpoint with its documented error, and stays up', async () => {
    const json = (res: { html: string }) => JSON.parse(res.html) as Record<string, string>;
    const noGrant = await token({ client_id: 'x' });
    expect(noGrant.status).toBe(400);
    expect(json(noGrant)).toMatchObject({
      error: 'unsupported_grant_type',
      pgmcp_code: ErrorCodes.OAUTH_UNSUPPORTED,
    });
    const noClient = await token({ grant_type: 'authorization_code' });
    expect(json(noClient)).toMatchObject({
      error: 'invalid_request',
      pgmcp_code: ErrorCodes.OAUTH_INVALID_REQUEST,
    });
    const secret = await token({
      grant_type: 'authorization_code',
      client_id: 'x',
      client_secret: 's',
    });
    expect(secret.status).toBe(401);
    expect(json(secret).error).toBe('invalid_client');
    const unknownCode = await token({
      grant_type: 'authorization_code',
      client_id: 'x',
      code: 'nope',
      redirect_uri: REDIRECT_URL,
      code_verifier: 'v'.repeat(43),
    });
    expect(json(unknownCode).error).toBe('invalid_grant');
    const jsonBody = await fetch(`${server.origin}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"grant_type": ',
    });
    expect(jsonBody.status).toBe(400);
    for (const body of [
      '{',
      '[]',
      '{"redirect_uris": ["javascript:alert(1)"]}',
      '{"redirect_uris": ["https://a.example/cb"], "grant_types": ["password"]}',
    ]) {
      const res = await fetch(`${server.origin}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(res.status, body).toBe(400);
      expect(((await res.json()) as Record<string, string>).error).toBe('invalid_client_metadata');
    }
    const big = await fetch(`${server.origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT_URL], client_name: 'x'.repeat(100_000) }),
    });
    expect(big.status).toBe(413);
    for (const query of [
      '',
      'client_id=a&client_id=b',
      'client_id=unknown',
      'client_id=https%3A%2F%2F127.0.0.1%3A1%2Fno.json',
    ]) {
      const page = await openAuthorization(`${server.origin}/oauth/authorize?${query}`);
      expect(page.status, query).toBe(400);
      expect(page.html).toMatch(/PGMCP62[17]/);
    }
    const health = await fetch(`${server.origin}/health`);
    expect(health.status).toBe(200);
  });

  it('shows the sign-in and consent pages in a real browser, with no CSP violations', async () => {
    const reg = await fetch(`${server.origin}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Claude', redirect_uris: [REDIRECT_URL] }),
    });
    const { client_id: clientId } = (await reg.json()) as { client_id: string };
    const url = `${server.origin}/oauth/authorize?${new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      scope: 'analyst',
      state: 'browser-state',
    })}`;
    const shots = join(REPO_ROOT, '.tmp', 'screenshots');
    mkdirSync(shots, { recursive: true });
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-background-networking', '--disable-gpu'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 800, height: 640 } });
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      let landed: string | null = null;
      await page.route(`${REDIRECT_URL}**`, async (route) => {
        landed = route.request().url();
        await route.fulfill({ status: 200, contentType: 'text/plain', body: 'back at the client' });
      });
      await page.goto(url);
      await expect.poll(() => page.title(), { timeout: 15_000 }).toBe('Sign in — pgmcp');
      expect(await page.textContent('main')).toContain('Claude');
      const color = await page.evaluate(
        `getComputedStyle(document.querySelector('button')).backgroundColor`,
      );
      expect(color).toBe('rgb(47, 91, 211)'); // the stylesheet loaded under the CSP
      await page.screenshot({ path: join(shots, 'oauth-login.png') });
      await page.fill('#username', 'alice');
      await page.fill('#password', PASSWORD);
      await page.click('button[type=submit]');
      await page.waitForSelector('text=Allow access?');
      expect(await page.textContent('ul.scopes')).toContain('analyst');
      await page.screenshot({ path: join(shots, 'oauth-consent.png') });
      await page.click('button[value=allow]');
      await expect.poll(() => landed, { timeout: 15_000 }).not.toBeNull();
      const back = new URL(landed!);
      expect(back.searchParams.get('state')).toBe('browser-state');
      expect(back.searchParams.get('iss')).toBe(server.origin);
      expect(back.searchParams.get('code')).toBeTruthy();
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
