// RFC 7662 token introspection for opaque access tokens: pgmcp asks the configured endpoint
// (authenticating as auth.oauth.introspection.clientId with the secret from the environment)
// whether the token is active, then checks expiry and audience itself, as for a JWT. Active
// answers are cached by the token's hash for introspection.cacheSeconds, never past `exp`. A
// stream opened with such a token outlives that answer, so while it is open the endpoint is asked
// again (recheck, past the cache): a token it no longer calls active ends its streams.
import { createHash } from 'node:crypto';
import { ErrorCodes } from '../../core/errors.js';
import { Refusals } from '../../core/refusals.js';
import type { AuthFailure, LapseReason } from '../../state/types.js';
import type { FetchPolicy } from './fetch-guard.js';
import { fetchJson, FetchProblem } from './fetch-json.js';
import type { OAuthSettings } from './resource-server.js';
import { audienceMatches } from './resource-uri.js';

export interface Introspection {
  check(raw: string, audiences: readonly string[]): Promise<Verdict>;
  /**
   * Asks the endpoint again, past the cache: 'active', or why the token no longer is ('revoked'
   * when the endpoint calls it inactive, 'expired' past its exp). An inactive token is dropped
   * from the cache, so a request with it is refused at once. Throws when the endpoint cannot be
   * asked or answers unusably.
   */
  recheck(raw: string): Promise<'active' | LapseReason>;
}

export type Verdict =
  | { readonly ok: true; readonly claims: Record<string, unknown> }
  | { readonly ok: false; readonly failure: AuthFailure };

const MAX_ENTRIES = 10_000;
const no = (failure: AuthFailure): Verdict => ({ ok: false, failure });

export function createIntrospection(
  settings: OAuthSettings,
  env: Readonly<Record<string, string | undefined>>,
  policy: FetchPolicy,
): Introspection {
  const { url, clientId, clientSecretEnv, cacheSeconds } = settings.introspection;
  const cache = new Map<string, { claims: Record<string, unknown>; until: number }>();
  const secret = clientSecretEnv ? (env[clientSecretEnv] ?? '') : '';
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
  };
  if (clientId) {
    const pair = `${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  }

  const ask = (raw: string): Promise<Record<string, unknown>> =>
    fetchJson(url!, {
      method: 'POST',
      headers,
      body: new URLSearchParams({ token: raw, token_type_hint: 'access_token' }).toString(),
      timeoutMs: settings.jwks.timeoutMs,
      maxBytes: settings.jwks.maxBytes,
      policy,
    });
  const keyOf = (raw: string): string => createHash('sha256').update(raw).digest('base64url');

  const judge = (claims: Record<string, unknown>, audiences: readonly string[]): Verdict => {
    const now = Date.now() / 1000;
    const skew = settings.clockSkewSeconds;
    if (typeof claims.exp === 'number' && claims.exp + skew < now) {
      return no({
        reason: 'expired',
        code: ErrorCodes.OAUTH_TOKEN_EXPIRED,
        description: Refusals.TOKEN_EXPIRED,
      });
    }
    if (!audienceMatches(claims.aud, audiences)) {
      return no({
        reason: 'wrong_audience',
        code: ErrorCodes.OAUTH_WRONG_AUDIENCE,
        description: Refusals.WRONG_AUDIENCE,
      });
    }
    return { ok: true, claims };
  };

  return {
    async check(raw, audiences) {
      const key = keyOf(raw);
      const hit = cache.get(key);
      if (hit && hit.until > Date.now()) return judge(hit.claims, audiences);
      if (hit) cache.delete(key);
      let answer: Record<string, unknown>;
      try {
        answer = await ask(raw);
      } catch (error) {
        const down = !(error instanceof FetchProblem) || error.kind === 'unreachable';
        return no({
          reason: 'unavailable',
          code: ErrorCodes.OAUTH_ISSUER_UNAVAILABLE,
          description: down ? Refusals.INTROSPECTION_UNREACHABLE : Refusals.INTROSPECTION_REFUSED,
        });
      }
      if (answer.active !== true) {
        return no({
          reason: 'unknown',
          code: ErrorCodes.OAUTH_TOKEN_INVALID,
          description: Refusals.NOT_ACTIVE,
        });
      }
      const verdict = judge(answer, audiences);
      if (verdict.ok && cacheSeconds > 0) {
        const exp = typeof answer.exp === 'number' ? answer.exp * 1000 : Infinity;
        if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(key, { claims: answer, until: Math.min(Date.now() + cacheSeconds * 1000, exp) });
      }
      return verdict;
    },

    async recheck(raw) {
      const answer = await ask(raw);
      const exp = answer.exp;
      const now = Date.now() / 1000;
      if (answer.active !== true) {
        cache.delete(keyOf(raw));
        return 'revoked';
      }
      if (typeof exp === 'number' && exp + settings.clockSkewSeconds < now) {
        cache.delete(keyOf(raw));
        return 'expired';
      }
      return 'active';
    },
  };
}
