// The canonical resource URI (RFC 8707 §2, MCP authorization): lowercase scheme and host, no
// fragment or query, no trailing slash. Tokens are compared in this form so that
// https://MCP.example.com/mcp/ and https://mcp.example.com/mcp name the same resource.

export function canonicalResource(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

/** Whether a token's aud (a string or a list) names one of the accepted audiences. */
export function audienceMatches(aud: unknown, accepted: readonly string[]): boolean {
  const given = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud : [];
  const wanted = new Set(accepted.map((a) => canonicalResource(a) ?? a));
  return given.some((a) => typeof a === 'string' && wanted.has(canonicalResource(a) ?? a));
}
