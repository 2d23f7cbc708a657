// A postgres:// URL checked when the configuration is read, the way node-postgres will read it
// (pg-connection-string), so a URL the driver cannot use is reported with its key and source
// rather than at the first connection. pg-connection-string's own parse is not called: it
// reads the sslcert/sslkey/sslrootcert files and warns on stderr. The problems never quote
// the URL: it may hold a password.

import { connectTargets } from './multi-host.js';

/** libpq's sslmode values; pgmcp reads each as libpq does (see docs/configuration.md). */
export const SSL_MODES = [
  'disable',
  'allow',
  'prefer',
  'require',
  'verify-ca',
  'verify-full',
] as const;

const SSL_NEGOTIATIONS = ['postgres', 'direct'];
// Where the driver puts a host when the URL has none (postgres://user@/db?host=/socket).
const NO_HOST = '___DUMMY___';

export interface ParsedDatabaseUrl {
  url: URL;
  /** The host part is empty (a socket directory in ?host=, or the driver's default). */
  hostless: boolean;
}

/** The URL as node-postgres parses it, or null when the driver could not. */
export function parseDatabaseUrl(text: string): ParsedDatabaseUrl | null {
  // The driver percent-encodes a string holding spaces or stray '%' before parsing it.
  const encoded = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(text)
    ? encodeURI(text).replace(/%25(\d\d)/g, '%$1')
    : text;
  try {
    return { url: new URL(encoded, 'postgres://base'), hostless: false };
  } catch {
    // As the driver does, once more with a placeholder host.
    try {
      return {
        url: new URL(encoded.replace('@/', `@${NO_HOST}/`), 'postgres://base'),
        hostless: true,
      };
    } catch {
      return null;
    }
  }
}

/** Why node-postgres could not use this URL as pgmcp hands it over, or null if it can. */
export function databaseUrlProblem(text: string): string | null {
  // Several hosts (libpq's multi-host form): each is one URL the driver reads; the first
  // stands for all in the checks below (they share everything but host and port).
  const targets = connectTargets(text);
  const several = typeof targets !== 'string' && targets.hosts.length > 1;
  const parsed = parseDatabaseUrl(several ? targets.urlFor(targets.hosts[0]!) : text);
  if (parsed === null) {
    return 'expected a valid postgres:// URL (check the host and port; percent-encode special characters in the user name and password)';
  }
  const params = parsed.url.searchParams;
  for (const port of params.getAll('port')) {
    if (!/^\d{1,5}$/.test(port) || Number(port) > 65535) {
      return `expected the port parameter to be a port number, got ${shown(port)}`;
    }
  }
  const modes = params.getAll('sslmode');
  for (const mode of modes) {
    if (!(SSL_MODES as readonly string[]).includes(mode)) {
      return `expected sslmode to be one of ${SSL_MODES.join(', ')}, got ${shown(mode)}`;
    }
  }
  // The driver keeps the last one of a repeated parameter.
  const sslmode = modes.at(-1);
  for (const compat of params.getAll('uselibpqcompat')) {
    if (compat !== 'true') {
      return 'uselibpqcompat: pgmcp always reads sslmode as libpq does; remove the parameter';
    }
  }
  if (sslmode === 'verify-ca' && !params.has('sslrootcert')) {
    return 'sslmode=verify-ca needs sslrootcert=<file>, the certificate authority to verify the server against';
  }
  const negotiation = params.getAll('sslnegotiation').at(-1);
  if (negotiation !== undefined) {
    if (!SSL_NEGOTIATIONS.includes(negotiation)) {
      return `expected sslnegotiation to be one of ${SSL_NEGOTIATIONS.join(', ')}, got ${shown(negotiation)}`;
    }
    if (negotiation === 'direct' && (sslmode === 'disable' || sslmode === 'allow')) {
      return `sslnegotiation=direct needs SSL: use sslmode=require or stronger, not ${sslmode}`;
    }
  }
  // What only pgmcp reads: target_session_attrs, load_balance_hosts, connect_timeout, lists.
  return typeof targets === 'string' ? targets : null;
}

// A parameter's value is not a secret, but a long one is cut so the message stays one line.
function shown(value: string): string {
  // Only a value that looks like a setting is repeated: a mis-parsed URL (a password holding
  // `?` or `@`) can put part of a password where a parameter's value is read.
  return /^[\w.-]{1,24}$/.test(value) ? JSON.stringify(value) : 'a value it does not take';
}
