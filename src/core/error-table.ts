// The one table from a failure to its answer on every edge. An AppError's category gives its row;
// a code may override part of it (CODE_ANSWERS lists every code, so a new one does not compile
// until it is placed). The HTTP layer's own refusals, which are no AppError, are rows of
// HTTP_REFUSALS, and an MCP answer's HTTP status is MCP_HTTP_STATUS by its JSON-RPC code.
// Each edge applies the table in one place: mcp/errors.ts (JSON-RPC error or isError result),
// http/status.ts (an MCP answer's HTTP status), http/refuse.ts (what HTTP refuses before a
// route runs), api/errors.ts (REST `{"error": …}`), http/oauth-server/token-routes.ts (the
// token endpoint's RFC 6749 body), cli/commands.ts (the exit status). docs/errors.md shows it.
import { randomBytes } from 'node:crypto';
import { ErrorCodes, isAppError, type AppError, type ErrorCategory } from './errors.js';

/** The JSON-RPC error codes MCP uses (mcp/jsonrpc.ts re-exports them). */
export const RpcCodes = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Over the rate limit (implementation-defined server error range). */
  RATE_LIMITED: -32000,
  AUTH_REQUIRED: -32001,
  /** The SDKs' code for an unknown or ended session; the same number as AUTH_REQUIRED. */
  SESSION_NOT_FOUND: -32001,
  RESOURCE_NOT_FOUND: -32002,
  HEADER_MISMATCH: -32020,
  MISSING_CAPABILITY: -32021,
  UNSUPPORTED_VERSION: -32022,
} as const;

type RpcCode = (typeof RpcCodes)[keyof typeof RpcCodes];

/**
 * How MCP answers a failure a tool, resource or prompt handler raised:
 * - `result`: the handler's own failure: a tool's isError result; a resource read's `resource`
 *   code when the row has one; any other request's -32603 with the message;
 * - `protocol`: a JSON-RPC error with `rpc`, in both eras;
 * - `protocol-modern`: `protocol` in the 2026-07-28 era, `result` in the legacy one;
 * - `reference`: a bug: -32603 with a log reference, never the message.
 * A failure that escapes any other request is -32603 with its message (`reference`: the reference).
 */
type McpForm = 'result' | 'protocol' | 'protocol-modern' | 'reference';

/**
 * What the REST body `{"error": …}` says: the error's message; the message and its `code`; or,
 * for what failed on the server's side, only a reference to the log (`unavailable`: naming the
 * database when the error does, with Retry-After).
 */
type RestBody = 'message' | 'message-and-code' | 'reference' | 'unavailable';

interface ErrorAnswer {
  readonly mcp: McpForm;
  /** The JSON-RPC error code when MCP answers with an error (protocol forms). */
  readonly rpc: number;
  /** The JSON-RPC code when a resource read fails with it, per era; absent: as any request. */
  readonly resource?: { readonly legacy: number; readonly modern: number };
  /** The HTTP status of the REST answer. */
  readonly status: number;
  readonly rest: RestBody;
  /** A REST 401 carries `WWW-Authenticate: Bearer`. */
  readonly challenge: boolean;
  /** REST Retry-After: seconds, or the error's `details.retryAfterSeconds`; null: none. */
  readonly retryAfter: number | 'details' | null;
  /** The token endpoint's RFC 6749 answer; absent: not one that endpoint answers. */
  readonly oauth?: { readonly error: string; readonly status: number };
  /** The CLI's exit status: 2 what was asked cannot be done as given, 1 it failed. */
  readonly exit: 1 | 2;
}

const row = (mcp: McpForm, status: number, rest: RestBody, exit: 1 | 2): ErrorAnswer => ({
  mcp,
  rpc: RpcCodes.INTERNAL_ERROR,
  status,
  rest,
  challenge: false,
  retryAfter: null,
  exit,
});

