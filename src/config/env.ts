// Environment variables → config values. One table drives reading, error messages and the
// documentation, so a variable cannot be read in one place and forgotten in another.
//
// Parsers only translate text into the shape the schema expects (a number, a boolean, a
// list) when the text clearly is one; anything else is passed through unchanged so the
// schema rejects it with the same message a bad file value would get.
import { AppError, ErrorCodes } from '../core/errors.js';

/** A value set by one source, with a label naming that source for messages. */
export interface SourcedValue {
  key: string;
  value: unknown;
  source: string;
}

/** `list`: comma-separated; `words`: separated by spaces (URLs, which may hold commas). */
export type EnvKind = 'string' | 'int' | 'number' | 'bool' | 'list' | 'words';

export interface EnvVariable {
  key: string;
  env: string;
  kind: EnvKind;
}

const BOOL_WORDS: Record<string, boolean> = {
  true: true,
  false: false,
  '1': true,
  '0': false,
  yes: true,
  no: false,
};

// The schema's own wording ("expected true or false") would undersell what env accepts.
export const ENV_BOOL_HINT = 'expected one of true, false, 1, 0, yes, no';

const PARSERS: Record<EnvKind, (raw: string) => unknown> = {
  string: (raw) => raw,
  int: (raw) => (/^\s*[+-]?\d+\s*$/.test(raw) ? Number(raw) : raw),
  number: (raw) => (/^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(raw) ? Number(raw) : raw),
  bool: (raw) => BOOL_WORDS[raw.trim().toLowerCase()] ?? raw,
  list: (raw) =>
    raw
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  words: (raw) => raw.split(/\s+/).filter((item) => item !== ''),
};

