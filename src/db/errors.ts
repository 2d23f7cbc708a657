// PostgreSQL errors keep every field; they are classified by SQLSTATE (never instanceof:
// errors from PGlite's bundled driver are not pg.DatabaseError).
import { redactUrl } from '../config/redact.js';
import { AppError, ErrorCodes, type ErrorCategory } from '../core/errors.js';
import { serverStateAnswer } from './server-states.js';

export interface PgErrorFields {
  code?: string;
  message: string;
  detail?: string;
  hint?: string;
  position?: string;
  where?: string;
  schema?: string;
  table?: string;
  column?: string;
  constraint?: string;
}

// A socket error is told by its code, not its message, which names the database's address:
// a caller of a tool need not learn where the database lives (`pgmcp doctor` shows it).
const SOCKET_CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EPIPE: 'connection closed',
  ENOENT: 'socket or file not found',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

// TLS refusals: the server without SSL (node-postgres), or a certificate that fails the check
// the sslmode asks for (Node's and OpenSSL's codes).
const TLS_MESSAGE = /SSL connection|certificate/i;
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_|HOSTNAME_)/;

function categoryOf(sqlstate: string): ErrorCategory {
  // 28xxx is pgmcp's own login to the database failing: the server's problem, not the caller's.
  if (sqlstate.startsWith('28')) return 'unavailable';
  if (sqlstate.startsWith('23')) return 'conflict';
  return 'database';
}

export function isPgError(error: unknown): error is PgErrorFields & Error {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === 'string' &&
    /^[0-9A-Z]{5}$/.test((error as unknown as { code: string }).code)
  );
}

/** A socket error's code (EPIPE looks like a SQLSTATE, so the code is what tells). */
function socketCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && Object.hasOwn(SOCKET_CAUSES, code) ? code : undefined;
}

export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (socketCode(error) !== undefined || (typeof code === 'string' && TLS_CODE.test(code))) {
    return true;
  }
  // A server's ERROR may say anything ("relation certificate does not exist").
  if (isPgError(error)) return false;
  return (
    TLS_MESSAGE.test(error.message) ||
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Too many connections|^SASL: /i.test(
      error.message,
    )
  );
}

/**
 * Why a connection failed or broke, in words a caller may read: PostgreSQL's or the TLS
 * layer's own message, a socket error's meaning without the address. Never a password.
 */
export function connectionReason(error: unknown): string {
  const code = socketCode(error);
  if (code !== undefined) return `${SOCKET_CAUSES[code]} (${code})`;
  // The server's state (starting up, out of connection slots …) in pgmcp's words.
  if (isPgError(error)) {
    const state = serverStateAnswer(error.code as string);
    if (state) return `${state.reason} (${String(error.code)})`;
  }
  return driverMessage(error);
}

/** The driver's own message (first line, URLs redacted), with the address: for operators. */
export function driverMessage(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  let text = error instanceof Error ? error.message : String(error);
  // Node's AggregateError (every address of a host name refused) has no message of its own.
  if (text === '' && error instanceof AggregateError) {
    text = error.errors
      .map((e: unknown) => (e instanceof Error ? e.message : String(e)))
      .join('; ');
  }
  if (text === '' && typeof code === 'string') text = code;
  const line = (text.split('\n')[0] ?? '').trim();
  const safe = line.replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, (url) => redactUrl(url));
  return safe.length > 300 ? `${safe.slice(0, 297)}...` : safe || 'unknown error';
}

/** For the CLI's operator: the driver's own words for a failed connection, address and all. */
export function connectionDetail(error: unknown): string {
  const unavailable = error instanceof AppError && error.code === ErrorCodes.DB_UNAVAILABLE;
  return unavailable && error.cause !== undefined
    ? driverMessage(error.cause)
    : driverMessage(error);
}

/**
 * Whatever failed while a connection was being opened: the database is unavailable to pgmcp,
 * be it refused, unreachable, an SSL or certificate problem, a login or a database name the
 * server turned down. The reason goes into the message and details; never an internal error.
 */
export function connectFailure(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const reason = connectionReason(error);
  const details: Record<string, unknown> = { reason };
  if (isPgError(error) && socketCode(error) === undefined) details['sqlstate'] = error.code;
  return new AppError(
    ErrorCodes.DB_UNAVAILABLE,
    `The database is unavailable; pgmcp cannot connect to it: ${reason}.`,
    { category: 'unavailable', details, cause: error },
  );
}

/** What the call was, for the answers that depend on it. */
export interface FailureContext {
  timeoutMs?: number;
  /** The caller cancelled the call. */
  cancelled?: boolean;
  /** The call ran in a read-only transaction. */
  readOnly?: boolean;
  /** A read-only call ran again after a conflict and met it again. */
  retried?: boolean;
}

const FIELDS = [
  'detail',
  'hint',
  'position',
  'where',
  'schema',
  'table',
  'column',
  'constraint',
] as const;