const CATEGORY_ANSWERS = {
  input: {
    ...row('result', 400, 'message', 2),
    resource: { legacy: RpcCodes.INVALID_PARAMS, modern: RpcCodes.INVALID_PARAMS },
  },
  not_found: {
    ...row('result', 404, 'message', 1),
    resource: { legacy: RpcCodes.RESOURCE_NOT_FOUND, modern: RpcCodes.INVALID_PARAMS },
  },
  auth: { ...row('protocol', 401, 'message', 1), rpc: RpcCodes.AUTH_REQUIRED, challenge: true },
  forbidden: row('result', 403, 'message', 1),
  conflict: row('result', 409, 'message', 1),
  timeout: row('result', 500, 'reference', 1),
  unavailable: { ...row('result', 503, 'unavailable', 1), retryAfter: 5 },
  database: row('result', 500, 'reference', 1),
  config: row('result', 500, 'reference', 2),
  internal: row('reference', 500, 'reference', 1),
} as const satisfies Record<ErrorCategory, ErrorAnswer>;

type CodeName = keyof typeof ErrorCodes;
type Override = Partial<ErrorAnswer>;

/** The LLM layer's refusals before a stream starts: the status says whose fault, the text why. */
const LLM_REFUSAL = (status: number): Override => ({
  status,
  rest: 'message',
  retryAfter: null,
});
const oauth = (error: string, status = 400): Override => ({ oauth: { error, status } });

/** Every code, with what it changes in its category's row ({}: nothing). */
const CODE_ANSWERS: { readonly [N in CodeName]: Override } = {
  CONFIG_INVALID: {},
  CONFIG_FILE_UNREADABLE: {},
  CONFIG_FOREIGN_UNSUPPORTED: {},
  CONFIG_FOREIGN_CONFLICT: {},
  CONFIG_IMPORT_FAILED: {},
  RUNTIME_UNSUPPORTED: {},
  DB_UNAVAILABLE: {},
  DB_QUERY_FAILED: {},
  DB_TIMEOUT: {},
  DB_CANCELLED: {},
  EMBEDDED_LOCKED: {},
  EMBEDDED_START_FAILED: {},
  RESULT_TOO_LARGE: {},
  DB_OUT_OF_RESOURCES: {},
  DB_CONFLICT: {},
  DB_READ_ONLY: {},
  DB_PERMISSION_DENIED: {},
  /** Every connection busy and the queue full or waited out: retry after the queue's wait. */
  DB_BUSY: { retryAfter: 'details' },
  TOOL_INPUT_INVALID: {},
  RESOURCE_NOT_FOUND: {},
  WRITE_NOT_ALLOWED: {},
  /** A tool's missing client capability is the protocol's -32021 in 2026-07-28. */
  CAPABILITY_MISSING: { mcp: 'protocol-modern', rpc: RpcCodes.MISSING_CAPABILITY },
  /** Raised forbidden (a role missing), it is -32001 all the same: the HTTP answer is 403. */
  AUTH_REQUIRED: { mcp: 'protocol', rpc: RpcCodes.AUTH_REQUIRED },
  DATABASE_NOT_FOUND: {},
  DATABASE_DENIED: {},
  VECTOR_UNAVAILABLE: {},
  CREDENTIALS_REFUSED: {},
  POLICY_INDIRECT_ACCESS: {},
  MASKED_COLUMN_DECIDES: {},
  FUNCTION_NOT_ANALYSABLE: {},
  CATALOG_NOT_FILTERED: {},
  EXTENSION_UNAVAILABLE: {},
  PGMI_SCHEMA_FOREIGN: {},
  PGMI_NAMES_UNKNOWN: {},
  PGMI_NOT_FOUND: {},
  STATE_UNAVAILABLE: {},
  STATE_SCHEMA_MISMATCH: {},
  LOGIN_FAILED: {},
  /** Locked out: no challenge (a token would not help), Retry-After says when to try again. */
  LOGIN_LOCKED: { challenge: false, retryAfter: 'details' },
  AUTH_INVALID_INPUT: {},
  AUTH_NOT_FOUND: {},
  AUTH_CONFLICT: {},
  OAUTH_TOKEN_INVALID: {},
  OAUTH_TOKEN_EXPIRED: {},
  OAUTH_WRONG_AUDIENCE: {},
  OAUTH_ISSUER_UNAVAILABLE: {},
  OAUTH_TOKEN_IN_QUERY: {},
  OAUTH_TOKEN_TOO_LARGE: {},
  OAUTH_INSUFFICIENT_SCOPE: {},
  OAUTH_INVALID_REQUEST: oauth('invalid_request'),
  OAUTH_INVALID_CLIENT: oauth('invalid_client', 401),
  OAUTH_REDIRECT_MISMATCH: {},
  OAUTH_INVALID_GRANT: oauth('invalid_grant'),
  OAUTH_CSRF: {},
  OAUTH_ACCESS_DENIED: {},
  OAUTH_REGISTRATION_REFUSED: oauth('invalid_client_metadata'),
  OAUTH_CLIENT_METADATA_UNAVAILABLE: oauth('invalid_client'),
  OAUTH_UNSUPPORTED: oauth('unsupported_grant_type'),
  CLUSTER_REDIS_UNAVAILABLE: {},
  EMBEDDING_CONFIG: {},
  EMBEDDING_UNAVAILABLE: {},
  EMBEDDING_MODEL_UNKNOWN: {},
  EMBEDDING_DIMENSION_MISMATCH: {},
  LLM_NOT_CONFIGURED: LLM_REFUSAL(503),
  LLM_PROVIDER_UNKNOWN: LLM_REFUSAL(400),
  LLM_PROVIDER_FAILED: LLM_REFUSAL(502),
  LLM_LIMIT_REACHED: {},
  CHAT_INVALID: LLM_REFUSAL(400),
  TOOL_REPEATED_FAILURE: {},
  WRITE_NEEDS_APPROVAL: {},
  CONVERSATION_NOT_FOUND: {},
  CONVERSATION_INVALID: {},
  CONVERSATION_OWNER_REQUIRED: {},
  COMPACTION_INVALID: {},
  /** The client must load the conversation again: the code tells it so. */
  CONVERSATION_HISTORY_CONFLICT: { rest: 'message-and-code' },
  INTERNAL: {},
};

