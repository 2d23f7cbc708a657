// The name a database is known by, from its URL alone: serverInfo can be answered before the
// driver loads or a connection opens.
import { parse as parseConnectionString } from 'pg-connection-string';

/** The embedded database's name; a URL's database name, or `postgres` when it names none. */
export function databaseNameOf(url: string | null): string {
  if (url === null) return 'pgmcp-embedded';
  return parseConnectionString(url).database || 'postgres';
}
