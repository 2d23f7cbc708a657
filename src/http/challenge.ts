// WWW-Authenticate challenges (RFC 6750 §3): what a 401 or 403 tells the client to do. With
// OAuth configured they also say where the protected resource metadata is (RFC 9728 §5.1) and
// which scope to ask for (MCP step-up authorization).
// Every parameter goes through quotedParam, so no message, host or scope can make the header
// unwritable (a 500 instead of the 401).
import { quotedParam as quoted } from '../core/header-value.js';

export type ChallengeKind = 'missing' | 'invalid_request' | 'invalid_token' | 'insufficient_scope';

export interface ChallengeExtras {
  resourceMetadata?: string;
  scope?: string;
}

/**
 * `Bearer` alone when no credentials came (RFC 6750 §3.1: no error code then), otherwise
 * with the error; `description` must never hold a secret (it is shown to the client).
 */
export function challenge(
  kind: ChallengeKind,
  description?: string,
  extras: ChallengeExtras = {},
): string {
  // The same realm as /api's own refusals (api/errors.ts BEARER_CHALLENGE).
  const parts = ['realm="pgmcp"'];
  if (extras.resourceMetadata) parts.push(`resource_metadata=${quoted(extras.resourceMetadata)}`);
  if (extras.scope) parts.push(`scope=${quoted(extras.scope)}`);
  if (kind !== 'missing') {
    parts.push(`error=${quoted(kind)}`);
    if (description) parts.push(`error_description=${quoted(description)}`);
  }
  return `Bearer ${parts.join(', ')}`;
}