const BY_CODE = new Map<string, Override>(
  (Object.keys(CODE_ANSWERS) as CodeName[]).map((name) => [ErrorCodes[name], CODE_ANSWERS[name]]),
);

/**
 * The row of an error: its category's, with what its code changes. A bug (category internal)
 * stays one whatever its code: answered by reference, its message never shown.
 */
export function answerOf(error: {
  readonly code: string;
  readonly category: ErrorCategory;
}): ErrorAnswer {
  const base: ErrorAnswer = CATEGORY_ANSWERS[error.category];
  if (error.category === 'internal') return base;
  const override = BY_CODE.get(error.code);
  return override ? { ...base, ...override } : base;
}

/**
 * An AppError answered with its own message (a tool's isError result, a chat tool's output):
 * anything but a bug, which is answered only with a log reference.
 */
export function isExpectedFailure(error: unknown): error is AppError {
  return isAppError(error) && answerOf(error).mcp !== 'reference';
}

/** Whether the table places a code (the catalogue test holds every code to it). */
export function isPlaced(code: string): boolean {
  return BY_CODE.has(code);
}

/** HTTP status per era. */
interface EraStatus {
  readonly legacy: number;
  readonly modern: number;
}

/**
 * The HTTP status of an MCP error answer by its JSON-RPC code (a result is 200). Legacy: errors
 * travel in a 200 body, as clients of those revisions expect; 2026-07-28: the request's own
 * failure is a 4xx. `made` is the status when a failure of that category made the answer,
 * `anyCategory` when any category did (a handler's failure, as against the core's own).
 */
export const MCP_HTTP_STATUS: {
  readonly [C in RpcCode]: EraStatus & {
    readonly made?: Partial<Record<ErrorCategory, EraStatus>>;
    readonly anyCategory?: EraStatus;
  };
} = {
  [RpcCodes.PARSE_ERROR]: { legacy: 200, modern: 400 },
  [RpcCodes.INVALID_REQUEST]: { legacy: 200, modern: 400 },
  [RpcCodes.METHOD_NOT_FOUND]: { legacy: 200, modern: 404 },
  [RpcCodes.INVALID_PARAMS]: {
    legacy: 200,
    modern: 400,
    made: { not_found: { legacy: 200, modern: 404 } },
  },
  [RpcCodes.INTERNAL_ERROR]: {
    legacy: 200,
    modern: 500,
    anyCategory: { legacy: 200, modern: 200 },
  },
  [RpcCodes.RATE_LIMITED]: { legacy: 200, modern: 200 },
  // A caller who must authenticate or lacks a role gets the HTTP answer clients act on.
  [RpcCodes.AUTH_REQUIRED]: {
    legacy: 200,
    modern: 200,
    made: { auth: { legacy: 401, modern: 401 }, forbidden: { legacy: 403, modern: 403 } },
  },
  [RpcCodes.RESOURCE_NOT_FOUND]: { legacy: 200, modern: 200 },
  // Headers that contradict the body are refused before any era rule applies.
  [RpcCodes.HEADER_MISMATCH]: { legacy: 400, modern: 400 },
  [RpcCodes.MISSING_CAPABILITY]: { legacy: 200, modern: 400 },
  [RpcCodes.UNSUPPORTED_VERSION]: { legacy: 200, modern: 400 },
};

