// PostgreSQL errors keep every field; they are classified by SQLSTATE (never instanceof:
// errors from PGlite's bundled driver are not pg.DatabaseError).
import { AppError, ErrorCodes, type ErrorCategory } from '../core/errors.js';

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

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'ENOENT',
  'EHOSTUNREACH',
]);

function categoryOf(sqlstate: string): ErrorCategory {
  if (
    sqlstate.startsWith('08') ||
    sqlstate === '57P01' ||
    sqlstate === '57P02' ||
    sqlstate === '57P03' ||
    sqlstate === '53300'
  ) {
    return 'unavailable';
  }
  // 28xxx is pgmcp's own login to the database failing: the server's problem, not the caller's.
  if (sqlstate.startsWith('28')) return 'unavailable';
  if (sqlstate === '42501') return 'forbidden';
  if (sqlstate.startsWith('23') || sqlstate === '40001' || sqlstate === '40P01') return 'conflict';
  return 'database';
}

export function isPgError(error: unknown): error is PgErrorFields & Error {
  return (
    error instanceof Error &&
    typeof (error as { code?: unknown }).code === 'string' &&
    /^[0-9A-Z]{5}$/.test((error as unknown as { code: string }).code)
  );
}

export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Too many connections/i.test(
    error.message,
  );
}

/** Map a driver error to AppError, keeping SQLSTATE, detail, hint and position. */
export function fromPgError(
  error: unknown,
  context: { timeoutMs?: number; cancelled?: boolean } = {},
): AppError {
  if (error instanceof AppError) return error;
  if (isPgError(error)) {
    const code = error.code as string;
    const details: Record<string, unknown> = { sqlstate: code };
    for (const key of [
      'detail',
      'hint',
      'position',
      'where',
      'schema',
      'table',
      'column',
      'constraint',
    ] as const) {
      if (error[key] !== undefined) details[key] = error[key];
    }
    if (code === '57014') {
      if (context.cancelled) {
        return new AppError(ErrorCodes.DB_CANCELLED, 'The query was cancelled.', {
          category: 'input',
          details,
          cause: error,
        });
      }
      const limit = context.timeoutMs !== undefined ? ` (limit ${context.timeoutMs} ms)` : '';
      return new AppError(
        ErrorCodes.DB_TIMEOUT,
        `The query timed out${limit}. Narrow it (filters, LIMIT, indexed columns) or ask for a higher statement timeout.`,
        { category: 'timeout', details, cause: error },
      );
    }
    const category = categoryOf(code);
    const code_ =
      category === 'unavailable' ? ErrorCodes.DB_UNAVAILABLE : ErrorCodes.DB_QUERY_FAILED;
    return new AppError(code_, error.message, { category, details, cause: error });
  }
  if (isConnectionError(error)) {
    return new AppError(
      ErrorCodes.DB_UNAVAILABLE,
      'The database is unavailable; try again shortly.',
      {
        category: 'unavailable',
        cause: error,
      },
    );
  }
  return new AppError(ErrorCodes.INTERNAL, 'Internal error while talking to the database.', {
    category: 'internal',
    cause: error,
  });
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
