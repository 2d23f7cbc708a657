// Text made fit for an HTTP header. Node refuses to write a header value holding a character
// outside Latin-1 (a typographic apostrophe, an arrow) or a control character, and the response
// then becomes a 500; RFC 9110 allows only visible ASCII, space and tab in practice, and RFC 6750
// narrows error_description further. Every header pgmcp writes from text goes through here.

/** Characters with a plain-ASCII reading, so a message keeps its sense in a header. */
const PLAIN: Readonly<Record<string, string>> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201A': "'",
  '\u201B': "'",
  '\u2032': "'",
  '\u201C': '"',
  '\u201D': '"',
  '\u201E': '"',
  '\u201F': '"',
  '\u2033': '"',
  '\u00AB': '"',
  '\u00BB': '"',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2015': '-',
  '\u2212': '-',
  '\u2026': '...',
  '\u2192': '->',
  '\u2190': '<-',
  '\u2194': '<->',
  '\u21D2': '=>',
  '\u00D7': 'x',
  '\u2022': '*',
  '\u00B7': '.',
};

/** Whether a value can be written as a header as it is: visible ASCII and spaces only. */
export function isHeaderSafe(value: string): boolean {
  return /^[\x20-\x7E]*$/.test(value);
}

/**
 * `text` as a header value: typographic marks become their ASCII forms, accents are dropped
 * (é → e), control characters (CR, LF, NUL, tab …) become spaces, anything else outside visible
 * ASCII becomes `?`. Runs of spaces collapse and the ends are trimmed. Safe text comes back
 * unchanged.
 */
export function safeHeaderValue(text: string): string {
  if (isHeaderSafe(text) && !/ {2}|^ | $/.test(text)) return text;
  return text
    .replace(
      /[\u2018-\u201F\u2032\u2033\u00AB\u00BB\u2010-\u2015\u2212\u2026\u2190\u2192\u2194\u21D2\u00D7\u2022\u00B7]/g,
      (c) => PLAIN[c] ?? '?',
    )
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[\x00-\x1F\x7F\u0080-\u009F\u2028\u2029]/g, ' ')
    .replace(/[^\x20-\x7E]/gu, '?')
    .replace(/ {2,}/g, ' ')
    .trim();
}

/**
 * `text` as the value of an auth-param quoted-string whose content RFC 6750 §3 limits to
 * %x20-21 / %x23-5B / %x5D-7E (error_description, scope, resource_metadata): a header value
 * with `"` turned into `'` and `\` into `/`, so no escape is ever needed.
 */
export function quotedParam(text: string): string {
  return `"${safeHeaderValue(text).replace(/"/g, "'").replace(/\\/g, '/')}"`;
}