/** An HTTP refusal: its status, and its JSON-RPC code where the route answers in JSON-RPC. */
export interface Refusal {
  readonly status: number;
  readonly rpc: number;
}

/**
 * What the HTTP layer refuses itself, before or beside the MCP dispatcher. On /api the same
 * status carries `{"error": …}`; elsewhere a JSON-RPC error with `rpc` (http/refuse.ts).
 */
export const HTTP_REFUSALS = {
  /** The body is not JSON. */
  NOT_JSON: { status: 400, rpc: RpcCodes.PARSE_ERROR },
  /** Accept lacks a media type the answer needs. */
  NOT_ACCEPTABLE: { status: 406, rpc: RpcCodes.INVALID_REQUEST },
  BODY_TOO_LARGE: { status: 413, rpc: RpcCodes.INVALID_REQUEST },
  MEDIA_TYPE: { status: 415, rpc: RpcCodes.INVALID_REQUEST },
  /** The session has a GET stream open already. */
  STREAM_OPEN: { status: 409, rpc: RpcCodes.INVALID_REQUEST },
  SESSION_MISSING: { status: 400, rpc: RpcCodes.INVALID_REQUEST },
  SESSION_NOT_FOUND: { status: 404, rpc: RpcCodes.SESSION_NOT_FOUND },
  /** A legacy MCP-Protocol-Version header naming a version not served. */
  VERSION_UNSUPPORTED: { status: 400, rpc: RpcCodes.INVALID_REQUEST },
  /** Host or Origin not allowed. */
  ORIGIN: { status: 403, rpc: RpcCodes.INVALID_REQUEST },
  /** A credential missing or refused (WWW-Authenticate says which). */
  UNAUTHENTICATED: { status: 401, rpc: RpcCodes.AUTH_REQUIRED },
  /** A signed-in caller without the role or scope. */
  INSUFFICIENT_SCOPE: { status: 403, rpc: RpcCodes.AUTH_REQUIRED },
  /** A token that cannot be judged now: its issuer is unreachable. */
  ISSUER_UNAVAILABLE: { status: 503, rpc: RpcCodes.INTERNAL_ERROR },
  RATE_LIMITED: { status: 429, rpc: RpcCodes.RATE_LIMITED },
  /** A shared session cannot be looked up: the state database is unreachable. */
  STATE_UNAVAILABLE: { status: 503, rpc: RpcCodes.INTERNAL_ERROR },
  /** The server is draining before it stops: Retry-After says when to try again. */
  SHUTTING_DOWN: { status: 503, rpc: RpcCodes.INTERNAL_ERROR },
  /** A bug, or a failure on the server's side; the log has it. */
  INTERNAL: { status: 500, rpc: RpcCodes.INTERNAL_ERROR },
} as const satisfies Record<string, Refusal>;

/** Any other client error the framework raised (its own status): a JSON-RPC invalid request. */
export const clientError = (status: number): Refusal => ({
  status,
  rpc: RpcCodes.INVALID_REQUEST,
});

/** The minimal logger a reference is written to (pino's). */
export interface ReferenceLog {
  error(fields: Record<string, unknown>, message: string): void;
}

/** A reference to a log entry, for an answer to repeat: one format everywhere, 8 hex digits. */
export function newReference(): string {
  return randomBytes(4).toString('hex');
}

/**
 * A failure the caller is told only by reference: logged once, with `ref` beside `fields`, and
 * the reference returned for the answer to repeat (a new one unless the caller made it first).
 */
export function logWithReference(
  log: ReferenceLog | undefined,
  fields: Record<string, unknown>,
  message: string,
  ref: string = newReference(),
): string {
  log?.error({ ...fields, ref }, message);
  return ref;
}