export const ENV_VARIABLES: readonly EnvVariable[] = [
  { key: 'server.name', env: 'PGMCP_SERVER_NAME', kind: 'string' },
  { key: 'server.version', env: 'PGMCP_SERVER_VERSION', kind: 'string' },
  { key: 'server.instructions', env: 'PGMCP_INSTRUCTIONS', kind: 'string' },
  { key: 'server.toolDescriptionSuffix', env: 'PGMCP_TOOL_DESCRIPTION_SUFFIX', kind: 'string' },
  { key: 'server.stateSecret', env: 'PGMCP_STATE_SECRET', kind: 'string' },
  { key: 'server.databaseTools', env: 'PGMCP_DATABASE_TOOLS', kind: 'bool' },
  { key: 'server.shutdownTimeoutMs', env: 'PGMCP_SHUTDOWN_TIMEOUT_MS', kind: 'int' },
  { key: 'transport', env: 'PGMCP_TRANSPORT', kind: 'string' },
  { key: 'http.host', env: 'PGMCP_HTTP_HOST', kind: 'string' },
  { key: 'http.port', env: 'PGMCP_HTTP_PORT', kind: 'int' },
  { key: 'http.path', env: 'PGMCP_HTTP_PATH', kind: 'string' },
  { key: 'http.allowedOrigins', env: 'PGMCP_HTTP_ALLOWED_ORIGINS', kind: 'list' },
  { key: 'http.allowedHosts', env: 'PGMCP_HTTP_ALLOWED_HOSTS', kind: 'list' },
  { key: 'http.bodyLimitBytes', env: 'PGMCP_HTTP_BODY_LIMIT_BYTES', kind: 'int' },
  { key: 'http.sessionIdleTimeoutMs', env: 'PGMCP_SESSION_IDLE_TIMEOUT_MS', kind: 'int' },
  { key: 'http.eventStoreSize', env: 'PGMCP_EVENT_STORE_SIZE', kind: 'int' },
  { key: 'http.keepAliveMs', env: 'PGMCP_KEEP_ALIVE_MS', kind: 'int' },
  { key: 'http.drainMs', env: 'PGMCP_HTTP_DRAIN_MS', kind: 'int' },
  { key: 'metrics.enabled', env: 'PGMCP_METRICS_ENABLED', kind: 'bool' },
  { key: 'metrics.listen', env: 'PGMCP_METRICS_LISTEN', kind: 'string' },
  { key: 'metrics.allowAnonymous', env: 'PGMCP_METRICS_ALLOW_ANONYMOUS', kind: 'bool' },
  { key: 'http.requestTimeoutMs', env: 'PGMCP_HTTP_REQUEST_TIMEOUT_MS', kind: 'int' },
  { key: 'http.maxConnections', env: 'PGMCP_HTTP_MAX_CONNECTIONS', kind: 'int' },
  { key: 'database.allowWrites', env: 'PGMCP_ALLOW_WRITES', kind: 'bool' },
  { key: 'database.statementTimeoutMs', env: 'PGMCP_STATEMENT_TIMEOUT_MS', kind: 'int' },
  { key: 'database.maxRows', env: 'PGMCP_MAX_ROWS', kind: 'int' },
  { key: 'database.defaultRows', env: 'PGMCP_DEFAULT_ROWS', kind: 'int' },
  { key: 'database.maxResultBytes', env: 'PGMCP_MAX_RESULT_BYTES', kind: 'int' },
  { key: 'database.poolSize', env: 'PGMCP_POOL_SIZE', kind: 'int' },
  { key: 'database.directUrl', env: 'PGMCP_DATABASE_DIRECT_URL', kind: 'string' },
  { key: 'database.readReplicas', env: 'PGMCP_READ_REPLICAS', kind: 'words' },
  { key: 'database.replicaMaxLagMs', env: 'PGMCP_REPLICA_MAX_LAG_MS', kind: 'int' },
  { key: 'database.readYourWritesMs', env: 'PGMCP_READ_YOUR_WRITES_MS', kind: 'int' },
  { key: 'database.queueLimit', env: 'PGMCP_QUEUE_LIMIT', kind: 'int' },
  { key: 'database.queueTimeoutMs', env: 'PGMCP_QUEUE_TIMEOUT_MS', kind: 'int' },
  { key: 'database.connectTimeoutMs', env: 'PGMCP_CONNECT_TIMEOUT_MS', kind: 'int' },
  { key: 'database.idleTimeoutMs', env: 'PGMCP_IDLE_TIMEOUT_MS', kind: 'int' },
  { key: 'database.deniedFunctions', env: 'PGMCP_DENIED_FUNCTIONS', kind: 'list' },
  { key: 'database.maxPlanCost', env: 'PGMCP_MAX_PLAN_COST', kind: 'number' },
  { key: 'database.maxPlanRows', env: 'PGMCP_MAX_PLAN_ROWS', kind: 'number' },
  { key: 'database.showQueryText', env: 'PGMCP_SHOW_QUERY_TEXT', kind: 'bool' },
  { key: 'database.role', env: 'PGMCP_ROLE', kind: 'string' },
  { key: 'database.routineTools', env: 'PGMCP_ROUTINE_TOOLS', kind: 'bool' },
  { key: 'registry.mode', env: 'PGMCP_REGISTRY_MODE', kind: 'string' },
  { key: 'database.routineSchemas', env: 'PGMCP_ROUTINE_SCHEMAS', kind: 'list' },
  { key: 'database.exchangeLog.enabled', env: 'PGMCP_EXCHANGE_LOG', kind: 'bool' },
  { key: 'database.exchangeLog.logArguments', env: 'PGMCP_EXCHANGE_LOG_ARGUMENTS', kind: 'bool' },
  { key: 'database.access.allowSchemas', env: 'PGMCP_ALLOW_SCHEMAS', kind: 'list' },
  { key: 'database.access.denySchemas', env: 'PGMCP_DENY_SCHEMAS', kind: 'list' },
  { key: 'database.access.allowTables', env: 'PGMCP_ALLOW_TABLES', kind: 'list' },
  { key: 'database.access.denyTables', env: 'PGMCP_DENY_TABLES', kind: 'list' },
  { key: 'database.access.denyColumns', env: 'PGMCP_DENY_COLUMNS', kind: 'list' },
  { key: 'database.access.maskColumns', env: 'PGMCP_MASK_COLUMNS', kind: 'list' },
  { key: 'database.access.allowFunctions', env: 'PGMCP_ALLOW_FUNCTIONS', kind: 'list' },
  {
    key: 'database.access.allowMaskedPredicates',
    env: 'PGMCP_ALLOW_MASKED_PREDICATES',
    kind: 'bool',
  },
  { key: 'embedded.dataDir', env: 'PGMCP_DATA_DIR', kind: 'string' },
  { key: 'embedded.demo', env: 'PGMCP_DEMO', kind: 'bool' },
  { key: 'state.url', env: 'PGMCP_STATE_URL', kind: 'string' },
  { key: 'auth.sessionTtlSeconds', env: 'PGMCP_SESSION_TTL_SECONDS', kind: 'int' },
  { key: 'auth.cacheTtlMs', env: 'PGMCP_AUTH_CACHE_TTL_MS', kind: 'int' },
  { key: 'auth.lockout.maxFailures', env: 'PGMCP_LOCKOUT_MAX_FAILURES', kind: 'int' },
  {
    key: 'auth.lockout.maxFailuresPerAddress',
    env: 'PGMCP_LOCKOUT_MAX_FAILURES_PER_ADDRESS',
    kind: 'int',
  },
  { key: 'auth.lockout.windowSeconds', env: 'PGMCP_LOCKOUT_WINDOW_SECONDS', kind: 'int' },
  { key: 'auth.lockout.lockSeconds', env: 'PGMCP_LOCKOUT_LOCK_SECONDS', kind: 'int' },
  { key: 'auth.required', env: 'PGMCP_REQUIRE_AUTH', kind: 'bool' },
  { key: 'auth.filterToolsByRole', env: 'PGMCP_FILTER_TOOLS_BY_ROLE', kind: 'bool' },
  { key: 'auth.trustedProxies', env: 'PGMCP_TRUSTED_PROXIES', kind: 'list' },
  { key: 'auth.proxyHeaders.userId', env: 'PGMCP_PROXY_USER_HEADER', kind: 'string' },
  { key: 'auth.proxyHeaders.tenantId', env: 'PGMCP_PROXY_TENANT_HEADER', kind: 'string' },
  { key: 'auth.proxyHeaders.roles', env: 'PGMCP_PROXY_ROLES_HEADER', kind: 'string' },
  { key: 'auth.stdio.userId', env: 'PGMCP_USER_ID', kind: 'string' },
  { key: 'auth.stdio.tenantId', env: 'PGMCP_TENANT_ID', kind: 'string' },
  { key: 'auth.stdio.roles', env: 'PGMCP_ROLES', kind: 'list' },
  { key: 'auth.stdio.pgRole', env: 'PGMCP_PG_ROLE', kind: 'string' },
  {
    key: 'auth.oauth.requireAuthorization',
    env: 'PGMCP_OAUTH_REQUIRE_AUTHORIZATION',
    kind: 'bool',
  },
  {
    key: 'auth.oauth.authorizationServers',
    env: 'PGMCP_OAUTH_AUTHORIZATION_SERVERS',
    kind: 'list',
  },
  { key: 'auth.oauth.audience', env: 'PGMCP_OAUTH_AUDIENCE', kind: 'string' },
  { key: 'auth.oauth.server.enabled', env: 'PGMCP_OAUTH_SERVER', kind: 'bool' },
  { key: 'auth.oauth.server.issuer', env: 'PGMCP_OAUTH_ISSUER', kind: 'string' },
  { key: 'audit.database', env: 'PGMCP_AUDIT_DATABASE', kind: 'bool' },
  { key: 'audit.file', env: 'PGMCP_AUDIT_FILE', kind: 'string' },
  { key: 'log.level', env: 'PGMCP_LOG_LEVEL', kind: 'string' },
  { key: 'telemetry.otlpEndpoint', env: 'PGMCP_TELEMETRY_OTLP_ENDPOINT', kind: 'string' },
  { key: 'telemetry.includeSql', env: 'PGMCP_TELEMETRY_INCLUDE_SQL', kind: 'bool' },
  { key: 'telemetry.sqlComment', env: 'PGMCP_TELEMETRY_SQL_COMMENT', kind: 'bool' },
  // --- edge: TLS, CORS, rate limits ---
  { key: 'http.tls.cert', env: 'PGMCP_HTTP_TLS_CERT', kind: 'string' },
  { key: 'http.tls.key', env: 'PGMCP_HTTP_TLS_KEY', kind: 'string' },
  { key: 'http.cors.origins', env: 'PGMCP_HTTP_CORS_ORIGINS', kind: 'list' },
  { key: 'rateLimit.requestsPerMinute', env: 'PGMCP_RATE_LIMIT_PER_MINUTE', kind: 'int' },
  { key: 'rateLimit.routes.mcp', env: 'PGMCP_RATE_LIMIT_MCP', kind: 'int' },
  { key: 'rateLimit.routes.api', env: 'PGMCP_RATE_LIMIT_API', kind: 'int' },
  { key: 'embeddings.provider', env: 'PGMCP_EMBEDDING_PROVIDER', kind: 'string' },
  {
    key: 'embeddings.offline.dimensions',
    env: 'PGMCP_OFFLINE_EMBEDDING_DIMENSIONS',
    kind: 'int',
  },
  { key: 'embeddings.openai.model', env: 'PGMCP_OPENAI_EMBEDDING_MODEL', kind: 'string' },
  { key: 'embeddings.voyage.model', env: 'PGMCP_VOYAGE_EMBEDDING_MODEL', kind: 'string' },
  { key: 'embeddings.gemini.model', env: 'PGMCP_GEMINI_EMBEDDING_MODEL', kind: 'string' },
  { key: 'embeddings.ollama.baseUrl', env: 'PGMCP_OLLAMA_URL', kind: 'string' },
  {
    key: 'embeddings.openaiCompatible.baseUrl',
    env: 'PGMCP_OPENAI_COMPATIBLE_URL',
    kind: 'string',
  },
  { key: 'rateLimit.redis', env: 'PGMCP_RATE_LIMIT_REDIS', kind: 'string' },
  { key: 'rateLimit.redisKeyPrefix', env: 'PGMCP_RATE_LIMIT_REDIS_KEY_PREFIX', kind: 'string' },
  { key: 'cluster.redis', env: 'PGMCP_CLUSTER_REDIS', kind: 'string' },
  { key: 'cluster.redisKeyPrefix', env: 'PGMCP_CLUSTER_REDIS_KEY_PREFIX', kind: 'string' },
  { key: 'tasks.maxTtlMs', env: 'PGMCP_TASKS_MAX_TTL_MS', kind: 'int' },
  {
    key: 'tasks.maxRunningPerCaller',
    env: 'PGMCP_TASKS_MAX_RUNNING_PER_CALLER',
    kind: 'int',
  },
  { key: 'tasks.maxStoredPerCaller', env: 'PGMCP_TASKS_MAX_STORED_PER_CALLER', kind: 'int' },
  {
    key: 'tasks.heartbeatIntervalMs',
    env: 'PGMCP_TASKS_HEARTBEAT_INTERVAL_MS',
    kind: 'int',
  },
  { key: 'tasks.sweepIntervalMs', env: 'PGMCP_TASKS_SWEEP_INTERVAL_MS', kind: 'int' },
  // --- llm: providers and chat bounds; providers themselves come from the file ---
  { key: 'llm.default', env: 'PGMCP_LLM_DEFAULT', kind: 'string' },
  { key: 'llm.fromEnv', env: 'PGMCP_LLM_FROM_ENV', kind: 'bool' },
  { key: 'llm.systemPrompt', env: 'PGMCP_LLM_SYSTEM_PROMPT', kind: 'string' },
  { key: 'llm.maxToolRounds', env: 'PGMCP_LLM_MAX_TOOL_ROUNDS', kind: 'int' },
  { key: 'llm.maxOutputTokens', env: 'PGMCP_LLM_MAX_OUTPUT_TOKENS', kind: 'int' },
  { key: 'llm.maxTokensPerRequest', env: 'PGMCP_LLM_MAX_TOKENS_PER_REQUEST', kind: 'int' },
  { key: 'llm.maxSameFailures', env: 'PGMCP_LLM_MAX_SAME_FAILURES', kind: 'int' },
  { key: 'llm.maxToolResultChars', env: 'PGMCP_LLM_MAX_TOOL_RESULT_CHARS', kind: 'int' },
  { key: 'llm.contextTokens', env: 'PGMCP_LLM_CONTEXT_TOKENS', kind: 'int' },
  { key: 'llm.compactAt', env: 'PGMCP_LLM_COMPACT_AT', kind: 'number' },
  { key: 'llm.timeoutMs', env: 'PGMCP_LLM_TIMEOUT_MS', kind: 'int' },
  { key: 'llm.maxRetries', env: 'PGMCP_LLM_MAX_RETRIES', kind: 'int' },
];

