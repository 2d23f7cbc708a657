// The connection URL as node-postgres gets it: sslmode read as libpq reads it.
//
// pg 8 reads prefer, require and verify-ca as verify-full (and says so in a SECURITY WARNING
// on stderr), and allow, which it does not know, as verify-full in either reading. PostgreSQL users
// mean libpq's modes, so pgmcp asks pg-connection-string for them (uselibpqcompat=true):
// require encrypts without verifying the certificate, verify-ca checks it against
// sslrootcert, verify-full also checks the host name. libpq's allow and prefer try a second
// way when the first fails; node-postgres cannot retry, so pgmcp makes libpq's first attempt
// only: allow connects unencrypted, prefer encrypted without verifying.

const COMPAT = 'uselibpqcompat';

/** The URL to hand to node-postgres (it still holds the password: never print it). */
export function driverUrl(url: string): string {
  const hashAt = url.indexOf('#');
  let head = hashAt === -1 ? url : url.slice(0, hashAt);
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  head = head.replace(/([?&])sslmode=allow(?=&|$)/g, '$1sslmode=disable');
  // Configuration accepts the parameter only as `true` (config/database-url.ts).
  if (!new RegExp(`[?&]${COMPAT}=`).test(head)) {
    head += `${head.includes('?') ? '&' : '?'}${COMPAT}=true`;
  }
  return head + fragment;
}
