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
  CONFIG_FOREIGN_UNSUPPORTED: 'PGMCP103',
  CONFIG_FOREIGN_CONFLICT: 'PGMCP104',
  CONFIG_IMPORT_FAILED: 'PGMCP105',
  RUNTIME_UNSUPPORTED: 'PGMCP109',
  // 2xx db
  DB_UNAVAILABLE: 'PGMCP201',
  DB_QUERY_FAILED: 'PGMCP202',
  DB_TIMEOUT: 'PGMCP203',
  DB_CANCELLED: 'PGMCP204',
  EMBEDDED_LOCKED: 'PGMCP205',
  EMBEDDED_START_FAILED: 'PGMCP206',
  RESULT_TOO_LARGE: 'PGMCP207',
  DB_OUT_OF_RESOURCES: 'PGMCP208',
  DB_CONFLICT: 'PGMCP209',
  DB_READ_ONLY: 'PGMCP210',
  DB_PERMISSION_DENIED: 'PGMCP211',
  DB_BUSY: 'PGMCP212',
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
  CATALOG_NOT_FILTERED: 'PGMCP316',
  EXTENSION_UNAVAILABLE: 'PGMCP317',
  // 320–329 the registry's compatibility interfaces (pgmi)
  PGMI_SCHEMA_FOREIGN: 'PGMCP320',
  PGMI_NAMES_UNKNOWN: 'PGMCP321',
  PGMI_NOT_FOUND: 'PGMCP322',
  // 6xx auth and the state database
  STATE_UNAVAILABLE: 'PGMCP601',
  STATE_SCHEMA_MISMATCH: 'PGMCP602',
  LOGIN_FAILED: 'PGMCP603',
  LOGIN_LOCKED: 'PGMCP604',
  AUTH_INVALID_INPUT: 'PGMCP605',
  AUTH_NOT_FOUND: 'PGMCP606',
  AUTH_CONFLICT: 'PGMCP607',
  // 61x OAuth resource server, 62x-63x the built-in authorization server
  OAUTH_TOKEN_INVALID: 'PGMCP610',
  OAUTH_TOKEN_EXPIRED: 'PGMCP611',
  OAUTH_WRONG_AUDIENCE: 'PGMCP612',
  OAUTH_ISSUER_UNAVAILABLE: 'PGMCP613',
  OAUTH_TOKEN_IN_QUERY: 'PGMCP614',
  OAUTH_TOKEN_TOO_LARGE: 'PGMCP615',
  OAUTH_INSUFFICIENT_SCOPE: 'PGMCP616',
  OAUTH_INVALID_REQUEST: 'PGMCP620',
  OAUTH_INVALID_CLIENT: 'PGMCP621',
  OAUTH_REDIRECT_MISMATCH: 'PGMCP622',
  OAUTH_INVALID_GRANT: 'PGMCP623',
  OAUTH_CSRF: 'PGMCP624',
  OAUTH_ACCESS_DENIED: 'PGMCP625',
  OAUTH_REGISTRATION_REFUSED: 'PGMCP626',
  OAUTH_CLIENT_METADATA_UNAVAILABLE: 'PGMCP627',
  OAUTH_UNSUPPORTED: 'PGMCP628',
  CLUSTER_REDIS_UNAVAILABLE: 'PGMCP629',
  // 7xx embedding providers
  EMBEDDING_CONFIG: 'PGMCP701',
  EMBEDDING_UNAVAILABLE: 'PGMCP702',
  EMBEDDING_MODEL_UNKNOWN: 'PGMCP703',
  EMBEDDING_DIMENSION_MISMATCH: 'PGMCP704',
  // 8xx llm (providers, the chat loop)
  LLM_NOT_CONFIGURED: 'PGMCP801',
  LLM_PROVIDER_UNKNOWN: 'PGMCP802',
  LLM_PROVIDER_FAILED: 'PGMCP803',
  LLM_LIMIT_REACHED: 'PGMCP804',
  CHAT_INVALID: 'PGMCP805',
  TOOL_REPEATED_FAILURE: 'PGMCP806',
  WRITE_NEEDS_APPROVAL: 'PGMCP807',
  // 81x conversations and chat compaction
  CONVERSATION_NOT_FOUND: 'PGMCP810',
  CONVERSATION_INVALID: 'PGMCP811',
  CONVERSATION_OWNER_REQUIRED: 'PGMCP812',
  COMPACTION_INVALID: 'PGMCP813',
  CONVERSATION_HISTORY_CONFLICT: 'PGMCP814',
  // 9xx internal
  INTERNAL: 'PGMCP900',
} as const;
