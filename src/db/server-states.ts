// SQLSTATEs whose cause is the database server's state (shutting down, starting, out of
// resources, a concurrent transaction, a standby) rather than the statement: each gets pgmcp's
// own words, a code and a category that say what to do. PostgreSQL's message is kept for the
// log (the error's cause), never shown as the answer's text: it may name other sessions.
import { ErrorCodes, type ErrorCategory } from '../core/errors.js';

export interface StateAnswer {
  readonly code: string;
  readonly category: ErrorCategory;
  readonly message: string;
  /** A short reason, for messages that name the database (tools/database-routing.ts). */
  readonly reason: string;
}

const AGAIN = 'Try again shortly.';

const unavailable = (reason: string, message: string): StateAnswer => ({
  code: ErrorCodes.DB_UNAVAILABLE,
  category: 'unavailable',
  message: `${message} ${AGAIN}`,
  reason,
});

const EXACT: Readonly<Record<string, StateAnswer>> = {
  '57P01': unavailable(
    'the server ended the connection: it is shutting down, or an administrator terminated the session',
    'The database server ended the connection: it is shutting down, or an administrator terminated the session.',
  ),
  '57P02': unavailable(
    'the server is restarting after a crash',
    'The database server is restarting after another of its processes crashed.',
  ),
  '57P03': unavailable(
    'the server is starting up or shutting down',
    'The database server is starting up or shutting down and accepts no connections yet.',
  ),
  '57P04': unavailable(
    'the database was dropped',
    'The database was dropped while the call ran; it is gone until it is created again.',
  ),
  '57P05': unavailable(
    'the server closed an idle connection',
    'The database server closed an idle connection (idle_session_timeout).',
  ),
};

const RESOURCES: Readonly<Record<string, string>> = {
  '53000': 'resources',
  '53100': 'disk space',
  '53200': 'memory',
  '53300': 'connection slots (too many connections)',
  '53400': 'room under a configured limit',
};

/**
 * pgmcp's answer to a server-state SQLSTATE, or null when the statement itself is the cause
 * (PostgreSQL's own message then says best what is wrong). `readOnly`: the call ran in a
 * read-only transaction; `retried`: a read-only call met the conflict twice.
 */
export function serverStateAnswer(
  sqlstate: string,
  context: { readOnly?: boolean; retried?: boolean } = {},
): StateAnswer | null {
  const exact = EXACT[sqlstate];
  if (exact) return exact;
  if (sqlstate.startsWith('08')) {
    return unavailable(
      `the connection failed (${sqlstate})`,
      `The connection to the database failed (SQLSTATE ${sqlstate}).`,
    );
  }
  if (sqlstate.startsWith('53')) {
    const what = RESOURCES[sqlstate] ?? 'resources';
    return {
      code: ErrorCodes.DB_OUT_OF_RESOURCES,
      category: 'unavailable',
      message: `The database server is out of ${what}. Try again later; if it persists, its administrator must make room.`,
      reason: `the server is out of ${what}`,
    };
  }
  if (sqlstate === '40001' || sqlstate === '40P01') {
    const what =
      sqlstate === '40001'
        ? 'a concurrent transaction made it fail to serialize'
        : 'it deadlocked with a concurrent transaction';
    const then = context.retried
      ? 'It was run again once and met the same conflict; try again in a moment.'
      : context.readOnly
        ? 'Try again.'
        : 'Nothing of it was committed; run it again.';
    return {
      code: ErrorCodes.DB_CONFLICT,
      category: 'conflict',
      message: `The statement was stopped because ${what}. ${then}`,
      reason: what,
    };
  }
  if (sqlstate === '25006' && context.readOnly === false) {
    return {
      code: ErrorCodes.DB_READ_ONLY,
      category: 'unavailable',
      message:
        'The database server accepts only reads right now (a standby in recovery, or default_transaction_read_only is on); the write did not run.',
      reason: 'the server accepts only reads',
    };
  }
  return null;
}

/** Whether a read-only call that failed with this SQLSTATE may run again once. */
export const isRetryableConflict = (sqlstate: unknown): boolean =>
  sqlstate === '40001' || sqlstate === '40P01';
