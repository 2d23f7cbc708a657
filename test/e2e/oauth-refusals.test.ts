// Every way a credential is refused, over HTTP against the built server with auth.oauth on: each
// refusal reason of the OAuth resource server (JWTs forged with jose: another issuer, a foreign
// key reusing the issuer's kid, HS256 keyed with the issuer's public key as PEM, DER or JWK,
// alg none, bad claims, another audience, too large), of introspection, of pgmcp's own token
// check and of the login-session check, and of the HTTP edge itself. Each answer is a 401 (403
// for a missing scope) whose WWW-Authenticate a client can parse, names the resource metadata
// and says in error_description what the body says; the server stays healthy throughout.
import { createPublicKey, createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateKeyPair } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashBearer } from '../../src/state/secrets.js';
import { ErrorCodes } from '../../src/core/errors.js';
import { parseBearerChallenge, RFC6750_TEXT } from '../helpers/challenge.js';
import { startFakeIssuer, type FakeIssuer } from '../helpers/issuer.js';
import { realPostgres, throwawayDatabase, type RealPostgres } from '../helpers/postgres.js';
import {
  postRpc,
  rawHttp,
  rawInitialize,
  runPgmcp,
  serverEnv,
  spawnPgmcp,
  startHttpServer,
  type HttpServer,
  type RawResponse,
} from '../helpers/server.js';

