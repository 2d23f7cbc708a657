// pgmcp as an OAuth 2.1 resource server: a bearer token that is not one of pgmcp's own
// (pgmcp_…, pgmcps_…) is judged here. A JWT must be signed by a trusted issuer with an
// asymmetric algorithm (never `none`, never HS* — a public key is no shared secret), carry
// that issuer in `iss`, be within `exp`/`nbf` give or take a small skew, and name this resource
// in `aud` (RFC 8707). An opaque token goes to RFC 7662 introspection when configured.
// Verification never throws: it answers a Principal or an AuthFailure saying why not.
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../../config/index.js';
import { ErrorCodes } from '../../core/errors.js';
import type { Principal } from '../../core/principal.js';
import { claimRefused, Refusals } from '../../core/refusals.js';
import type { AuthFailure, LapseReason } from '../../state/types.js';
import { principalFromClaims, type ClaimMapping } from './claims.js';
import { fetchPolicyFor } from './fetch-guard.js';
import { createIntrospection, type Introspection } from './introspection.js';
import {
  createIssuerKeys,
  KeysUnavailable,
  remoteKeyLoader,
  type KeyLoader,
} from './issuer-keys.js';
import { audienceMatches } from './resource-uri.js';

export type OAuthSettings = Config['auth']['oauth'];

/** Asymmetric algorithms only: a key fetched from a JWKS is public, never an HMAC secret. */
const ACCEPTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** What the resource server must know about the request a token came with. */
export interface TokenContext {
  /** The canonical resource URI of the endpoint the token was presented to. */
  resource: string;
  /** scheme://host of the request (the built-in issuer when none is configured). */
  origin: string;
}

/** The built-in authorization server as the resource server sees it. */
export interface LocalIssuer {
  issuerFor(origin: string): string;
  keys: KeyLoader;
  /** How its tokens map to a principal (its scopes are pgmcp role names). */
  mapping: ClaimMapping;
}

export interface ResourceServer {
  verify(raw: string, context: TokenContext): Promise<Principal | AuthFailure>;
  /** The audiences a token may name for a request to `resource`. */
  audiences(resource: string): string[];
  /** How opaque tokens are introspected again while a stream opened with one is open; null: no introspection configured. */
  readonly introspection: TokenIntrospection | null;
}

/** Introspection as an open stream's watch needs it (http/stream-watch.ts). */
export interface TokenIntrospection {
  /** Whether verify() judges this bearer by introspection (an opaque token, not a JWT). */
  introspects(raw: string): boolean;
  /** Asks the endpoint again, past the cache: 'active' or why not; throws when it cannot be asked. */
  recheck(raw: string): Promise<'active' | LapseReason>;
  /** introspection.cacheSeconds in ms: the endpoint is not asked about a token more often. */
  readonly cacheMs: number;
}