export function envVariableNamed(name: string): EnvVariable | undefined {
  return ENV_VARIABLES.find((variable) => variable.env === name);
}

/** Where database.url may come from, most important first. */
const DATABASE_URL_VARIABLES = ['PGMCP_DATABASE_URL', 'DATABASE_URL'] as const;
const LIBPQ_SOURCE = 'the PGHOST/PGDATABASE/… environment variables';

// An empty variable is how shells and compose files say "unset"; treating it as a value
// would turn `PGMCP_HTTP_PORT=` into an error instead of the default.
function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The values the environment sets, each labelled with the variable it came from. */
export function readEnv(env: NodeJS.ProcessEnv): SourcedValue[] {
  const values: SourcedValue[] = [];
  const url = databaseUrlFromEnv(env);
  if (url) values.push({ key: 'database.url', value: url.value, source: url.source });
  for (const variable of ENV_VARIABLES) {
    const raw = read(env, variable.env);
    if (raw !== undefined) {
      values.push({ key: variable.key, value: PARSERS[variable.kind](raw), source: variable.env });
    }
  }
  return values;
}

function databaseUrlFromEnv(env: NodeJS.ProcessEnv): { value: string; source: string } | undefined {
  for (const name of DATABASE_URL_VARIABLES) {
    const value = read(env, name);
    if (value !== undefined) return { value, source: name };
  }
  if (read(env, 'PGHOST') === undefined && read(env, 'PGDATABASE') === undefined) return undefined;
  return { value: buildLibpqUrl(env), source: LIBPQ_SOURCE };
}

