// The OAuth resource server against a real (loopback) issuer: discovery, JWKS caching and
// rotation, every claim check, refused algorithms, an issuer that is slow or down, and RFC 7662
// introspection for opaque tokens.
import { createHmac } from 'node:crypto';
import { generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createResourceServer,
  type OAuthSettings,
  type ResourceServer,
} from '../../src/auth/oauth/resource-server.js';
import type { AuthFailure } from '../../src/auth/index.js';
import { configSchema } from '../../src/config/schema.js';
import { ErrorCodes } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import { startFakeIssuer, type FakeIssuer } from '../helpers/issuer.js';

const RESOURCE = 'http://127.0.0.1:8080/mcp';
const context = { resource: RESOURCE, origin: 'http://127.0.0.1:8080' };

function settings(oauth: Record<string, unknown>): OAuthSettings {
  return configSchema.parse({ auth: { oauth } }).auth.oauth;
}

const failed = (value: Principal | AuthFailure): AuthFailure => {
  expect('reason' in value, JSON.stringify(value)).toBe(true);
  return value as AuthFailure;
};
const principal = (value: Principal | AuthFailure): Principal => {
  expect('reason' in value, JSON.stringify(value)).toBe(false);
  return value as Principal;
};

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('OAuth resource server', () => {
  let idp: FakeIssuer;
  let rs: ResourceServer;

  beforeAll(async () => {
    idp = await startFakeIssuer({ path: '/realms/pgmcp', defaultAudience: RESOURCE });
    rs = createResourceServer({
      settings: settings({
        authorizationServers: [idp.issuer],
        claims: { roles: 'realm_access.roles', pgRole: 'pg_role', tenantId: 'tid' },
        scopeRoles: { 'mcp:admin': ['admin'] },
        jwks: { timeoutMs: 5000, cooldownSeconds: 0 },
      }),
    });
  });
  afterAll(async () => {
    await idp.close();
  });

  it('turns a valid token into a principal: scopes and claims to roles, user, tenant, pgRole', async () => {
    const token = await idp.mint({
      sub: 'alice',
      scope: 'analyst mcp:admin',
      tid: 'acme',
      pg_role: 'reader',
      realm_access: { roles: ['ops', 'not a role!'] },
    });
    const p = principal(await rs.verify(token, context));
    expect(p.kind).toBe('oauth');
    expect(p.userId).toBe('alice');
    expect(p.tenantId).toBe('acme');
    expect(p.pgRole).toBe('reader');
    expect([...p.roles].sort()).toEqual(['admin', 'analyst', 'ops']);
    expect(p.scopes).toEqual(['analyst', 'mcp:admin']);
  });

  it('accepts the audience in its canonical forms and refuses tokens for another resource', async () => {
    const upper = await idp.mint({ aud: 'HTTP://127.0.0.1:8080/mcp/' });
    principal(await rs.verify(upper, context));
    const list = await idp.mint({ aud: ['https://other.example', RESOURCE] });
    principal(await rs.verify(list, context));
    for (const aud of [
      'https://other.example/mcp',
      'http://127.0.0.1:8080/mcp/v2',
      'http://127.0.0.1:9090/mcp',
    ]) {
      const f = failed(await rs.verify(await idp.mint({ aud }), context));
      expect(f.reason).toBe('wrong_audience');
      expect(f.code).toBe(ErrorCodes.OAUTH_WRONG_AUDIENCE);
    }
  });

  it('enforces exp and nbf with a small skew, and iss', async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = failed(await rs.verify(await idp.mint({ exp: now - 120 }), context));
    expect(expired.code).toBe(ErrorCodes.OAUTH_TOKEN_EXPIRED);
    principal(await rs.verify(await idp.mint({ exp: now - 5 }), context)); // within 30 s skew
    const early = failed(await rs.verify(await idp.mint({ nbf: now + 600 }), context));
    expect(early.code).toBe(ErrorCodes.OAUTH_TOKEN_EXPIRED);
    const foreign = failed(
      await rs.verify(await idp.mint({ iss: 'https://evil.example' }), context),
    );
    expect(foreign.description).toMatch(/issuer is not trusted/);
  });

  it('refuses alg none, HS256 keyed with the public key, unknown algorithms and forged signatures', async () => {
    const claims = {
      iss: idp.issuer,
      aud: RESOURCE,
      sub: 'x',
      exp: Math.floor(Date.now() / 1000) + 60,
    };
    const none = `${b64({ alg: 'none' })}.${b64(claims)}.`;
    expect(failed(await rs.verify(none, context)).reason).not.toBe(undefined);
    const noneSigned = `${b64({ alg: 'none' })}.${b64(claims)}.AAAA`;
    expect(failed(await rs.verify(noneSigned, context)).code).toBe(ErrorCodes.OAUTH_TOKEN_INVALID);
    // The classic confusion attack: the issuer's public key used as an HMAC secret.
    const jwks = (await (await fetch(`${idp.issuer}/jwks`)).json()) as { keys: unknown[] };
    const head = b64({ alg: 'HS256', kid: (jwks.keys[0] as { kid: string }).kid });
    const body = b64(claims);
    const mac = createHmac('sha256', JSON.stringify(jwks.keys[0]))
      .update(`${head}.${body}`)
      .digest('base64url');
    expect(failed(await rs.verify(`${head}.${body}.${mac}`, context)).code).toBe(
      ErrorCodes.OAUTH_TOKEN_INVALID,
    );
    const weird = `${b64({ alg: 'XY999' })}.${body}.AAAA`;
    expect(failed(await rs.verify(weird, context)).description).toMatch(/algorithm/);
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await idp.mint({}, { key: privateKey });
    expect(failed(await rs.verify(forged, context)).code).toBe(ErrorCodes.OAUTH_TOKEN_INVALID);
    const rs512 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS512' })
      .sign(new Uint8Array(64));
    expect(failed(await rs.verify(rs512, context)).code).toBe(ErrorCodes.OAUTH_TOKEN_INVALID);
  });

  it('fetches the key set again when a token names a new key id (rotation)', async () => {
    principal(await rs.verify(await idp.mint(), context));
    const before = idp.hits.get('/realms/pgmcp/jwks') ?? 0;
    await idp.rotate();
    principal(await rs.verify(await idp.mint(), context));
    expect(idp.hits.get('/realms/pgmcp/jwks')).toBe(before + 1);
    const unknownKid = failed(await rs.verify(await idp.mint({}, { kid: 'nope' }), context));
    expect(unknownKid.description).toMatch(/unknown key/);
  });

  it('refuses oversized tokens unread, and opaque tokens when no introspection is configured', async () => {
    expect(failed(await rs.verify('a'.repeat(9000), context)).code).toBe(
      ErrorCodes.OAUTH_TOKEN_TOO_LARGE,
    );
    expect(failed(await rs.verify('opaque-token-value', context)).reason).toBe('unknown');
  });
});

