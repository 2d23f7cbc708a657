/** Quote an SQL identifier the way PostgreSQL's quote_ident does (always quoted). */
export function quoteIdent(name: string): string {
  if (name.includes('\0')) throw new TypeError('identifier contains a NUL byte');
  return `"${name.replaceAll('"', '""')}"`;
}
