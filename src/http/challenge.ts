// WWW-Authenticate challenges (RFC 6750 §3): what a 401 or 403 tells the client to do.
export type ChallengeKind = 'missing' | 'invalid_request' | 'invalid_token' | 'insufficient_scope';

const quoted = (value: string): string => `"${value.replace(/["\\]/g, '')}"`;

/**
 * `Bearer` alone when no credentials came (RFC 6750 §3.1: no error code then), otherwise
 * with the error; `description` must never hold a secret (it is shown to the client).
 */
export function challenge(kind: ChallengeKind, description?: string): string {
  // The same realm as /api's own refusals (api/errors.ts BEARER_CHALLENGE).
  if (kind === 'missing') return 'Bearer realm="pgmcp"';
  const parts = ['realm="pgmcp"', `error=${quoted(kind)}`];
  if (description) parts.push(`error_description=${quoted(description)}`);
  return `Bearer ${parts.join(', ')}`;
}
