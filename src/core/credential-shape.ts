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

// bytea as PostgreSQL writes it in text and JSON (`\x` and hex pairs): inside an array, a
// composite, a record's text or a jsonb document a bytea value arrives in this form, not as bytes.
const BYTEA_HEX = /\\x((?:[0-9a-fA-F]{2}){4,})/g;

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

/** Whether a value holds bytea hex text (`\x5343…`) whose bytes read like a credential. */
function byteaHexLooksLikeCredential(value: string): boolean {
  // Cheap first: most values hold no `\x` at all.
  if (!value.includes('\\x')) return false;
  for (const match of value.matchAll(BYTEA_HEX)) {
    if (looksLikeCredential(Buffer.from(match[1]!, 'hex').toString('latin1'))) return true;
  }
  return false;
}

/** Catalog text (a comment, a default, a definition) with a credential in it, withheld whole. */
export function withholdCredential<T extends string | null>(text: T): T | typeof WITHHELD {
  return text !== null && looksLikeCredential(text) ? WITHHELD : text;
}
