// /api/login, /api/logout, /api/user/info and /api/admin/* through Fastify's inject, against a
// real state database: PostgreSQL (a throwaway database per run) and the embedded PGlite. The
// app stands in for src/http with a small onRequest hook that sets request.principal from the
// bearer token, the way the HTTP layer does, so real tokens and sessions are exercised.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerApiRoutes } from '../../src/api/index.js';
import { createAuth, isAuthFailure, type Authenticator } from '../../src/auth/index.js';
import { createAuditLog, openStateDatabase, type StateDb } from '../../src/state/index.js';
import { ANONYMOUS, type Principal } from '../../src/core/principal.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { registerAuthenticateUser } from '../../src/tools/builtin/index.js';
import { createRegistry } from '../../src/tools/registry.js';
import { realPostgres, throwawayDatabase, type RealPostgres } from '../helpers/postgres.js';

const logger = pino({ level: 'silent' });
const FAST_SCRYPT = { N: 1024, r: 8, p: 1 };
const LOCKOUT = { maxFailures: 5, maxFailuresPerAddress: 20, windowSeconds: 60, lockSeconds: 60 };
const ADMIN_PASSWORD = 'admin-password-1';
// User info's answer to a caller that is not signed in (this app requires no sign-in).
const ANONYMOUS_INFO = { authenticated: false, sign_in_required: false };

function buildApp(auth: Authenticator): FastifyInstance {
  const app = Fastify({ logger: false });
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (request, reply) => {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    let principal: Principal = ANONYMOUS;
    if (match) {
      const found = await auth.authenticateBearer(match[1]!);
      if (!isAuthFailure(found)) principal = found;
    }
    request.principal = principal;
    // Only the 401 of a required route; roles are left to the handlers' own check, so these
    // tests see it work.
    if (request.routeOptions.config.auth === 'required' && principal.kind === 'anonymous') {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="test"')
        .send({ error: 'authentication required' });
    }
    return undefined;
  });
  registerApiRoutes(app, {
    auth,
    logger,
    clientAddress: (request) => String(request.headers['x-test-address'] ?? request.ip),
  });
  return app;
}