describe('an issuer that is slow, down or misconfigured', () => {
  it('answers unavailable within the time limit, then at once, and uses cached keys when it goes down', async () => {
    const idp = await startFakeIssuer({ defaultAudience: RESOURCE });
    try {
      const rs = createResourceServer({
        settings: settings({
          authorizationServers: [idp.issuer],
          jwks: { timeoutMs: 300, cacheSeconds: 10 },
        }),
      });
      const token = await idp.mint();
      idp.mode = 'slow';
      const started = Date.now();
      const slow = failed(await rs.verify(token, context));
      expect(slow.reason).toBe('unavailable');
      expect(slow.code).toBe(ErrorCodes.OAUTH_ISSUER_UNAVAILABLE);
      expect(Date.now() - started).toBeLessThan(3_000);
      // Remembered: the second answer asks the issuer nothing (no second wait).
      const asked = [...idp.hits.values()].reduce((a, b) => a + b, 0);
      expect(failed(await rs.verify(token, context)).reason).toBe('unavailable');
      expect([...idp.hits.values()].reduce((a, b) => a + b, 0)).toBe(asked);

      // A fresh resource server that got the keys while the issuer was up keeps using them.
      idp.mode = 'ok';
      const warm = createResourceServer({
        settings: settings({
          authorizationServers: [idp.issuer],
          jwks: { timeoutMs: 5000, cacheSeconds: 10 },
        }),
      });
      principal(await warm.verify(token, context));
      idp.mode = 'error';
      principal(await warm.verify(token, context));
    } finally {
      await idp.close();
    }
  });

  it('answers unavailable at once for an issuer that is not listening', async () => {
    const idp = await startFakeIssuer({ defaultAudience: RESOURCE });
    const token = await idp.mint();
    const issuer = idp.issuer;
    await idp.close();
    const rs = createResourceServer({ settings: settings({ authorizationServers: [issuer] }) });
    const started = Date.now();
    expect(failed(await rs.verify(token, context)).reason).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('finds keys through OpenID discovery under the issuer path, and checks the metadata issuer', async () => {
    const idp = await startFakeIssuer({
      path: '/tenant',
      metadata: 'openid',
      defaultAudience: RESOURCE,
    });
    try {
      const rs = createResourceServer({
        settings: settings({ authorizationServers: [idp.issuer] }),
      });
      principal(await rs.verify(await idp.mint(), context));
      expect(idp.hits.get('/.well-known/oauth-authorization-server/tenant')).toBe(1);
      expect(idp.hits.get('/tenant/.well-known/openid-configuration')).toBe(1);
      // Configured with a trailing slash, the metadata names another issuer: refused.
      const strict = createResourceServer({
        settings: settings({ authorizationServers: [`${idp.issuer}/`] }),
      });
      const token = await idp.mint({ iss: `${idp.issuer}/` });
      expect(failed(await strict.verify(token, context)).reason).toBe('unavailable');
    } finally {
      await idp.close();
    }
  });

  it('refuses issuers that are not https outside loopback (configuration)', () => {
    expect(() => settings({ authorizationServers: ['http://idp.example.com'] })).toThrow(/https/);
    expect(() =>
      settings({ authorizationServers: ['http://localhost:9000/realms/x'] }),
    ).not.toThrow();
  });
});

describe('RFC 7662 introspection of opaque tokens', () => {
  it('accepts an active token for this resource, caches it, refuses inactive or foreign ones', async () => {
    const idp = await startFakeIssuer();
    try {
      const rs = createResourceServer({
        settings: settings({
          introspection: {
            url: `${idp.issuer}/introspect`,
            clientId: 'pgmcp',
            clientSecretEnv: 'SECRET_X',
          },
        }),
        env: { SECRET_X: 's3cret' },
      });
      const exp = Math.floor(Date.now() / 1000) + 300;
      idp.opaque.set('opaque-good', { sub: 'bob', scope: 'analyst', aud: RESOURCE, exp });
      idp.opaque.set('opaque-other', {
        sub: 'bob',
        scope: 'analyst',
        aud: 'https://x.example',
        exp,
      });
      const p = principal(await rs.verify('opaque-good', context));
      expect(p.userId).toBe('bob');
      expect(p.roles).toEqual(['analyst']);
      principal(await rs.verify('opaque-good', context));
      expect(idp.hits.get('/introspect')).toBe(1);
      expect(failed(await rs.verify('opaque-other', context)).reason).toBe('wrong_audience');
      expect(failed(await rs.verify('opaque-unknown', context)).reason).toBe('unknown');
      await idp.close();
      expect(failed(await rs.verify('opaque-fresh', context)).reason).toBe('unavailable');
    } finally {
      await idp.close().catch(() => undefined);
    }
  });
});
