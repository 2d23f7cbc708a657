// What a credential looks like as text, for the screens that keep credentials out of answers:
// the output screen (tools/output-screen.ts) and the catalog's comments and definitions
// (catalog/load.ts). Pure, so every layer from the catalog up can use it.

export const WITHHELD = '[credential withheld]';

// SCRAM verifiers and md5 hashes as pg_authid stores them; key=value connection strings with a
// password; the password clause of CREATE/ALTER ROLE (a query text in pg_stat_activity).
const CREDENTIAL_SHAPES: readonly RegExp[] = [
  /SCRAM-SHA-256\$\d+:/,
  /\bmd5[0-9a-f]{32}\b/,
  /(^|[\s'"{,])password\s*=\s*(?!\s|$)/i,
  /\bpassword\s+'[^']/i,
];

/**
 * Whether a value reads like a credential (checked on every string a tool answers with): as
 * text, or as the bytes of the bytea hex text in it.
 */
export function looksLikeCredential(value: string): boolean {
  // Cheap first: most values hold none of the markers.
  if (/scram|md5|password/i.test(value) && CREDENTIAL_SHAPES.some((re) => re.test(value))) {
    return true;
  }
  return byteaHexLooksLikeCredential(value);
}

const isHexDigit = (code: number): boolean =>
  (code >= 48 && code <= 57) || (code >= 97 && code <= 102) || (code >= 65 && code <= 70);

/**
 * Whether a value holds bytea hex text whose bytes read like a credential: bytea as PostgreSQL
 * writes it in text and JSON (`\x` and hex pairs), the form it takes inside an array, a
 * composite, a record's text or a jsonb document. A scan, not a regular expression: a value
 * can be megabytes of hex.
 */
function byteaHexLooksLikeCredential(value: string): boolean {
  // Cheap first: most values hold no `\x` at all.
  let at = value.indexOf('\\x');
  while (at !== -1) {
    const start = at + 2;
    let end = start;
    while (end < value.length && isHexDigit(value.charCodeAt(end))) end++;
    // Four bytes at least: nothing shorter reads like a credential.
    const digits = (end - start) & ~1;
    if (digits >= 8) {
      const bytes = Buffer.from(value.slice(start, start + digits), 'hex').toString('latin1');
      if (looksLikeCredential(bytes)) return true;
    }
    at = value.indexOf('\\x', end);
  }
  return false;
}

/** Catalog text (a comment, a default, a definition) with a credential in it, withheld whole. */
export function withholdCredential<T extends string | null>(text: T): T | typeof WITHHELD {
  return text !== null && looksLikeCredential(text) ? WITHHELD : text;
}

/** A text (a comment, a description) with each line that reads like a credential withheld. */
export function withholdCredentialLines(text: string): string {
  if (!looksLikeCredential(text)) return text;
  return text
    .split(/\r?\n/)
    .map((line) => withholdCredential(line))
    .join('\n');
}