function scenarios(open: () => Promise<StateDb>): void {
  let db: StateDb;
  let auth: Authenticator;
  let app: FastifyInstance;
  let adminToken: string;
  let analystToken: string;
  const bodies: string[] = [];

  const call = async (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    options: { token?: string; body?: unknown; address?: string; raw?: string } = {},
  ): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = {};
    if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
    if (options.address) headers['x-test-address'] = options.address;
    if (options.body !== undefined || options.raw !== undefined)
      headers['content-type'] = 'application/json';
    const response = await app.inject({
      method,
      url,
      headers,
      ...(options.raw !== undefined
        ? { payload: options.raw }
        : options.body !== undefined
          ? { payload: JSON.stringify(options.body) }
          : {}),
    });
    bodies.push(response.body);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    return response;
  };

  const login = async (username: string, password: string, address = '10.1.0.1') => {
    const response = await call('POST', '/api/login', { body: { username, password }, address });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { session_token: string; expires_at: string };
  };

  beforeAll(async () => {
    db = await open();
    auth = createAuth(db, {
      sessionTtlSeconds: 3600,
      cacheTtlMs: 5_000,
      lockout: LOCKOUT,
      scrypt: FAST_SCRYPT,
      slowDown: { baseMs: 0, maxMs: 0 },
      audit: createAuditLog({ db, file: null, flushIntervalMs: 10 }),
    });
    await auth.users.add({ username: 'root', password: ADMIN_PASSWORD, roles: ['admin'] });
    await auth.users.add({ username: 'alice', password: 'alice-password', roles: ['analyst'] });
    app = buildApp(auth);
    await app.ready();
    adminToken = (await login('root', ADMIN_PASSWORD)).session_token;
    analystToken = (await login('alice', 'alice-password')).session_token;
  });
  afterAll(async () => {
    await app?.close();
    await auth?.close();
    await db?.close();
  });

  it('login answers a session token and its expiry', async () => {
    const session = await login('alice', 'alice-password');
    expect(session.session_token).toMatch(/^pgmcps_/);
    expect(new Date(session.expires_at).toISOString()).toBe(session.expires_at);
    expect(Date.parse(session.expires_at)).toBeGreaterThan(Date.now() + 3_500_000);
  });

  it('a wrong password and an unknown user get the same 401', async () => {
    const wrong = await call('POST', '/api/login', {
      body: { username: 'alice', password: 'not-her-password' },
      address: '10.2.0.1',
    });
    const unknown = await call('POST', '/api/login', {
      body: { username: 'nobody-here', password: 'whatever-1' },
      address: '10.2.0.2',
    });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual(unknown.json());
    expect(Object.keys(wrong.json())).toEqual(['error']);
    expect(wrong.body).not.toContain('not-her-password');
  });

  it('five failures lock a name, existing or not, with the same answer', async () => {
    await auth.users.add({ username: 'carol', password: 'carol-password' });
    const messages: Record<string, string> = {};
    for (const name of ['carol', 'ghost']) {
      for (let i = 0; i < 5; i++) {
        const failed = await call('POST', '/api/login', {
          body: { username: name, password: 'wrong-password' },
          address: `10.3.0.${i}`,
        });
        expect(failed.statusCode).toBe(401);
      }
      // The right password does not get through a lock either.
      const locked = await call('POST', '/api/login', {
        body: { username: name, password: 'carol-password' },
        address: '10.3.1.1',
      });
      expect(locked.statusCode).toBe(401);
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
      messages[name] = (locked.json() as { error: string }).error.replace(/\d+/g, 'N');
    }
    expect(messages['carol']).toMatch(/too many failed/i);
    expect(messages['carol']).toBe(messages['ghost']);
    await db.query("UPDATE pgmcp.lockouts SET locked_until = now() - interval '1 second'");
    await login('carol', 'carol-password');
  });

  it('one address failing for many names is locked as a whole', async () => {
    const address = '10.4.0.1';
    for (let i = 0; i < 20; i++) {
      await call('POST', '/api/login', {
        body: { username: `spray${i}`, password: 'wrong-password' },
        address,
      });
    }
    const locked = await call('POST', '/api/login', {
      body: { username: 'alice', password: 'alice-password' },
      address,
    });
    expect(locked.statusCode).toBe(401);
    expect(locked.json().error).toMatch(/too many failed/i);
    await login('alice', 'alice-password', '10.4.0.2');
  });

  it('login bodies are validated: 400 with {error}', async () => {
    for (const options of [
      { body: { username: 'alice' } },
      { body: { username: 'alice', password: 12345678 } },
      { body: { username: 'alice', password: 'alice-password', extra: 1 } },
      { body: [] },
      { raw: '{"username": "alice", "password": "secret-in-bad-json' },
    ]) {
      const response = await call('POST', '/api/login', options);
      expect(response.statusCode, response.body).toBe(400);
      expect(Object.keys(response.json())).toEqual(['error']);
      expect(response.body).not.toContain('secret-in-bad-json');
    }
  });

  it('a body that is not JSON is refused with {error}', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/login',
      headers: { 'content-type': 'text/plain' },
      payload: 'username=alice&password=alice-password',
    });
    expect(response.statusCode).toBe(415);
    expect(Object.keys(response.json())).toEqual(['error']);
    expect(response.body).not.toContain('alice-password');
  });

  it('logout ends the session; the token is refused afterwards', async () => {
    const { session_token } = await login('alice', 'alice-password');
    const info = await call('GET', '/api/user/info', { token: session_token });
    expect(info.json()).toMatchObject({ authenticated: true, username: 'alice' });
    const out = await call('POST', '/api/logout', { token: session_token });
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({ success: true });
    expect((await call('POST', '/api/logout', { token: session_token })).statusCode).toBe(401);
    expect((await call('GET', '/api/user/info', { token: session_token })).json()).toEqual(
      ANONYMOUS_INFO,
    );
    expect((await call('GET', '/api/admin/users', { token: session_token })).statusCode).toBe(401);
    // Logging out without a token is the hook's 401.
    expect((await call('POST', '/api/logout')).statusCode).toBe(401);
  });

  it('user info: anonymous, garbage and valid bearers never get an error', async () => {
    expect((await call('GET', '/api/user/info')).json()).toEqual(ANONYMOUS_INFO);
    for (const token of ['garbage', 'pgmcps_nope', 'pgmcp_' + 'x'.repeat(43)]) {
      const response = await call('GET', '/api/user/info', { token });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual(ANONYMOUS_INFO);
    }
    const garbageHeader = await app.inject({
      method: 'GET',
      url: '/api/user/info',
      headers: { authorization: 'Basic Zm9vOmJhcg==' },
    });
    expect(garbageHeader.json()).toEqual(ANONYMOUS_INFO);
    expect((await call('GET', '/api/user/info', { token: analystToken })).json()).toEqual({
      authenticated: true,
      username: 'alice',
      kind: 'user',
      roles: ['analyst'],
    });
  });

  it('admin tokens: create shows the secret once; list and revoke never do', async () => {
    const created = await call('POST', '/api/admin/tokens', {
      token: adminToken,
      body: {
        name: 'ci-bot',
        expires: '30d',
        roles: ['reader'],
        bind_database: 'shop',
        pg_role: 'shop_reader',
      },
      address: '10.5.0.1',
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.headers['cache-control']).toBe('no-store');
    const token = created.json() as Record<string, unknown> & { token: string; id: string };
    expect(token).toMatchObject({
      name: 'ci-bot',
      roles: ['reader'],
      bind_database: 'shop',
      pg_role: 'shop_reader',
      revoked_at: null,
    });
    expect(token.token).toMatch(/^pgmcp_/);
    expect(Date.parse(token['expires_at'] as string)).toBeGreaterThan(Date.now() + 29 * 86_400_000);

    // The new token works, and user info names it.
    expect((await call('GET', '/api/user/info', { token: token.token })).json()).toEqual({
      authenticated: true,
      username: 'ci-bot',
      kind: 'token',
      roles: ['reader'],
    });
    // An API token cannot be "logged out".
    expect((await call('POST', '/api/logout', { token: token.token })).statusCode).toBe(400);

    const list = await call('GET', '/api/admin/tokens', { token: adminToken });
    expect(list.statusCode).toBe(200);
    const listed = (list.json() as { tokens: Record<string, unknown>[] }).tokens;
    expect(listed.find((t) => t['id'] === token.id)).toMatchObject({ name: 'ci-bot' });
    expect(list.body).not.toContain(token.token);
    expect(list.body).not.toMatch(/hash/i);

    // Default lifetime and no roles.
    const plain = await call('POST', '/api/admin/tokens', {
      token: adminToken,
      body: { name: 'plain' },
    });
    expect(plain.statusCode).toBe(201);
    expect(Date.parse(plain.json().expires_at)).toBeGreaterThan(Date.now() + 89 * 86_400_000);

    const revoked = await call('DELETE', `/api/admin/tokens/${token['prefix'] as string}`, {
      token: adminToken,
    });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json().revoked_at).not.toBeNull();
    expect(revoked.body).not.toContain(token.token);
    expect((await call('GET', '/api/user/info', { token: token.token })).json()).toEqual(
      ANONYMOUS_INFO,
    );
    const active = await call('GET', '/api/admin/tokens?active=true', { token: adminToken });
    expect(active.json().tokens.map((t: { id: string }) => t.id)).not.toContain(token.id);

    await auth.audit.flush();
    const { rows } = await db.query<{
      event: string;
      principal_id: string;
      client_address: string;
    }>(
      "SELECT event, principal_id, client_address FROM pgmcp.audit WHERE event IN ('token_created', 'token_revoked') AND details->>'name' = 'ci-bot' ORDER BY id",
    );
    expect(rows.map((r) => r.event)).toEqual(['token_created', 'token_revoked']);
    expect(rows[0]).toMatchObject({ principal_id: 'root', client_address: '10.5.0.1' });
  });

  it('admin tokens: the store validation and conflicts come back as 4xx {error}', async () => {
    const cases: [unknown, number][] = [
      [{ name: 'bad name!' }, 400],
      [{ name: 'x', expires: 'tomorrow' }, 400],
      [{ name: 'x', roles: ['bad role'] }, 400],
      [{ name: 'x', roles: 'reader' }, 400],
      [{ name: 'x', role: ['reader'] }, 400],
      [{}, 400],
      [{ name: 'plain' }, 409],
    ];
    for (const [body, status] of cases) {
      const response = await call('POST', '/api/admin/tokens', { token: adminToken, body });
      expect(response.statusCode, JSON.stringify(body)).toBe(status);
      expect(Object.keys(response.json())).toEqual(['error']);
    }
    for (const [target, status] of [
      ['not-a-token', 400],
      ['pgmcp_zzzzzzzz', 404],
      ['00000000-0000-4000-8000-000000000000', 404],
    ] as const) {
      const response = await call('DELETE', `/api/admin/tokens/${target}`, { token: adminToken });
      expect(response.statusCode, target).toBe(status);
      expect(Object.keys(response.json())).toEqual(['error']);
    }
  });

  it('admin users: add, list, update, disable, change password, remove', async () => {
    const added = await call('POST', '/api/admin/users', {
      token: adminToken,
      body: { username: 'dave', password: 'dave-password', roles: ['ops'], pg_role: 'ops_pg' },
    });
    expect(added.statusCode, added.body).toBe(201);
    expect(added.json()).toMatchObject({
      username: 'dave',
      roles: ['ops'],
      pg_role: 'ops_pg',
      enabled: true,
    });
    // `name`, as the CLI calls it, works too.
    const byName = await call('POST', '/api/admin/users', {
      token: adminToken,
      body: { name: 'erin', password: 'erin-password' },
    });
    expect(byName.statusCode).toBe(201);

    const list = await call('GET', '/api/admin/users', { token: adminToken });
    const users = (list.json() as { users: { username: string }[] }).users;
    expect(users.map((u) => u.username)).toEqual(expect.arrayContaining(['dave', 'erin', 'root']));
    expect(list.body).not.toMatch(/scrypt|password/i);

    let session = (await login('dave', 'dave-password')).session_token;
    const updated = await call('PATCH', '/api/admin/users/dave', {
      token: adminToken,
      body: { roles: ['ops', 'reader'], pg_role: null },
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ roles: ['ops', 'reader'], pg_role: null });
    expect((await call('GET', '/api/user/info', { token: session })).json()).toMatchObject({
      roles: ['ops', 'reader'],
    });

    const disabled = await call('PATCH', '/api/admin/users/dave', {
      token: adminToken,
      body: { enabled: false },
    });
    expect(disabled.json()).toMatchObject({ enabled: false });
    expect((await call('GET', '/api/user/info', { token: session })).json()).toEqual(
      ANONYMOUS_INFO,
    );
    const refused = await call('POST', '/api/login', {
      body: { username: 'dave', password: 'dave-password' },
      address: '10.6.0.1',
    });
    expect(refused.statusCode).toBe(401);
    await call('PATCH', '/api/admin/users/dave', { token: adminToken, body: { enabled: true } });

    session = (await login('dave', 'dave-password', '10.6.0.2')).session_token;
    const changed = await call('PATCH', '/api/admin/users/dave', {
      token: adminToken,
      body: { password: 'new-dave-password' },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.body).not.toContain('new-dave-password');
    expect((await call('GET', '/api/user/info', { token: session })).json()).toEqual(
      ANONYMOUS_INFO,
    );
    await login('dave', 'new-dave-password', '10.6.0.3');

    const removed = await call('DELETE', '/api/admin/users/dave', { token: adminToken });
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toMatchObject({ username: 'dave' });
    expect((await call('DELETE', '/api/admin/users/dave', { token: adminToken })).statusCode).toBe(
      404,
    );

    await auth.audit.flush();
    const { rows } = await db.query<{ event: string }>(
      "SELECT event FROM pgmcp.audit WHERE details->>'username' = 'dave' AND principal_id = 'root' ORDER BY id",
    );
    expect(rows.map((r) => r.event)).toEqual([
      'user_added',
      'user_updated',
      'user_disabled',
      'user_enabled',
      'user_password_changed',
      'user_removed',
    ]);
  });

  it('admin users: validation errors, conflicts, and no changes half done', async () => {
    const cases: [string, string, unknown, number][] = [
      ['POST', '/api/admin/users', { username: 'frank', password: 'short' }, 400],
      ['POST', '/api/admin/users', { username: 'bad name', password: 'long-enough' }, 400],
      ['POST', '/api/admin/users', { password: 'long-enough' }, 400],
      ['POST', '/api/admin/users', { username: 'a', name: 'b', password: 'long-enough' }, 400],
      ['POST', '/api/admin/users', { username: 'alice', password: 'long-enough' }, 409],
      ['PATCH', '/api/admin/users/alice', {}, 400],
      ['PATCH', '/api/admin/users/alice', { enabled: 'no' }, 400],
      ['PATCH', '/api/admin/users/alice', { roles: ['admin'], password: 'short' }, 400],
      ['PATCH', '/api/admin/users/alice', { roles: ['bad role'] }, 400],
      ['PATCH', '/api/admin/users/nobody', { roles: ['x'] }, 404],
      ['PATCH', '/api/admin/users/root', { enabled: false }, 409],
      ['DELETE', '/api/admin/users/root', undefined, 409],
      ['PATCH', '/api/admin/users/root', { roles: ['ops'] }, 409],
    ];
    for (const [method, url, body, status] of cases) {
      const response = await call(method as 'POST', url, { token: adminToken, body });
      expect(response.statusCode, `${method} ${url} ${JSON.stringify(body)}`).toBe(status);
      expect(Object.keys(response.json())).toEqual(['error']);
    }
    expect((await auth.users.get('alice'))?.roles).toEqual(['analyst']);
  });

  it('admin routes: 401 anonymous, 403 without the admin role', async () => {
    const routes: [string, string, unknown][] = [
      ['GET', '/api/admin/tokens', undefined],
      ['POST', '/api/admin/tokens', { name: 'sneaky' }],
      // The role is checked before the body: no validation hints for outsiders.
      ['POST', '/api/admin/tokens', { bogus: 'field' }],
      ['DELETE', '/api/admin/tokens/pgmcp_abcdefgh', undefined],
      ['GET', '/api/admin/users', undefined],
      ['POST', '/api/admin/users', { username: 'sneaky', password: 'long-enough' }],
      ['PATCH', '/api/admin/users/alice', { roles: ['admin'] }],
      ['DELETE', '/api/admin/users/alice', undefined],
    ];
    for (const [method, url, body] of routes) {
      const anonymous = await call(method as 'GET', url, { body });
      expect(anonymous.statusCode, `${method} ${url}`).toBe(401);
      expect(anonymous.headers['www-authenticate']).toBeDefined();
      const analyst = await call(method as 'GET', url, { token: analystToken, body });
      expect(analyst.statusCode, `${method} ${url}`).toBe(403);
      expect(Object.keys(analyst.json())).toEqual(['error']);
    }
    expect(await auth.users.get('sneaky')).toBeNull();
    expect((await auth.users.get('alice'))?.roles).toEqual(['analyst']);
  });

  it('unknown /api paths are 404 {error}', async () => {
    const response = await call('GET', '/api/nope?token=secret-query', { token: adminToken });
    expect(response.statusCode).toBe(404);
    expect(response.body).not.toContain('secret-query');
  });

  it('authenticate_user, wired as the composition root does, signs in with the real store', async () => {
    const registry = createRegistry();
    registerAuthenticateUser(registry, {
      login: (username, password, clientAddress) =>
        auth.sessions.login(username, password, clientAddress),
    });
    const tool = registry.tool('authenticate_user')!.spec;
    const ctx = createFakeContext().ctx;
    const ok = await tool.call({ username: 'alice', password: 'alice-password' }, ctx);
    const session = ok.structuredContent as { session_token: string; expires_at: string };
    expect(session.session_token).toMatch(/^pgmcps_/);
    expect(
      (await call('GET', '/api/user/info', { token: session.session_token })).json(),
    ).toMatchObject({ authenticated: true, username: 'alice' });
    const wrong = await tool.call({ username: 'alice', password: 'wrong-password' }, ctx);
    const unknown = await tool.call({ username: 'nobody-at-all', password: 'wrong-password' }, ctx);
    expect(wrong.isError).toBe(true);
    expect(unknown).toEqual(wrong);
  });

  it('no answer ever carried a password or a stored hash', () => {
    const all = bodies.join('\n');
    for (const secret of [ADMIN_PASSWORD, 'alice-password', 'carol-password', 'dave-password']) {
      expect(all).not.toContain(secret);
    }
    expect(all).not.toMatch(/scrypt\$|token_hash|password_hash/);
  });
}

const info = await realPostgres('api auth on PostgreSQL');

describe.skipIf(!info)('api auth on PostgreSQL', () => {
  const pgInfo = info as RealPostgres;
  const { url } = throwawayDatabase(pgInfo, 'pgmcp_api');

  scenarios(() => openStateDatabase({ url, dataDir: '/nonexistent', logger }));
});

describe('api auth on the embedded database', () => {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-api-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  scenarios(() => openStateDatabase({ url: null, dataDir: join(root, 'data'), logger }));
});
