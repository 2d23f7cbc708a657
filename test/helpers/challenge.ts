// A strict reader of a WWW-Authenticate value (RFC 9110 §11.6.1, RFC 6750 §3): one Bearer
// challenge of comma-separated auth-params, each a token or a quoted-string. Anything else is
// null, so a test can say "the client can read this challenge", not merely "a header came".
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;

export function parseBearerChallenge(value: unknown): Record<string, string> | null {
  if (typeof value !== 'string' || !/^Bearer( |$)/.test(value)) return null;
  if (!/^[\x20-\x7E]*$/.test(value)) return null;
  const params: Record<string, string> = {};
  let rest = value.slice('Bearer'.length).trim();
  while (rest.length > 0) {
    const name = TOKEN.exec(rest)?.[0];
    if (!name || rest[name.length] !== '=') return null;
    rest = rest.slice(name.length + 1);
    let text: string;
    if (rest.startsWith('"')) {
      const end = /^"((?:[^"\\]|\\[\x20-\x7E])*)"/.exec(rest);
      if (!end) return null;
      text = end[1]!.replace(/\\(.)/g, '$1');
      rest = rest.slice(end[0].length);
    } else {
      const token = TOKEN.exec(rest)?.[0];
      if (!token) return null;
      text = token;
      rest = rest.slice(token.length);
    }
    if (name.toLowerCase() in params) return null;
    params[name.toLowerCase()] = text;
    rest = rest.trimStart();
    if (rest.length === 0) break;
    if (!rest.startsWith(',')) return null;
    rest = rest.slice(1).trimStart();
  }
  return params;
}

/** RFC 6750 §3: error_description and scope hold only %x20-21 / %x23-5B / %x5D-7E. */
export const RFC6750_TEXT = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;
