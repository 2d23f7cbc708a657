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

/** Whether a value reads like a credential (checked on every string a tool answers with). */
export function looksLikeCredential(value: string): boolean {
  // Cheap first: most values hold none of the markers.
  if (!/scram|md5|password/i.test(value)) return false;
  return CREDENTIAL_SHAPES.some((re) => re.test(value));
}

/** Catalog text (a comment, a default, a definition) with a credential in it, withheld whole. */
export function withholdCredential<T extends string | null>(text: T): T | typeof WITHHELD {
  return text !== null && looksLikeCredential(text) ? WITHHELD : text;
}