/**
 * Builds a postgres:// URL from the libpq variables, so a shell already set up for psql
 * works unchanged. A socket directory (PGHOST starting with '/') and, with it, the port go
 * into the query string, where node-postgres looks for them.
 */
export function buildLibpqUrl(env: NodeJS.ProcessEnv): string {
  const host = read(env, 'PGHOST');
  const port = read(env, 'PGPORT');
  const user = read(env, 'PGUSER');
  const password = read(env, 'PGPASSWORD');
  const database = read(env, 'PGDATABASE');
  const sslmode = read(env, 'PGSSLMODE');

  if (port !== undefined && !/^\d{1,5}$/.test(port.trim())) {
    throw new AppError(
      ErrorCodes.CONFIG_INVALID,
      `database.url: expected PGPORT to be a port number, got ${JSON.stringify(port)} (from PGPORT)`,
      { category: 'config', details: { key: 'database.url', source: 'PGPORT' } },
    );
  }

  const socket = host?.startsWith('/') ?? false;
  const query = new URLSearchParams();
  let authority = '';
  if (user !== undefined || password !== undefined) {
    authority += encodeURIComponent(user ?? '');
    if (password !== undefined) authority += `:${encodeURIComponent(password)}`;
    authority += '@';
  }
  if (host !== undefined && !socket) {
    // IPv6 literals need brackets; anything else is a name that may need escaping.
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    authority += bare.includes(':') ? `[${bare}]` : encodeURIComponent(host);
    if (port !== undefined) authority += `:${port.trim()}`;
  } else {
    if (host !== undefined) query.set('host', host);
    if (port !== undefined) query.set('port', port.trim());
  }
  if (sslmode !== undefined) query.set('sslmode', sslmode);

  const path = database === undefined ? '/' : `/${encodeURIComponent(database)}`;
  const search = query.toString() === '' ? '' : `?${query.toString()}`;
  return `postgres://${authority}${path}${search}`;
}