const info = await realPostgres('test/e2e/oauth-refusals.test.ts');
const PASSWORD = 'correct horse battery';

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

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWT with any header, signed with HMAC-SHA256 under `secret` (the key-confusion attack). */
function hs256(header: Record<string, unknown>, claims: Record<string, unknown>, secret: Buffer) {
  const head = `${b64({ ...header, alg: 'HS256' })}.${b64(claims)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

describe.skipIf(!info)('refused credentials, over HTTP', () => {
  const pgInfo = info as RealPostgres;
  const state = throwawayDatabase(pgInfo, 'pgmcp_oauth_refusals');
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-oauth-refusals-'));
  let idp: FakeIssuer;
  let stranger: FakeIssuer;
  let server: HttpServer;
  let small: HttpServer;
  let env: Record<string, string>;

  /** The answer must be a well-formed refusal; returns the challenge's parameters. */
  const refused = (
    res: RawResponse,
    name: string,
    expected: { status?: 401 | 403; error?: string; code?: string; origin?: string } = {},
  ): Record<string, string> => {
    const status = expected.status ?? 401;
    expect(res.status, `${name}: ${res.text}`).toBe(status);
    const params = parseBearerChallenge(res.headers['www-authenticate']);
    expect(params, `${name}: ${String(res.headers['www-authenticate'])}`).not.toBeNull();
    const origin = expected.origin ?? server.origin;
    expect(params!.resource_metadata, name).toBe(
      `${origin}/.well-known/oauth-protected-resource/mcp`,
    );
    const error = expected.error ?? 'invalid_token';
    if (error === 'missing') {
      expect(params!.error, name).toBeUndefined();
      return params!;
    }
    expect(params!.error, name).toBe(error);
    const description = params!.error_description;
    expect(description, name).toMatch(RFC6750_TEXT);
    const body = res.json as { error: string | { message: string; data?: { code?: string } } };
    const message = typeof body.error === 'string' ? body.error : body.error.message;
    expect(description, name).toBe(message);
    if (expected.code && typeof body.error !== 'string') {
      expect(body.error.data?.code, name).toBe(expected.code);
    }
    return params!;
  };

  beforeAll(async () => {
    [idp, stranger] = await Promise.all([
      startFakeIssuer({ path: '/realms/team' }),
      startFakeIssuer(),
    ]);
    const config = join(root, 'pgmcp.yaml');
    writeFileSync(
      config,
      [
        'auth:',
        '  required: true',
        '  cacheTtlMs: 0',
        '  oauth:',
        '    requireAuthorization: true',
        `    authorizationServers: ["${idp.issuer}"]`,
        '    scopesSupported: [analyst, counter]',
        `    introspection: { url: "${idp.issuer}/introspect" }`,
        '    jwks: { timeoutMs: 3000 }',
        'tools:',
        '  count_rows:',
        '    roles: [counter]',
        '',
      ].join('\n'),
    );
    // Without introspection, and with a small token limit.
    const smallConfig = join(root, 'small.yaml');
    writeFileSync(
      smallConfig,
      [
        'auth:',
        '  oauth:',
        '    requireAuthorization: true',
        `    authorizationServers: ["${idp.issuer}"]`,
        '    maxTokenBytes: 512',
        '',
      ].join('\n'),
    );
    env = serverEnv({ PGMCP_LOG_LEVEL: 'warn', PGMCP_STATE_URL: state.url });
    for (const user of ['bob', 'carol']) {
      const add = spawnPgmcp(['user', 'add', user, '--role', 'analyst'], { env, stdin: 'pipe' });
      add.process.stdin!.end(`${PASSWORD}\n`);
      expect((await add.exited).code, add.stderr()).toBe(0);
    }
    [server, small] = await Promise.all([
      startHttpServer(['--database', pgInfo.url, '--config', config], { env }),
      startHttpServer(['--database', pgInfo.url, '--config', smallConfig], { env }),
    ]);
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await small?.stop();
    await idp?.close();
    await stranger?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** POST /mcp and GET /api/databases with this bearer token: both must refuse it alike. */
  const bothWays = async (
    name: string,
    token: string,
    expected: { code?: string; description?: RegExp } = {},
  ) => {
    const headers = { authorization: `Bearer ${token}` };
    const mcp = await postRpc(server.url, INIT, headers);
    const params = refused(mcp, `${name} (/mcp)`, expected);
    if (expected.description) expect(params.error_description, name).toMatch(expected.description);
    const api = await rawHttp(`${server.origin}/api/databases`, { headers });
    refused(api, `${name} (/api)`, expected);
    expect(mcp.text).not.toContain(token);
    expect(api.text).not.toContain(token);
    expect(String(mcp.headers['www-authenticate'])).not.toContain(token);
  };

  /** JWTs forged or unacceptable. */
  const forgedJwts = async () => {
    const resource = server.url;
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: idp.issuer, aud: resource, sub: 'mallory', scope: 'analyst' };
    const published = idp.publicJwk();
    const publicKey = createPublicKey({ key: published, format: 'jwk' });
    const pem = Buffer.from(publicKey.export({ type: 'spki', format: 'pem' }) as string);
    const der = publicKey.export({ type: 'spki', format: 'der' });
    const jwkText = Buffer.from(JSON.stringify(published));
    const { privateKey: foreignKey } = await generateKeyPair('ES256');
    const forged: [string, string, string, RegExp][] = [
      [
        'another issuer',
        await stranger.mint({ aud: resource }),
        ErrorCodes.OAUTH_TOKEN_INVALID,
        /issuer is not trusted/,
      ],
      [
        "a foreign key reusing the issuer's kid",
        await idp.mint({ aud: resource }, { key: foreignKey }),
        ErrorCodes.OAUTH_TOKEN_INVALID,
        /signature does not verify/,
      ],
      [
        'a foreign key under an unknown kid, naming the issuer',
        await idp.mint({ aud: resource }, { key: foreignKey, kid: 'not-published' }),
        ErrorCodes.OAUTH_TOKEN_INVALID,
        /unknown key/,
      ],
      ...(
        [
          ['PEM', pem],
          ['DER', der],
          ['JWK', jwkText],
        ] as const
      ).map(([form, secret]): [string, string, string, RegExp] => [
        `HS256 keyed with the issuer's public key (${form})`,
        hs256({ kid: published.kid, typ: 'at+jwt' }, { ...claims, exp: now + 300 }, secret),
        ErrorCodes.OAUTH_TOKEN_INVALID,
        /signing algorithm is not accepted/,
      ]),
      [
        'alg none',
        `${b64({ alg: 'none' })}.${b64({ ...claims, exp: now + 300 })}.AAAA`,
        ErrorCodes.OAUTH_TOKEN_INVALID,
        /signing algorithm is not accepted/,
      ],
      [
        'an unknown algorithm',
        `${b64({ alg: 'XY999' })}.${b64({ ...claims, exp: now + 300 })}.AAAA`,
        ErrorCodes.OAUTH_TOKEN_INVALID,
        /signing algorithm is not accepted/,
      ],
      [
        'an unknown critical header',
        `${b64({ alg: 'ES256', crit: ['x-pgmcp'], 'x-pgmcp': 1 })}.${b64({ ...claims, exp: now + 300 })}.AAAA`,
        ErrorCodes.OAUTH_TOKEN_INVALID,
        /signing algorithm is not accepted/,
      ],
      ['not a JWT inside', 'aaa.bbb.ccc', ErrorCodes.OAUTH_TOKEN_INVALID, /not a well-formed JWT/],
      [
        'no exp claim',
        await idp.mint({ aud: resource }, { noExp: true }),
        ErrorCodes.OAUTH_TOKEN_INVALID,
        /exp claim is not acceptable/,
      ],
      [
        'expired',
        await idp.mint({ aud: resource, exp: now - 3600 }),
        ErrorCodes.OAUTH_TOKEN_EXPIRED,
        /expired/,
      ],
      [
        'not yet valid',
        await idp.mint({ aud: resource, nbf: now + 3600 }),
        ErrorCodes.OAUTH_TOKEN_EXPIRED,
        /not valid yet/,
      ],
      [
        'another audience',
        await idp.mint({ aud: 'https://elsewhere.example/mcp' }),
        ErrorCodes.OAUTH_WRONG_AUDIENCE,
        /another resource/,
      ],
    ];
    for (const [name, token, code, description] of forged) {
      await bothWays(name, token, { code, description });
    }
    // The issuer's own token still works: nothing above broke the server or its key cache.
    const good = await postRpc(server.url, INIT, {
      authorization: `Bearer ${await idp.mint({ aud: resource })}`,
    });
    expect(good.status).toBe(200);
  };

  /** Opaque tokens introspection does not vouch for. */
  const opaqueTokens = async () => {
    const exp = Math.floor(Date.now() / 1000) + 300;
    idp.opaque.set('opaque-foreign', { active: true, sub: 'x', aud: 'https://x.example', exp });
    idp.opaque.set('opaque-old', { active: true, sub: 'x', aud: server.url, exp: exp - 7200 });
    idp.opaque.set('opaque-good', { active: true, sub: 'x', aud: server.url, exp });
    await bothWays('inactive', 'opaque-inactive', {
      code: ErrorCodes.OAUTH_TOKEN_INVALID,
      description: /not active/,
    });
    await bothWays('introspected for another resource', 'opaque-foreign', {
      code: ErrorCodes.OAUTH_WRONG_AUDIENCE,
    });
    await bothWays('introspected as expired', 'opaque-old', {
      code: ErrorCodes.OAUTH_TOKEN_EXPIRED,
    });
    expect((await postRpc(server.url, INIT, { authorization: 'Bearer opaque-good' })).status).toBe(
      200,
    );
  };

  /** Pgmcp's own tokens: unknown, expired, revoked. */
  const apiTokens = async () => {
    const made = async (args: string[]) => {
      const run = await runPgmcp(['token', 'create', '--json', ...args], {
        env,
        timeoutMs: 60_000,
      });
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as { token: string; id: string };
    };
    const [short, revoked] = await Promise.all([
      made(['--name', 'short-lived', '--expires', '1s']),
      made(['--name', 'revoked-one']),
    ]);
    const revoke = await runPgmcp(['token', 'revoke', revoked.id], { env, timeoutMs: 60_000 });
    expect(revoke.code, revoke.stderr).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const unknown = `pgmcp_${randomBytes(32).toString('base64url').slice(0, 43)}`;
    for (const [name, token] of [
      ['unknown API token', unknown],
      ['expired API token', short.token],
      ['revoked API token', revoked.token],
    ]) {
      await bothWays(name!, token!, { description: /not valid/ });
    }
  };

  /** Login sessions: unknown, ended, expired, of a disabled user. */
  const loginSessions = async () => {
    const login = async (username = 'bob') => {
      const res = await rawHttp(`${server.origin}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: PASSWORD }),
      });
      expect(res.status, res.text).toBe(200);
      return (res.json as { session_token: string }).session_token;
    };
    const ended = await login();
    const out = await rawHttp(`${server.origin}/api/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ended}` },
    });
    expect(out.status, out.text).toBeLessThan(300);
    const expired = await login();
    const ofDisabled = await login('carol');
    // Straight in the state database: a session's lifetime is at least a minute, and disabling
    // a user through the CLI ends their sessions (then they are merely unknown).
    const db = new pg.Client({ connectionString: state.url });
    await db.connect();
    try {
      await db.query(
        `UPDATE pgmcp.sessions SET expires_at = now() - interval '1 minute' WHERE token_hash = $1`,
        [hashBearer(expired)],
      );
      await db.query(`UPDATE pgmcp.users SET disabled = true WHERE username = 'carol'`);
    } finally {
      await db.end();
    }
    const unknown = `pgmcps_${randomBytes(32).toString('base64url').slice(0, 43)}`;
    for (const [name, token] of [
      ['unknown session', unknown],
      ['ended session', ended],
      ['expired session', expired],
      ["disabled user's session", ofDisabled],
    ]) {
      await bothWays(name!, token!, { description: /not valid/ });
    }
  };

  /** A malformed header, a token in the URL, an oversized token, no token. */
  const edgeRefusals = async () => {
    const mcp = (headers: Record<string, string>, url = server.url) => postRpc(url, INIT, headers);
    refused(await mcp({ authorization: 'Basic YWxpY2U6c2VjcmV0' }), 'basic', {
      error: 'invalid_request',
    });
    refused(await mcp({ authorization: 'Bearer a b' }), 'two words', { error: 'invalid_request' });
    refused(await mcp({}, `${server.url}?access_token=abc`), 'token in the URL', {
      error: 'invalid_request',
      code: ErrorCodes.OAUTH_TOKEN_IN_QUERY,
    });
    refused(await mcp({ authorization: `Bearer ${'x'.repeat(9_000)}` }), 'oversized header', {
      code: ErrorCodes.OAUTH_TOKEN_TOO_LARGE,
    });
    refused(await mcp({}), 'no token', { error: 'missing' });
    const api = await rawHttp(`${server.origin}/api/databases`);
    refused(api, 'no token (/api)', { error: 'missing' });
  };

  /** Without introspection and with a small token limit. */
  const smallServer = async () => {
    const on = { origin: small.origin };
    const big = await idp.mint({ aud: small.url, pad: 'x'.repeat(600) });
    refused(
      await postRpc(small.url, INIT, { authorization: `Bearer ${big}` }),
      'over maxTokenBytes',
      {
        ...on,
        code: ErrorCodes.OAUTH_TOKEN_TOO_LARGE,
      },
    );
    const opaque = refused(
      await postRpc(small.url, INIT, { authorization: 'Bearer opaque-anything' }),
      'opaque without introspection',
      { ...on, code: ErrorCodes.OAUTH_TOKEN_INVALID },
    );
    expect(opaque.error_description).toMatch(/not valid/);
  };

  /** A missing role: 403 insufficient_scope on /mcp and /api. */
  const missingRole = async () => {
    const token = await idp.mint({ aud: server.url, scope: 'analyst' });
    const { headers } = await rawInitialize(
      server.url,
      '2025-11-25',
      {},
      { authorization: `Bearer ${token}` },
    );
    const call = await postRpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'count_rows', arguments: { table: 'x' } },
      },
      headers,
    );
    expect(call.status).toBe(403);
    const params = parseBearerChallenge(call.headers['www-authenticate']);
    expect(params).toMatchObject({ error: 'insufficient_scope', scope: 'counter' });
    expect(params!.error_description).toMatch(RFC6750_TEXT);
    const admin = await rawHttp(`${server.origin}/api/admin/tokens`, {
      headers: { authorization: `Bearer ${token}` },
    });
    refused(admin, 'admin route', {
      status: 403,
      error: 'insufficient_scope',
      code: ErrorCodes.OAUTH_INSUFFICIENT_SCOPE,
    });
  };

  it('answers every refusal reason with 401 (403 for a missing scope) and a challenge a client can read', async () => {
    await forgedJwts();
    await opaqueTokens();
    await apiTokens();
    await loginSessions();
    await edgeRefusals();
    await smallServer();
    await missingRole();
  }, 120_000);

  it('tells the SDK client 401, not a server failure, for a forged token', async () => {
    const published = idp.publicJwk();
    const pem = Buffer.from(
      createPublicKey({ key: published, format: 'jwk' }).export({
        type: 'spki',
        format: 'pem',
      }) as string,
    );
    const now = Math.floor(Date.now() / 1000);
    const token = hs256(
      { kid: published.kid },
      { iss: idp.issuer, aud: server.url, sub: 'mallory', exp: now + 300 },
      pem,
    );
    const client = new Client({ name: 'refusals', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    const failure = await client.connect(transport).then(
      () => null,
      (error: unknown) => error as Error,
    );
    await client.close().catch(() => undefined);
    // The SDK's StreamableHTTPError carries the HTTP status as its code.
    expect(failure).not.toBeNull();
    expect((failure as Error & { code?: number }).code, String(failure)).toBe(401);
    expect(String(failure?.message)).toContain('signing algorithm is not accepted');
  });

  it('stays healthy after all of it', async () => {
    for (const target of [server, small]) {
      const health = await rawHttp(`${target.origin}/health`);
      expect(health.status).toBe(200);
    }
    expect(server.stderr()).not.toMatch(/ERR_INVALID_CHAR|http request failed/);
    expect(small.stderr()).not.toMatch(/ERR_INVALID_CHAR|http request failed/);
  });
});