export interface ResourceServerOptions {
  settings: OAuthSettings;
  local?: LocalIssuer | null;
  env?: Readonly<Record<string, string | undefined>>;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

const fail = (reason: AuthFailure['reason'], code: string, description: string): AuthFailure => ({
  reason,
  code,
  description,
});

export function createResourceServer(options: ResourceServerOptions): ResourceServer {
  const { settings } = options;
  const keys = createIssuerKeys(settings.jwks);
  const policy = fetchPolicyFor(settings);
  const remote = new Map(
    settings.authorizationServers.map((issuer) => [
      issuer,
      remoteKeyLoader(issuer, settings.jwks, policy),
    ]),
  );
  const introspection: Introspection | null = settings.introspection.url
    ? createIntrospection(settings, options.env ?? process.env, policy)
    : null;

  const audiences = (resource: string): string[] => [
    settings.audience ?? resource,
    ...settings.additionalAudiences,
  ];

  const isLocal = (issuer: unknown, context: TokenContext): boolean =>
    options.local !== null &&
    options.local !== undefined &&
    issuer === options.local.issuerFor(context.origin);
  const loaderFor = (issuer: string, context: TokenContext): KeyLoader | null =>
    isLocal(issuer, context) ? options.local!.keys : (remote.get(issuer) ?? null);

  const verifyJwt = async (
    raw: string,
    context: TokenContext,
  ): Promise<Principal | AuthFailure> => {
    let issuer: unknown;
    try {
      const header = decodeProtectedHeader(raw);
      if (typeof header.alg !== 'string' || !ACCEPTED_ALGORITHMS.includes(header.alg)) {
        return fail('invalid', ErrorCodes.OAUTH_TOKEN_INVALID, Refusals.ALGORITHM_REFUSED);
      }
      issuer = decodeJwt(raw).iss;
    } catch {
      return fail('malformed', ErrorCodes.OAUTH_TOKEN_INVALID, Refusals.JWT_MALFORMED);
    }
    const loader = typeof issuer === 'string' ? loaderFor(issuer, context) : null;
    if (!loader || typeof issuer !== 'string') {
      return fail('invalid', ErrorCodes.OAUTH_TOKEN_INVALID, Refusals.ISSUER_UNTRUSTED);
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(raw, keys.resolver(issuer, loader), {
        issuer,
        algorithms: ACCEPTED_ALGORITHMS,
        clockTolerance: settings.clockSkewSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      return failureOf(error);
    }
    if (!audienceMatches(payload.aud, audiences(context.resource))) {
      return fail('wrong_audience', ErrorCodes.OAUTH_WRONG_AUDIENCE, Refusals.WRONG_AUDIENCE);
    }
    const mapping = isLocal(issuer, context) ? options.local!.mapping : settings;
    return principalFromClaims(payload as Record<string, unknown>, mapping);
  };

  return {
    audiences,
    introspection: introspection
      ? {
          introspects: (raw) =>
            Buffer.byteLength(raw) <= settings.maxTokenBytes && !JWT_SHAPE.test(raw),
          recheck: (raw) => introspection.recheck(raw),
          cacheMs: settings.introspection.cacheSeconds * 1000,
        }
      : null,
    async verify(raw, context) {
      if (Buffer.byteLength(raw) > settings.maxTokenBytes) {
        return fail('too_large', ErrorCodes.OAUTH_TOKEN_TOO_LARGE, Refusals.TOKEN_TOO_LARGE);
      }
      if (JWT_SHAPE.test(raw)) return verifyJwt(raw, context);
      if (introspection) {
        const verdict = await introspection.check(raw, audiences(context.resource));
        return verdict.ok ? principalFromClaims(verdict.claims, settings) : verdict.failure;
      }
      return fail('unknown', ErrorCodes.OAUTH_TOKEN_INVALID, Refusals.OPAQUE_UNKNOWN);
    },
  };
}

function failureOf(error: unknown): AuthFailure {
  if (error instanceof KeysUnavailable) {
    return fail('unavailable', ErrorCodes.OAUTH_ISSUER_UNAVAILABLE, Refusals.KEYS_UNAVAILABLE);
  }
  if (error instanceof errors.JWTExpired) {
    return fail('expired', ErrorCodes.OAUTH_TOKEN_EXPIRED, Refusals.TOKEN_EXPIRED);
  }
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'nbf') {
    return fail('invalid', ErrorCodes.OAUTH_TOKEN_EXPIRED, Refusals.TOKEN_NOT_YET_VALID);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
    return fail('invalid', ErrorCodes.OAUTH_TOKEN_INVALID, Refusals.ALGORITHM_REFUSED);
  }
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return fail('invalid', ErrorCodes.OAUTH_TOKEN_INVALID, Refusals.KEY_UNKNOWN);
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return fail('invalid', ErrorCodes.OAUTH_TOKEN_INVALID, claimRefused(error.claim));
  }
  return fail('invalid', ErrorCodes.OAUTH_TOKEN_INVALID, Refusals.SIGNATURE_INVALID);
}
