// One internal error type for every layer; only the edges (mcp/, http/, api/) map it to a wire form.

export type ErrorCategory =
  | 'input' // the caller sent something wrong: fix the request
  | 'not_found'
  | 'auth' // authentication required or failed
  | 'forbidden'
  | 'timeout'
  | 'unavailable' // database down, pool exhausted, embedded child restarting
  | 'conflict'
  | 'database' // SQL or business error raised by PostgreSQL
  | 'config'
  | 'internal';

export interface AppErrorOptions {
  category: ErrorCategory;
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: string;
  readonly category: ErrorCategory;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, options: AppErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.category = options.category;
    this.details = options.details;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/**
 * Error codes: PGMCP + three digits, grouped by layer. Catalogued in docs/errors.md;
 * a unit test keeps the two in step.
 */
export const ErrorCodes = {
  // 1xx config
  CONFIG_INVALID: 'PGMCP101',
  CONFIG_FILE_UNREADABLE: 'PGMCP102',
  // 2xx db
  DB_UNAVAILABLE: 'PGMCP201',
  DB_QUERY_FAILED: 'PGMCP202',
  DB_TIMEOUT: 'PGMCP203',
  DB_CANCELLED: 'PGMCP204',
  EMBEDDED_LOCKED: 'PGMCP205',
  EMBEDDED_START_FAILED: 'PGMCP206',
  RESULT_TOO_LARGE: 'PGMCP207',
  // 3xx tools
  TOOL_INPUT_INVALID: 'PGMCP301',
  RESOURCE_NOT_FOUND: 'PGMCP303',
  WRITE_NOT_ALLOWED: 'PGMCP306',
  CAPABILITY_MISSING: 'PGMCP307',
  AUTH_REQUIRED: 'PGMCP308',
  DATABASE_NOT_FOUND: 'PGMCP309',
  DATABASE_DENIED: 'PGMCP310',
  VECTOR_UNAVAILABLE: 'PGMCP311',
  CREDENTIALS_REFUSED: 'PGMCP312',
  POLICY_INDIRECT_ACCESS: 'PGMCP313',
  MASKED_COLUMN_DECIDES: 'PGMCP314',
  FUNCTION_NOT_ANALYSABLE: 'PGMCP315',
  // 6xx auth and the state database
  STATE_UNAVAILABLE: 'PGMCP601',
  STATE_SCHEMA_MISMATCH: 'PGMCP602',
  LOGIN_FAILED: 'PGMCP603',
  LOGIN_LOCKED: 'PGMCP604',
  AUTH_INVALID_INPUT: 'PGMCP605',
  AUTH_NOT_FOUND: 'PGMCP606',
  AUTH_CONFLICT: 'PGMCP607',
  // 7xx embedding providers
  EMBEDDING_CONFIG: 'PGMCP701',
  EMBEDDING_UNAVAILABLE: 'PGMCP702',
  EMBEDDING_MODEL_UNKNOWN: 'PGMCP703',
  EMBEDDING_DIMENSION_MISMATCH: 'PGMCP704',
  // 9xx internal
  INTERNAL: 'PGMCP900',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];
