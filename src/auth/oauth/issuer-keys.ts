// The signing keys of each trusted issuer, as jwtVerify's key resolver. A remote issuer's key
// set is found through its metadata (RFC 8414, else OpenID discovery), cached for
// jwks.cacheSeconds, fetched again when a token names a key id the set lacks (at most once per
// jwks.cooldownSeconds), and served stale when a refresh fails, so an IdP outage does not end
// every session at once. With no keys at all and a fresh failure, requests fail at once (503)
// instead of each waiting out the time limit again. The built-in authorization server's keys
// come from the state database through the same cache.
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { isSecureOrLoopbackUrl } from '../../config/auth-section.js';
import type { FetchPolicy } from './fetch-guard.js';
import { fetchJson, FetchProblem } from './fetch-json.js';

export interface KeyFetchLimits {
  timeoutMs: number;
  cacheSeconds: number;
  cooldownSeconds: number;
  maxBytes: number;
}

/** The issuer's keys could not be had: the request cannot be judged (503, not 401). */
export class KeysUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeysUnavailable';
  }
}

/** Loads an issuer's current key set; throws KeysUnavailable or FetchProblem. */
export type KeyLoader = () => Promise<JSONWebKeySet>;

// After a failed load with nothing cached, answer "unavailable" without trying again for this long.
const FAILURE_MEMORY_MS = 5_000;
// Keys older than this are not used even when the issuer is down.
const MAX_STALE_MS = 24 * 3600_000;

interface Entry {
  jwks: JSONWebKeySet | null;
  select: ReturnType<typeof createLocalJWKSet> | null;
  fetchedAt: number;
  failedAt: number;
  pending: Promise<void> | null;
}

export interface IssuerKeys {
  resolver(issuer: string, load: KeyLoader): JWTVerifyGetKey;
  /** Forget everything (tests, key rotation in this process). */
  clear(): void;
}

export function createIssuerKeys(limits: KeyFetchLimits): IssuerKeys {
  const entries = new Map<string, Entry>();

  const refresh = (entry: Entry, load: KeyLoader): Promise<void> => {
    entry.pending ??= load()
      .then((jwks) => {
        entry.select = createLocalJWKSet(jwks);
        entry.jwks = jwks;
        entry.fetchedAt = Date.now();
        entry.failedAt = 0;
      })
      .catch((error: unknown) => {
        entry.failedAt = Date.now();
        const stale = entry.select !== null && Date.now() - entry.fetchedAt < MAX_STALE_MS;
        if (!stale) throw asUnavailable(error);
      })
      .finally(() => {
        entry.pending = null;
      });
    return entry.pending;
  };

  const ready = async (entry: Entry, load: KeyLoader): Promise<void> => {
    const now = Date.now();
    const fresh = entry.select !== null && now - entry.fetchedAt < limits.cacheSeconds * 1000;
    if (fresh) return;
    if (
      entry.select === null &&
      entry.pending === null &&
      now - entry.failedAt < FAILURE_MEMORY_MS
    ) {
      throw new KeysUnavailable('the issuer’s keys could not be fetched a moment ago');
    }
    await refresh(entry, load);
  };

  return {
    resolver(issuer, load) {
      let entry = entries.get(issuer);
      if (!entry) {
        entry = { jwks: null, select: null, fetchedAt: 0, failedAt: 0, pending: null };
        entries.set(issuer, entry);
      }
      const held = entry;
      return async (header, token) => {
        await ready(held, load);
        try {
          return await held.select!(header, token);
        } catch (error) {
          // A key id we do not know: the issuer may have rotated. Ask again, but not too often.
          const cooled = Date.now() - held.fetchedAt >= limits.cooldownSeconds * 1000;
          if (!(error instanceof errors.JWKSNoMatchingKey) || !cooled) throw error;
          await refresh(held, load);
          return held.select!(header, token);
        }
      };
    },
    clear() {
      entries.clear();
    },
  };
}

function asUnavailable(error: unknown): Error {
  if (error instanceof KeysUnavailable) return error;
  if (error instanceof FetchProblem) return new KeysUnavailable(error.message);
  return new KeysUnavailable('the issuer’s keys could not be read');
}

/**
 * A loader for a remote issuer: its metadata (RFC 8414 path-inserted, then OpenID discovery in
 * both placements), whose `issuer` must be exactly the configured one, then its jwks_uri. The
 * whole exchange shares one time limit.
 */
export function remoteKeyLoader(
  issuer: string,
  limits: KeyFetchLimits,
  policy: FetchPolicy,
): KeyLoader {
  let jwksUri: string | null = null;
  return async () => {
    const deadline = Date.now() + limits.timeoutMs;
    const left = (): number => {
      const ms = deadline - Date.now();
      if (ms <= 0) throw new KeysUnavailable(`no answer within ${limits.timeoutMs} ms`);
      return ms;
    };
    jwksUri ??= await discoverJwksUri(issuer, limits.maxBytes, left, policy);
    const body = await fetchJson(jwksUri, {
      timeoutMs: left(),
      maxBytes: limits.maxBytes,
      policy,
    });
    if (!Array.isArray(body.keys)) throw new KeysUnavailable('the key set has no keys list');
    return body as unknown as JSONWebKeySet;
  };
}

function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/$/, '');
  return [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}/.well-known/openid-configuration${path}`,
    ...(path ? [`${url.origin}${path}/.well-known/openid-configuration`] : []),
  ];
}

async function discoverJwksUri(
  issuer: string,
  maxBytes: number,
  left: () => number,
  policy: FetchPolicy,
): Promise<string> {
  for (const candidate of metadataUrls(issuer)) {
    let metadata: Record<string, unknown>;
    try {
      metadata = await fetchJson(candidate, { timeoutMs: left(), maxBytes, policy });
    } catch (error) {
      // Not there (404 and the like): try the next placement. Down or slow: stop now.
      if (error instanceof FetchProblem && error.kind === 'refused') continue;
      throw error;
    }
    if (metadata.issuer !== issuer) {
      throw new KeysUnavailable(`the metadata at ${candidate} names another issuer`);
    }
    const uri = metadata.jwks_uri;
    if (typeof uri !== 'string' || !isSecureOrLoopbackUrl(uri)) {
      throw new KeysUnavailable('the issuer metadata has no usable jwks_uri');
    }
    return uri;
  }
  throw new KeysUnavailable('no authorization server metadata found for the issuer');
}