/** Map a driver error to AppError, keeping SQLSTATE, detail, hint and position. */
export function fromPgError(error: unknown, context: FailureContext = {}): AppError {
  if (error instanceof AppError) return error;
  if (isPgError(error) && socketCode(error) === undefined) {
    const code = error.code as string;
    const details: Record<string, unknown> = { sqlstate: code };
    // A Bind PostgreSQL refused for its number of values is the statement's fault: the session
    // is intact (lostConnection agrees).
    const state = bindRefused(error) ? null : serverStateAnswer(code, context);
    if (state) {
      // The server's own text and detail stay in the log: a deadlock's detail quotes other
      // sessions' statements.
      details['reason'] = state.reason;
      return new AppError(state.code, state.message, {
        category: state.category,
        details,
        cause: error,
      });
    }
    for (const key of FIELDS) if (error[key] !== undefined) details[key] = error[key];
    if (code === '57014') return cancelled(error, details, context);
    if (code === '25006' && context.readOnly === true) {
      return new AppError(
        ErrorCodes.WRITE_NOT_ALLOWED,
        `${error.message}. The call runs read-only: the statement (or a function it calls) writes; ask for a read, or for a call on a database configured with allowWrites.`,
        { category: 'input', details, cause: error },
      );
    }
    if (code === '42501') {
      return new AppError(
        ErrorCodes.DB_PERMISSION_DENIED,
        `${error.message}. The role the call runs as lacks this privilege: use objects it may read, or ask the database's administrator for a GRANT.`,
        { category: 'forbidden', details, cause: error },
      );
    }
    const category = categoryOf(code);
    const code_ =
      category === 'unavailable' ? ErrorCodes.DB_UNAVAILABLE : ErrorCodes.DB_QUERY_FAILED;
    return new AppError(code_, error.message, { category, details, cause: error });
  }
  if (isConnectionError(error)) {
    const reason = connectionReason(error);
    return new AppError(
      ErrorCodes.DB_UNAVAILABLE,
      `The database is unavailable; the connection failed: ${reason}. Try again shortly.`,
      { category: 'unavailable', details: { reason }, cause: error },
    );
  }
  return new AppError(ErrorCodes.INTERNAL, 'Internal error while talking to the database.', {
    category: 'internal',
    cause: error,
  });
}

/**
 * 57014: the caller's cancel, the statement timeout, or a cancel that came from elsewhere (an
 * administrator's pg_cancel_backend, a standby's recovery conflict), which PostgreSQL tells
 * apart only by its message.
 */
function cancelled(
  error: PgErrorFields,
  details: Record<string, unknown>,
  context: FailureContext,
): AppError {
  if (context.cancelled) {
    return new AppError(ErrorCodes.DB_CANCELLED, 'The query was cancelled.', {
      category: 'input',
      details,
      cause: error,
    });
  }
  if (/statement timeout/i.test(error.message) || context.timeoutMs === undefined) {
    const limit = context.timeoutMs !== undefined ? ` (limit ${context.timeoutMs} ms)` : '';
    return new AppError(
      ErrorCodes.DB_TIMEOUT,
      `The query timed out${limit}. Narrow it (filters, LIMIT, indexed columns) or ask for a higher statement timeout.`,
      { category: 'timeout', details, cause: error },
    );
  }
  return new AppError(
    ErrorCodes.DB_CANCELLED,
    'The query was cancelled on the database server (by an administrator, or by the server itself); pgmcp did not ask for it. Try again.',
    {
      category: 'unavailable',
      details: { ...details, reason: 'cancelled on the server' },
      cause: error,
    },
  );
}

/** The message for a model: SQLSTATE, message, detail, hint, and the position marked in the query. */
export function describeDbError(error: AppError, query?: string): string {
  const d = error.details ?? {};
  const lines = [
    d['sqlstate'] ? `ERROR ${String(d['sqlstate'])}: ${error.message}` : error.message,
  ];
  if (d['detail']) lines.push(`DETAIL: ${String(d['detail'])}`);
  if (d['hint']) lines.push(`HINT: ${String(d['hint'])}`);
  const position = Number(d['position']);
  if (query && Number.isInteger(position) && position > 0 && position <= query.length + 1) {
    const before = query.slice(0, position - 1);
    const lineStart = before.lastIndexOf('\n') + 1;
    const lineEnd = query.indexOf('\n', position - 1);
    const line = query.slice(lineStart, lineEnd === -1 ? undefined : lineEnd);
    lines.push(`LINE: ${line}`, `      ${' '.repeat(position - 1 - lineStart)}^`);
  }
  return lines.join('\n');
}

/**
 * PostgreSQL's refusal of a Bind whose number of values differs from the statement's
 * parameters: an ERROR after which the session goes on. Recognised by its text too, not by
 * SQLSTATE 08P01 alone: a pooler (older PgBouncer) sends its own errors, after which it closes
 * the connection, as ERROR 08P01. (With a translated server message it is not recognised, and
 * is taken for a lost connection, as any 08xxx is.)
 */
function bindRefused(error: unknown): boolean {
  const { code, severity, message } = error as {
    code?: string;
    severity?: string;
    message?: string;
  };
  return (
    code === '08P01' &&
    severity === 'ERROR' &&
    /^bind message supplies \d+ parameters?, but prepared statement "[^"]*" requires \d+$/.test(
      message ?? '',
    )
  );
}

/**
 * The connection itself failed (as opposed to a statement): the server shut down, crashed,
 * restarted, or the network dropped. Any connection to that server is suspect. Not a Bind
 * refused for its number of values: the session stays.
 */
export function lostConnection(error: unknown): boolean {
  if (isPgError(error) && !isConnectionError(error)) {
    const code = (error as { code: string }).code;
    if (bindRefused(error)) return false;
    return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03';
  }
  return isConnectionError(error);
}
