// The texts a refused credential is answered with. Each one is both the message of the error
// body and the `error_description` of the WWW-Authenticate challenge, so each is plain printable
// ASCII without `"` or `\` (RFC 6750 §3): the header says exactly what the body says. A unit
// test (refusals.test.ts) holds every entry to that, and to being writable as a header.
export const Refusals = {
  // The HTTP edge (http/authenticate.ts, the MCP route).
  TOKEN_IN_QUERY: 'Send the token in the Authorization header, never in the URL.',
  HEADER_MALFORMED: "The Authorization header must be 'Bearer <token>'.",
  HEADER_TOO_LARGE: 'The bearer token is too large.',
  BEARER_REFUSED: 'The bearer token is not valid (unknown, expired or revoked).',
  AUTH_REQUIRED: 'Authentication required: send a bearer token.',
  SCOPE_MISSING: 'The token lacks the scope this needs.',
  // The OAuth resource server (auth/oauth/resource-server.ts).
  TOKEN_TOO_LARGE: 'The bearer token is too large.',
  JWT_MALFORMED: 'The bearer token is not a well-formed JWT.',
  ALGORITHM_REFUSED: "The token's signing algorithm is not accepted.",
  ISSUER_UNTRUSTED: "The token's issuer is not trusted here.",
  KEY_UNKNOWN: 'The token is signed with an unknown key.',
  SIGNATURE_INVALID: "The token's signature does not verify.",
  TOKEN_EXPIRED: 'The token has expired.',
  TOKEN_NOT_YET_VALID: 'The token is not valid yet.',
  WRONG_AUDIENCE: 'The token was issued for another resource.',
  OPAQUE_UNKNOWN: 'The bearer token is not valid.',
  KEYS_UNAVAILABLE: "The token issuer's keys cannot be reached right now; try again shortly.",
  // RFC 7662 introspection (auth/oauth/introspection.ts).
  NOT_ACTIVE: 'The bearer token is not active.',
  INTROSPECTION_UNREACHABLE: 'The token introspection endpoint cannot be reached right now.',
  INTROSPECTION_REFUSED: "The token introspection endpoint refused pgmcp's request.",
} as const;

/** A claim jose found unacceptable; only the registered claim names it checks reach here. */
export function claimRefused(claim: string): string {
  if (!/^[a-z_]{1,16}$/.test(claim)) return "One of the token's claims is not acceptable.";
  return `The token's ${claim} claim is not acceptable.`;
}

/** A signed-in caller without any of `roles` (role names are [A-Za-z0-9_.:-]). */
export function rolesMissing(roles: readonly string[]): string {
  return `Forbidden: this needs one of the roles ${roles.join(', ')}.`;
}
