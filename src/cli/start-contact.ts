// What pgmcp asks each served database while it starts. The first question (does it hold
// pgmcp's state schema?) is also the first connection the server makes to it, so its failure
// says, at no extra wait, that the database cannot be reached now and why: the start banner and
// a warning name it, and the server starts anyway (it connects once the database answers; /ready
// says the default one is down meanwhile).
import type { Logger } from 'pino';
import { ErrorCodes, isAppError } from '../core/errors.js';
import type { Database } from '../db/database.js';

/** A database that could not be reached at start, and why, in words safe to print. */
export interface Unreachable {
  database: string;
  reason: string;
  /** A `databases:` entry (`pgmcp doctor` alone checks `database.url`). */
  entry: boolean;
}

/** Whether `sql` (one row, column ok) says yes; `otherwise` when it cannot be asked. */
export async function asks(db: Database, sql: string, otherwise: boolean): Promise<boolean> {
  try {
    const { rows } = await db.withOwnConnection((client) => client.query<{ ok: boolean }>(sql));
    return rows[0]?.ok === true;
  } catch {
    return otherwise;
  }
}

/**
 * Whether the served database holds the state schema (a state.url naming it; unknown, as when
 * it is down: yes, so it is denied as a state schema would be), and, when the connection
 * failed, why.
 */
export async function firstContact(
  db: Database,
  stateSchema: string,
): Promise<{ holdsState: boolean; unreachable: string | null }> {
  try {
    const { rows } = await db.withOwnConnection((client) =>
      client.query<{ ok: boolean }>(`SELECT to_regnamespace('${stateSchema}') IS NOT NULL AS ok`),
    );
    return { holdsState: rows[0]?.ok === true, unreachable: null };
  } catch (error) {
    return { holdsState: true, unreachable: unreachableReason(error) };
  }
}

/**
 * Why a connection could not be opened, from the PGMCP201 error the pool gives: the server's
 * words (`database "x" does not exist`, `password authentication failed for user "u"`) or a
 * socket error's meaning (`connection refused (ECONNREFUSED)`); never a URL or a password.
 * Null for any other failure (the database answered).
 */
export function unreachableReason(error: unknown): string | null {
  if (!isAppError(error) || error.code !== ErrorCodes.DB_UNAVAILABLE) return null;
  const { reason, hosts } = error.details ?? {};
  const text = typeof reason === 'string' ? reason : 'the connection failed';
  if (!Array.isArray(hosts) || hosts.length === 0) return text;
  const tried = (hosts as { host: string; reason: string }[])
    .map((h) => `${h.host}: ${h.reason}`)
    .join('; ');
  return `${text} (${tried})`;
}

/** The warning, one line per database, that follows the start banner's `database:` line. */
export function unreachableLines(unreachable: readonly Unreachable[]): string[] {
  return unreachable.map((u) => `warning: ${sentence(u)}`);
}

/** The same warning in the log (stderr), for a service whose stdout nobody reads. */
export function warnUnreachable(logger: Logger, unreachable: readonly Unreachable[]): void {
  for (const u of unreachable) {
    logger.warn({ database: u.database, reason: u.reason }, sentence(u));
  }
}

function sentence({ database, reason, entry }: Unreachable): string {
  const doctor = entry ? '`pgmcp doctor --database URL` with its URL' : '`pgmcp doctor`';
  return `database ${database} cannot be reached now: ${reason}. pgmcp serves anyway and connects once it answers; run ${doctor} to check the connection.`;
}
