// The built-in authorization server's decisions, apart from HTTP: who the issuer is, which
// scopes a user may be granted, and the token endpoint's two grants (authorization code with
// PKCE S256, refresh token with rotation). Its access tokens are JWTs signed with the keys in
// the state database and verified by the same resource server as an external IdP's, with its
// key set read locally instead of over HTTP.
import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Logger } from 'pino';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { Authenticator } from '../authenticator.js';
import type { ClaimMapping } from './claims.js';
import { createClientDirectory, type ClientDirectory } from './clients.js';
import { fetchPolicyFor } from './fetch-guard.js';
import { createGrants, type Grants, type RefreshGrant } from '../../state/oauth/grants.js';
import type { LocalIssuer, OAuthSettings } from './resource-server.js';
import { createSigningKeys, type SigningKeys } from '../../state/oauth/signing-keys.js';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface AuthorizationServer {
  readonly grants: Grants;
  readonly clients: ClientDirectory;
  readonly keys: SigningKeys;
  readonly local: LocalIssuer;
  readonly settings: OAuthSettings['server'];
  issuerFor(origin: string): string;
  /** What a signed-in user is granted of the scopes asked for (their pgmcp roles bound it). */
  grantScopes(username: string, requested: readonly string[]): Promise<string[]>;
  exchangeCode(input: {
    code: string;
    clientId: string;
    redirectUri: string;
    verifier: string;
    resource: string | null;
  }): Promise<TokenResponse>;
  refresh(input: {
    token: string;
    clientId: string;
    scopes: string[] | null;
  }): Promise<TokenResponse>;
}

/** Its own tokens: the user in sub, pgmcp roles as scopes, the PostgreSQL role in pg_role. */
const LOCAL_MAPPING: ClaimMapping = {
  claims: { userId: 'sub', tenantId: null, roles: null, pgRole: 'pg_role' },
  scopeRoles: {},
};

const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

function invalidGrant(message: string): AppError {
  return new AppError(ErrorCodes.OAUTH_INVALID_GRANT, message, { category: 'input' });
}

export function createAuthorizationServer(
  auth: Authenticator,
  settings: OAuthSettings,
  options: { loopbackIssuer: boolean; logger?: Logger | null },
): AuthorizationServer {
  const server = settings.server;
  const grants = createGrants(auth.db);
  const keys = createSigningKeys(auth.db);
  const clients = createClientDirectory(grants, {
    documents: server.clientMetadataDocuments,
    allowLoopbackDocuments: options.loopbackIssuer,
    policy: fetchPolicyFor(settings),
    logger: options.logger ?? null,
  });
  // Unset, the issuer is the public origin: the configured audience's, else the request's.
  const publicOrigin = settings.audience ? new URL(settings.audience).origin : null;
  const issuerFor = (origin: string): string =>
    (server.issuer ?? publicOrigin ?? origin).replace(/\/$/, '');

  const activeUser = async (username: string) => {
    const user = await auth.users.get(username);
    if (!user || user.disabled)
      throw invalidGrant('The user of this grant no longer exists or is disabled.');
    return user;
  };

  const grantScopes = async (username: string, requested: readonly string[]): Promise<string[]> => {
    const user = await activeUser(username);
    const wanted =
      requested.length > 0
        ? requested
        : server.defaultScopes.length > 0
          ? server.defaultScopes
          : user.roles;
    return [...new Set(wanted.filter((scope) => user.roles.includes(scope)))];
  };

  const tokens = async (grant: RefreshGrant, origin: string): Promise<TokenResponse> => {
    const user = await activeUser(grant.username);
    const scopes = grant.scopes.filter((scope) => user.roles.includes(scope));
    const key = await keys.current();
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = { scope: scopes.join(' '), client_id: grant.clientId };
    if (user.pgRole) claims.pg_role = user.pgRole;
    const accessToken = await new SignJWT(claims)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
      .setIssuer(origin)
      .setSubject(user.username)
      .setAudience(grant.resource)
      .setIssuedAt(now)
      .setExpirationTime(now + server.accessTokenTtlSeconds)
      .setJti(randomBytes(16).toString('base64url'))
      .sign(key.key);
    const refreshToken = await grants.issueRefresh(
      { ...grant, scopes },
      server.refreshTokenTtlSeconds,
    );
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: server.accessTokenTtlSeconds,
      refresh_token: refreshToken,
      scope: scopes.join(' '),
    };
  };

  // The issuer a token names: the configured one, else the origin of the resource it is for
  // (the origin clients reached this server at, which the resource server compares with).
  const issuerOrigin = (resource: string): string => issuerFor(new URL(resource).origin);

  return {
    grants,
    clients,
    keys,
    settings: server,
    issuerFor,
    grantScopes,
    local: { issuerFor, keys: () => keys.publicJwks(), mapping: LOCAL_MAPPING },
    async exchangeCode(input) {
      if (!PKCE_VERIFIER.test(input.verifier)) {
        throw invalidGrant('code_verifier must be 43 to 128 unreserved characters.');
      }
      const grant = await grants.redeemCode(input.code);
      if (grant === 'replayed') {
        throw invalidGrant(
          'The authorization code was used already; the tokens it gave are revoked.',
        );
      }
      if (!grant) throw invalidGrant('The authorization code is unknown or has expired.');
      if (grant.clientId !== input.clientId)
        throw invalidGrant('The code was issued to another client.');
      if (grant.redirectUri !== input.redirectUri) {
        throw invalidGrant('redirect_uri differs from the one of the authorization request.');
      }
      const challenge = createHash('sha256').update(input.verifier).digest('base64url');
      if (challenge !== grant.codeChallenge)
        throw invalidGrant('The PKCE code_verifier does not match.');
      if (input.resource !== null && input.resource !== grant.resource) {
        throw invalidGrant('resource differs from the one that was authorized.');
      }
      return tokens(grant, issuerOrigin(grant.resource));
    },
    async refresh(input) {
      const grant = await grants.rotateRefresh(input.token);
      if (grant === 'reused') {
        throw invalidGrant(
          'The refresh token was used already; every token of this grant is revoked.',
        );
      }
      if (!grant) throw invalidGrant('The refresh token is unknown.');
      if (grant.clientId !== input.clientId) {
        await grants.revoke(input.token);
        throw invalidGrant('The refresh token was issued to another client.');
      }
      const scopes = input.scopes
        ? grant.scopes.filter((s) => input.scopes!.includes(s))
        : grant.scopes;
      return tokens({ ...grant, scopes }, issuerOrigin(grant.resource));
    },
  };
}
