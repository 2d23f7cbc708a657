// The browser side of the built-in authorization server: GET /oauth/authorize checks the client
// and its exact redirect URI (a bad one is answered with a page here, never by redirecting to
// it), then the sign-in form; POST /oauth/login checks the user; POST /oauth/consent issues the
// code. Each form carries the request id and a CSRF token, and must come from the browser that
// started (a cookie whose hash the request row holds), so no other site can post it.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../auth/index.js';
import type { AuthorizationServer } from '../../auth/oauth/authorization-server.js';
import { redirectMatches } from '../../auth/oauth/clients.js';
import { canonicalResource } from '../../auth/oauth/resource-uri.js';
import { ErrorCodes, isAppError } from '../../core/errors.js';
import type { OAuthDiscovery } from '../oauth-discovery.js';
import { consentPage, errorPage, loginPage } from './pages.js';

const COOKIE = 'pgmcp_oauth';
const REQUEST_TTL_SECONDS = 600;
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export interface AuthorizeDeps {
  server: AuthorizationServer;
  auth: Authenticator;
  discovery: OAuthDiscovery;
}

function cookieOf(req: FastifyRequest): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) {
      const value = rest.join('=');
      return /^[A-Za-z0-9_-]{32,64}$/.test(value) ? value : null;
    }
  }
  return null;
}

const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | null)?.[name];
  return typeof value === 'string' ? value : '';
};

const hostOf = (uri: string): string => {
  const url = new URL(uri);
  return url.host || url.protocol;
};
/** The CSP source the consent form's redirect goes to: the origin, or an app's scheme. */
const targetOf = (uri: string): string => {
  const url = new URL(uri);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol;
};

