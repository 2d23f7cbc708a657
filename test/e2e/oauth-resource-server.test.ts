// pgmcp as an OAuth resource server behind an external issuer (a loopback IdP speaking the real
// wire formats), end to end: the SDK's OAuth client finds the issuer from the 401, registers,
// runs PKCE and calls tools; RFC 9728 metadata is public, challenges point at it, a missing role
// asks for its scope (403 step-up); bad headers, tokens in the URL, oversized, foreign and
// expired tokens get 401, an unreachable issuer 503 at once; pgmcp's own tokens keep working.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/errors.js';
import { startFakeIssuer, type FakeIssuer } from '../helpers/issuer.js';
import { connectWithOAuth, MemoryOAuthProvider } from '../helpers/oauth-client.js';
import { realPostgres, throwawayDatabase, type RealPostgres } from '../helpers/postgres.js';
import {
  postRpc,
  rawHttp,
  rawInitialize,
  runPgmcp,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const info = await realPostgres('test/e2e/oauth-resource-server.test.ts');

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'x', version: '1' },
  },
};

describe.skipIf(!info)('OAuth resource server, end to end', () => {
  const pgInfo = info as RealPostgres;
  const state = throwawayDatabase(pgInfo, 'pgmcp_oauth_rs');
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-oauth-rs-'));
  let idp: FakeIssuer;
  let slowIdp: FakeIssuer;
  let server: HttpServer;
  let env: Record<string, string>;
  let resource: string;
  let prmUrl: string;

  beforeAll(async () => {
    idp = await startFakeIssuer({ path: '/realms/team' });
    slowIdp = await startFakeIssuer();
    slowIdp.mode = 'slow';
    const config = join(root, 'pgmcp.yaml');
    writeFileSync(
      config,
      [
        'auth:',
        '  oauth:',
        '    requireAuthorization: true',
        `    authorizationServers: ["${idp.issuer}", "${slowIdp.issuer}"]`,
        '    scopesSupported: [analyst, counter]',
        '    jwks: { timeoutMs: 1500 }',
        'tools:',
        '  count_rows:',
        '    roles: [counter]',
        'rateLimit:',
        '  routes: { api: 1 }',
        '',
      ].join('\n'),
    );
    env = serverEnv({ PGMCP_LOG_LEVEL: 'warn', PGMCP_STATE_URL: state.url });
    server = await startHttpServer(['--database', pgInfo.url, '--config', config], { env });
    resource = server.url;
    prmUrl = `${server.origin}/.well-known/oauth-protected-resource/mcp`;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await idp?.close();
    await slowIdp?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('serves RFC 9728 metadata to anyone, at the path-inserted and root forms, CORS-readable and unlimited', async () => {
    for (const url of [prmUrl, `${server.origin}/.well-known/oauth-protected-resource`]) {
      for (let i = 0; i < 4; i++) {
        const res = await rawHttp(url, { headers: { origin: 'https://claude.ai' } });
        expect(res.status).toBe(200);
        expect(res.headers['access-control-allow-origin']).toBe('*');
        expect(res.json).toMatchObject({
          resource,
          authorization_servers: [idp.issuer, slowIdp.issuer],
          scopes_supported: ['analyst', 'counter'],
          bearer_methods_supported: ['header'],
        });
      }
    }
    // The limiter is live elsewhere: /api has a budget of one a minute.
    await rawHttp(`${server.origin}/api/user/info`);
    expect((await rawHttp(`${server.origin}/api/user/info`)).status).toBe(429);
  });

  it('answers 401 with a challenge naming the metadata and the scopes', async () => {
    const res = await postRpc(server.url, INIT);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(
      `Bearer realm="pgmcp", resource_metadata="${prmUrl}", scope="analyst counter"`,
    );
  });

  it('lets the SDK OAuth client discover, register, authorize with PKCE and call tools', async () => {
    const provider = new MemoryOAuthProvider({ scope: 'analyst' });
    const { client } = await connectWithOAuth(server.url, provider, async (url) => {
      expect(url.origin + url.pathname).toBe(`${idp.issuer}/authorize`);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('resource')).toBe(resource);
      const res = await fetch(url, { redirect: 'manual' });
      return new URL(res.headers.get('location')!);
    });
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('query_database');
      const result = await client.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT 41 + 1 AS n' },
      });
      expect(JSON.stringify(result.content)).toContain('42');
    } finally {
      await client.close();
    }
    expect(idp.hits.get('/realms/team/register')).toBe(1);
  });

  it('asks for the missing scope with 403 insufficient_scope (step-up)', async () => {
    const token = await idp.mint({ aud: resource, scope: 'analyst' });
    const { headers } = await rawInitialize(
      server.url,
      '2025-11-25',
      {},
      { authorization: `Bearer ${token}` },
    );
    const res = await postRpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'count_rows', arguments: { table: 'x' } },
      },
      headers,
    );
    expect(res.status).toBe(403);
    const challenge = res.headers['www-authenticate'] as string;
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="counter"');
    expect(challenge).toContain(`resource_metadata="${prmUrl}"`);
  });

  it('refuses bad input with 401 and its code, without echoing tokens', async () => {
    const now = Math.floor(Date.now() / 1000);
    const foreign = await idp.mint({ aud: 'https://elsewhere.example/mcp' });
    const expired = await idp.mint({ aud: resource, exp: now - 3600 });
    const cases: [string, Record<string, string>, string | null][] = [
      ['basic', { authorization: 'Basic YWxpY2U6c2VjcmV0' }, null],
      ['two words', { authorization: 'Bearer a b' }, null],
      [
        'oversized',
        { authorization: `Bearer ${'x'.repeat(9_000)}` },
        ErrorCodes.OAUTH_TOKEN_TOO_LARGE,
      ],
      ['garbage jwt', { authorization: 'Bearer aaa.bbb.ccc' }, ErrorCodes.OAUTH_TOKEN_INVALID],
      ['foreign audience', { authorization: `Bearer ${foreign}` }, ErrorCodes.OAUTH_WRONG_AUDIENCE],
      ['expired', { authorization: `Bearer ${expired}` }, ErrorCodes.OAUTH_TOKEN_EXPIRED],
    ];
    for (const [name, headers, code] of cases) {
      const res = await postRpc(server.url, INIT, headers);
      expect(res.status, name).toBe(401);
      expect(res.headers['www-authenticate'], name).toContain(`resource_metadata="${prmUrl}"`);
      if (code) expect(res.json.error.data.code, name).toBe(code);
      expect(res.text).not.toContain(foreign);
      expect(res.text).not.toContain(expired);
    }
    const good = await idp.mint({ aud: resource });
    const inUrl = await postRpc(`${server.url}?access_token=${good}`, INIT);
    expect(inUrl.status).toBe(401);
    expect(inUrl.json.error.data.code).toBe(ErrorCodes.OAUTH_TOKEN_IN_QUERY);
    expect(inUrl.text).not.toContain(good);
  });

  it('answers 503 quickly when the issuer does not answer, and the server stays healthy', async () => {
    const token = await slowIdp.mint({ aud: resource });
    const started = Date.now();
    const res = await postRpc(server.url, INIT, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json.error.data.code).toBe(ErrorCodes.OAUTH_ISSUER_UNAVAILABLE);
    expect(Date.now() - started).toBeLessThan(6_000);
    const ok = await postRpc(server.url, INIT, {
      authorization: `Bearer ${await idp.mint({ aud: resource })}`,
    });
    expect(ok.status).toBe(200);
  });

  it("keeps pgmcp's own API tokens working beside OAuth", async () => {
    const run = await runPgmcp(['token', 'create', '--name', 'beside-oauth'], {
      env,
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const res = await postRpc(server.url, INIT, { authorization: `Bearer ${run.stdout.trim()}` });
    expect(res.status).toBe(200);
  });
});
