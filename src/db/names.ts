// The name a database is known by, from its URL alone: serverInfo can be answered before the
// driver loads or a connection opens.
import { parse as parseConnectionString } from 'pg-connection-string';
import { connectTargets } from '../config/multi-host.js';
import { driverUrl } from './driver-url.js';

/** The embedded database's name; a URL's database name, or `postgres` when it names none. */
export function databaseNameOf(url: string | null): string {
  if (url === null) return 'pgmcp-embedded';
  // As the pool reads it: pg-connection-string warns on stderr about sslmode otherwise.
  const targets = connectTargets(url);
  const one = typeof targets === 'string' ? url : targets.urlFor(targets.hosts[0]!);
  return parseConnectionString(driverUrl(one)).database || 'postgres';
}
