// A small external authorization server on loopback that speaks the real wire formats an IdP
// does (RFC 8414 / OpenID metadata, a JWKS, RFC 7591 registration, an authorization endpoint
// that approves at once, a token endpoint with PKCE, RFC 7662 introspection), so pgmcp's resource
// server and the SDK's OAuth client meet it as they would Keycloak or Auth0. Tests mint tokens
// with any claims, rotate its key, make it slow or take it down.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';

export interface FakeIssuer {
  readonly issuer: string;
  /** Requests seen, by path. */
  readonly hits: Map<string, number>;
  /** A signed access token (ES256 by default) with these claims over the defaults. */
  mint(
    claims?: JWTPayload,
    options?: { kid?: string; key?: CryptoKey; alg?: string; noExp?: boolean },
  ): Promise<string>;
  /** The current signing key's public half, as published (for forging tokens with it). */
  publicJwk(): JWK;
  /** A new signing key with a new kid, published at once. */
  rotate(): Promise<void>;
  /** 'ok', 'slow' (metadata and keys never answer), 'error' (500s). */
  mode: 'ok' | 'slow' | 'error';
  /** Opaque tokens the introspection endpoint knows. */
  readonly opaque: Map<string, Record<string, unknown>>;
  close(): Promise<void>;
}

interface Key {
  kid: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function newKey(): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = randomBytes(6).toString('hex');
  return {
    kid,
    privateKey,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
  };
}

export async function startFakeIssuer(
  options: { path?: string; metadata?: 'oauth' | 'openid'; defaultAudience?: string } = {},
): Promise<FakeIssuer> {
  const keys: Key[] = [await newKey()];
  const hits = new Map<string, number>();
  const opaque = new Map<string, Record<string, unknown>>();
  const codes = new Map<
    string,
    { challenge: string; redirect: string; resource: string | null; scope: string }
  >();
  const hung = new Set<ServerResponse>();
  let issuer = '';
  const path = options.path ?? '';

  const self: FakeIssuer = {
    get issuer() {
      return issuer;
    },
    hits,
    opaque,
    mode: 'ok',
    async mint(claims = {}, how = {}) {
      const key = keys[keys.length - 1]!;
      const now = Math.floor(Date.now() / 1000);
      const jwt = new SignJWT({ scope: 'analyst', ...claims })
        .setProtectedHeader({ alg: how.alg ?? 'ES256', kid: how.kid ?? key.kid, typ: 'at+jwt' })
        .setIssuer((claims.iss as string | undefined) ?? issuer)
        .setSubject((claims.sub as string | undefined) ?? 'user-1')
        .setAudience(
          (claims.aud as string | string[] | undefined) ?? options.defaultAudience ?? 'unset',
        )
        .setIssuedAt(now);
      if (!how.noExp) jwt.setExpirationTime((claims.exp as number | undefined) ?? now + 300);
      return jwt.sign(how.key ?? key.privateKey);
    },
    publicJwk() {
      return { ...keys[keys.length - 1]!.jwk };
    },
    async rotate() {
      keys.push(await newKey());
    },
    async close() {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const readBody = async (req: IncomingMessage): Promise<string> => {
    let text = '';
    for await (const chunk of req) text += chunk;
    return text;
  };

  const metadata = () => ({
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    introspection_endpoint: `${issuer}/introspect`,
    jwks_uri: `${issuer}/jwks`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: ['analyst', 'admin'],
  });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', issuer);
      hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
      const keyed = url.pathname.includes('well-known') || url.pathname.endsWith('/jwks');
      if (keyed && self.mode === 'slow') {
        hung.add(res); // never answered: the caller's time limit must end it
        return;
      }
      if (keyed && self.mode === 'error') return send(res, 500, { error: 'down' });
      const wellKnown =
        options.metadata === 'openid'
          ? `${path}/.well-known/openid-configuration`
          : `/.well-known/oauth-authorization-server${path}`;
      if (url.pathname === wellKnown) return send(res, 200, metadata());
      if (url.pathname === `${path}/jwks`) return send(res, 200, { keys: keys.map((k) => k.jwk) });
      if (url.pathname === `${path}/register` && req.method === 'POST') {
        const body = JSON.parse(await readBody(req)) as Record<string, unknown>;
        return send(res, 201, { ...body, client_id: `client-${randomBytes(4).toString('hex')}` });
      }
      if (url.pathname === `${path}/authorize`) {
        const q = url.searchParams;
        const code = randomBytes(12).toString('hex');
        codes.set(code, {
          challenge: q.get('code_challenge') ?? '',
          redirect: q.get('redirect_uri') ?? '',
          resource: q.get('resource'),
          scope: q.get('scope') ?? 'analyst',
        });
        const back = new URL(q.get('redirect_uri')!);
        back.searchParams.set('code', code);
        if (q.get('state')) back.searchParams.set('state', q.get('state')!);
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      if (url.pathname === `${path}/token` && req.method === 'POST') {
        const form = new URLSearchParams(await readBody(req));
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const ok =
          grant &&
          createHash('sha256').update(verifier).digest('base64url') === grant.challenge &&
          form.get('redirect_uri') === grant.redirect;
        if (!ok) return send(res, 400, { error: 'invalid_grant' });
        const token = await self.mint({
          aud: grant.resource ?? form.get('resource') ?? 'none',
          scope: grant.scope,
        });
        return send(res, 200, {
          access_token: token,
          token_type: 'Bearer',
          expires_in: 300,
          scope: grant.scope,
        });
      }
      if (url.pathname === `${path}/introspect` && req.method === 'POST') {
        const form = new URLSearchParams(await readBody(req));
        const known = opaque.get(form.get('token') ?? '');
        return send(res, 200, known ? { active: true, ...known } : { active: false });
      }
      send(res, 404, { error: 'not_found' });
    })().catch(() => send(res, 500, { error: 'fake issuer failed' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return self;
}
