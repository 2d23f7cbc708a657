// What opening a Database takes (createDatabase in database.ts).
import type { ReplicaSettings } from './replicas.js';

export interface DatabaseOptions {
  /** postgres:// URL; null runs the embedded PGlite. */
  url: string | null;
  poolSize: number;
  /** Calls that may wait for a connection when all are busy (default 100). */
  queueLimit?: number;
  /** How long a call waits for a connection before it is refused (default 10000). */
  queueTimeoutMs?: number;
  /** How long opening a connection may take (default 10000). */
  connectTimeoutMs?: number;
  /** How long an unused connection stays in the pool (default 30000). */
  idleTimeoutMs?: number;
  embedded: { dataDir: string; demo: boolean };
  /** Every call runs as this role (SET LOCAL ROLE); null: the login role. */
  role?: string | null;
  /** The configured name (`databases[].name`); absent: the URL's database, or pgmcp-embedded. */
  name?: string;
  /** Read replicas for read-only calls (replicas.ts); absent: none. */
  replicas?: ReplicaSettings;
}