export function registerAuthorizeRoutes(app: FastifyInstance, deps: AuthorizeDeps): void {
  const { server, auth, discovery } = deps;

  const redirectWith = (
    req: FastifyRequest,
    reply: FastifyReply,
    redirectUri: string,
    params: Record<string, string | null>,
  ) => {
    const url = new URL(redirectUri);
    for (const [key, value] of Object.entries(params))
      if (value !== null) url.searchParams.set(key, value);
    url.searchParams.set('iss', server.issuerFor(discovery.originOf(req))); // RFC 9207
    return reply
      .code(302)
      .header('location', url.toString())
      .header('cache-control', 'no-store')
      .send();
  };

  app.get('/oauth/authorize', async (req, reply) => {
    const q = req.query as Record<string, unknown>;
    const text = (name: string): string | null =>
      typeof q[name] === 'string' ? (q[name] as string) : null;
    let client;
    try {
      client = await server.clients.find(text('client_id') ?? '');
    } catch (error) {
      if (!isAppError(error)) throw error;
      return errorPage(reply, 400, error.code, error.message);
    }
    const asked = text('redirect_uri');
    const redirectUri =
      asked ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : null);
    if (redirectUri === null || !redirectMatches(client.redirectUris, redirectUri)) {
      return errorPage(
        reply,
        400,
        ErrorCodes.OAUTH_REDIRECT_MISMATCH,
        'The redirect_uri is not one this client registered.',
      );
    }
    const state = text('state');
    const fail = (error: string, description: string) =>
      redirectWith(req, reply, redirectUri, { error, error_description: description, state });
    if (text('response_type') !== 'code') {
      return fail('unsupported_response_type', 'Only response_type=code is supported.');
    }
    const challenge = text('code_challenge');
    if (text('code_challenge_method') !== 'S256' || !challenge || !CHALLENGE.test(challenge)) {
      return fail(
        'invalid_request',
        'PKCE is required: code_challenge with code_challenge_method=S256.',
      );
    }
    const ours = canonicalResource(discovery.resourceFor(req));
    const resource = text('resource');
    if (resource !== null && canonicalResource(resource) !== ours) {
      return fail('invalid_target', 'resource must be this server’s MCP endpoint.');
    }
    const scopes = (text('scope') ?? '').split(' ').filter(Boolean);
    if (scopes.length > 32 || scopes.some((s) => !SCOPE.test(s))) {
      return fail('invalid_scope', 'The scope parameter is malformed.');
    }
    const browser = cookieOf(req) ?? randomBytes(32).toString('base64url');
    const { id, csrf } = await server.grants.begin(
      {
        clientId: client.clientId,
        redirectUri,
        scopes,
        state,
        codeChallenge: challenge,
        resource: ours!,
      },
      browser,
      REQUEST_TTL_SECONDS,
    );
    const secure = req.protocol === 'https' ? '; Secure' : '';
    reply.header(
      'set-cookie',
      `${COOKIE}=${browser}; Path=/oauth; HttpOnly; SameSite=Lax; Max-Age=${REQUEST_TTL_SECONDS}${secure}`,
    );
    return loginPage(reply, {
      request: id,
      csrf,
      clientName: client.clientName ?? client.clientId,
      redirectHost: hostOf(redirectUri),
    });
  });

  /** The request a form names, if it really comes from this browser's sign-in page. */
  const formRequest = async (req: FastifyRequest) => {
    const browser = cookieOf(req);
    const id = field(req.body, 'request');
    const csrf = field(req.body, 'csrf');
    if (!browser || !id || !csrf) return null;
    const pending = await server.grants.pending(id, csrf, browser);
    return pending ? { pending, id, csrf, browser } : null;
  };
  const forged = (reply: FastifyReply) =>
    errorPage(
      reply,
      403,
      ErrorCodes.OAUTH_CSRF,
      'This form expired or was not sent from the page pgmcp gave this browser.',
    );

  app.post('/oauth/login', async (req, reply) => {
    const found = await formRequest(req);
    if (!found) return forged(reply);
    const client = await server.clients.find(found.pending.clientId);
    const again = (status: number, error: string) =>
      loginPage(reply, {
        request: found.id,
        csrf: found.csrf,
        clientName: client.clientName ?? client.clientId,
        redirectHost: hostOf(found.pending.redirectUri),
        error,
        status,
      });
    let username: string;
    try {
      // The session store's login gives lockout, slow-down and audit; the session it makes is
      // not wanted here and ends at once.
      const login = await auth.sessions.login(
        field(req.body, 'username'),
        field(req.body, 'password'),
        req.ip,
      );
      await auth.sessions.logout(login.sessionToken);
      username = login.principal.userId!;
    } catch (error) {
      if (isAppError(error) && error.code === ErrorCodes.LOGIN_LOCKED)
        return again(429, error.message);
      if (isAppError(error) && error.code === ErrorCodes.LOGIN_FAILED) {
        return again(401, 'Wrong user name or password.');
      }
      throw error;
    }
    await server.grants.signedIn(found.id, username);
    return consentPage(reply, {
      request: found.id,
      csrf: found.csrf,
      clientName: client.clientName ?? client.clientId,
      username,
      scopes: await server.grantScopes(username, found.pending.scopes),
      redirectHost: hostOf(found.pending.redirectUri),
      redirectTarget: targetOf(found.pending.redirectUri),
    });
  });

  app.post('/oauth/consent', async (req, reply) => {
    const browser = cookieOf(req);
    const id = field(req.body, 'request');
    const csrf = field(req.body, 'csrf');
    const pending = browser && id && csrf ? await server.grants.finish(id, csrf, browser) : null;
    if (!pending) return forged(reply);
    if (!pending.username) {
      return errorPage(
        reply,
        400,
        ErrorCodes.OAUTH_INVALID_REQUEST,
        'Sign in before giving consent.',
      );
    }
    if (field(req.body, 'decision') !== 'allow') {
      return redirectWith(req, reply, pending.redirectUri, {
        error: 'access_denied',
        error_description: `${ErrorCodes.OAUTH_ACCESS_DENIED}: the user refused access.`,
        state: pending.state,
      });
    }
    const code = await server.grants.issueCode(
      {
        clientId: pending.clientId,
        username: pending.username,
        redirectUri: pending.redirectUri,
        scopes: await server.grantScopes(pending.username, pending.scopes),
        resource: pending.resource,
        codeChallenge: pending.codeChallenge,
      },
      server.settings.codeTtlSeconds,
    );
    return redirectWith(req, reply, pending.redirectUri, { code, state: pending.state });
  });
}
