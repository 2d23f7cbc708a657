// The one description of pgmcp's configuration: types, defaults and validation rules.
// Every source (file, env, flags) is merged into a plain object first and validated here
// once, so a value is judged the same way wherever it came from.
import { isIP } from 'node:net';
import type { z } from 'zod';
import { SSL_MODES, databaseUrlProblem } from './database-url.js';
import { optionalText, section, text, zod } from './zod.js';
import { LOG_LEVELS } from './levels.js';
import { llmSchema } from './llm.js';

export { LOG_LEVELS };
export const TRANSPORTS = ['stdio', 'http'] as const;

/** Key paths whose values must never appear in messages or printed config. */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'database.url',
  'server.stateSecret',
  'state.url',
  // A `databases:` entry's URL may hold a password (path ['databases', n, 'url']).
  'databases.url',
  'rateLimit.redis',
]);

// Each helper gives every failure of a field the same sentence, so "got -1" and "got 'abc'"
// read alike and the message states the whole rule rather than the one check that tripped.
function intIn(min: number, max?: number) {
  const error =
    max !== undefined
      ? `expected an integer between ${min} and ${max}`
      : min === 1
        ? 'expected a positive integer'
        : `expected an integer of at least ${min}`;
  const base = zod.int({ error }).min(min, { error });
  return max === undefined ? base : base.max(max, { error });
}

const bool = () => zod.boolean({ error: 'expected true or false' });

const stringList = (item: z.ZodString) => zod.array(item, { error: 'expected a list of strings' });

export const portSchema = intIn(0, 65535);

// An origin is what a browser sends: scheme://host[:port], never a path or trailing slash.
const originItem = zod
  .string({ error: 'expected a string' })
  .regex(/^(\*|[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+)$/i, {
    error: 'expected an origin such as https://app.example.com (no path or trailing slash) or *',
  });

// A Host header value: name or IPv4 with optional port, or a bracketed IPv6 literal.
const hostItem = zod
  .string({ error: 'expected a string' })
  .regex(/^([^\s/:@[\]]+|\[[0-9a-f:.]+\])(:\d{1,5})?$/i, {
    error: 'expected a host or host:port such as mcp.example.com:8443 (no scheme)',
  });

// Checked as the driver will read it (databaseUrlProblem), so a URL it cannot use stops pgmcp
// here, naming the key and its source. The value is a secret: no message quotes it.
const POSTGRES_SCHEME = /^postgres(ql)?:\/\/./i;
const databaseUrl = zod
  .string({ error: 'expected a postgres:// URL or null' })
  .regex(POSTGRES_SCHEME, {
    error: 'expected a URL starting with postgres:// or postgresql://',
  })
  .superRefine((value, ctx) => {
    if (!POSTGRES_SCHEME.test(value)) return; // the scheme's own message says it
    const problem = databaseUrlProblem(value);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  })
  .nullable();

const serverSchema = section({
  name: optionalText().default(null),
  /** serverInfo.version in initialize and server/discover; null: pgmcp's own version. */
  version: optionalText().default(null),
  instructions: optionalText().default(null),
  toolDescriptionSuffix: optionalText().default(null),
  stateSecret: optionalText().default(null),
  /** Offer list_database_connections and select_database_connection to the model. */
  databaseTools: bool().default(false),
});

const httpSchema = section({
  host: text().default('127.0.0.1'),
  port: portSchema.default(8080),
  path: zod
    .string({ error: 'expected a string' })
    .regex(/^\//, { error: 'expected a path starting with /' })
    .default('/mcp'),
  allowedOrigins: stringList(originItem).default([]),
  allowedHosts: stringList(hostItem).default([]),
  bodyLimitBytes: intIn(1).default(4_194_304),
  sessionIdleTimeoutMs: intIn(1).default(1_800_000),
  eventStoreSize: intIn(1).default(1000),
  keepAliveMs: intIn(0).default(15_000),
  // --- edge: TLS and CORS ---
  /** Serve HTTPS with this PEM certificate (chain) and private key; both or neither. */
  tls: section({
    cert: optionalText().default(null),
    key: optionalText().default(null),
  })
    .superRefine((tls, ctx) => {
      if ((tls.cert === null) !== (tls.key === null)) {
        ctx.addIssue({
          code: 'custom',
          path: [tls.cert === null ? 'cert' : 'key'],
          message: 'expected a file: http.tls.cert and http.tls.key are given together',
        });
      }
    })
    .prefault({}),
  /** Browser origins answered with CORS headers; empty = CORS off. They must pass allowedOrigins too. */
  cors: section({
    origins: stringList(originItem).default([]),
  }).prefault({}),
});

// A name pattern: dot-separated parts of letters, digits, _, $, - and the * wildcard.
const namePattern = zod
  .string({ error: 'expected a string' })
  .regex(/^[\w$*-]+(\.[\w$*-]+){0,2}$/, {
    error: 'expected a name pattern such as public, public.users, *.email or users.ssn',
  });

const accessSchema = section({
  allowSchemas: stringList(namePattern).default([]),
  denySchemas: stringList(namePattern).default([]),
  allowTables: stringList(namePattern).default([]),
  denyTables: stringList(namePattern).default([]),
  denyColumns: stringList(namePattern).default([]),
  maskColumns: stringList(namePattern).default([]),
  /** Functions pgmcp cannot analyse (plpgsql, C …) that statements may call under a policy. */
  allowFunctions: stringList(namePattern).default([]),
  /** Let masked columns filter, join, group and sort. */
  allowMaskedPredicates: bool().default(false),
});

const databaseSchema = section({
  url: databaseUrl.default(null),
  allowWrites: bool().default(false),
  statementTimeoutMs: intIn(1).default(30_000),
  maxRows: intIn(1).default(1000),
  defaultRows: intIn(1).default(100),
  maxResultBytes: intIn(1).default(1_048_576),
  poolSize: intIn(1).default(10),
  /** Who may see what: schemas, tables, columns; masked columns. */
  access: accessSchema.prefault({}),
  /** Functions refused in free SQL, added to the built-in list (side effects, file and network access). */
  deniedFunctions: stringList(namePattern).default([]),
  /** Refuse a query whose estimated plan cost (or row count) is above this; null = no limit. */
  maxPlanCost: zod
    .number({ error: 'expected a number or null' })
    .positive()
    .nullable()
    .default(null),
  maxPlanRows: zod
    .number({ error: 'expected a number or null' })
    .positive()
    .nullable()
    .default(null),
  /** Show other sessions' SQL text in pg://stat/activity. */
  showQueryText: bool().default(false),
  /** Run every call as this role (SET LOCAL ROLE); null: the login role. */
  role: optionalText().default(null),
  /** Serve functions and procedures annotated @mcp as tools (NpgsqlRest McpOptions.Enabled). */
  routineTools: bool().default(true),
  /** Schemas scanned for @mcp functions and procedures; empty: every non-system schema. */
  routineSchemas: stringList(namePattern).default([]),
  /** One row per answered request in mcp.exchange, where the registry schema is installed. */
  exchangeLog: section({
    enabled: bool().default(true),
    /** Store tool and prompt arguments too (they may hold personal data). */
    logArguments: bool().default(false),
  }).prefault({}),
}).superRefine((db, ctx) => {
  if (db.defaultRows > db.maxRows) {
    ctx.addIssue({
      code: 'custom',
      path: ['defaultRows'],
      message: `must not exceed database.maxRows (${db.maxRows})`,
    });
  }
});

// A pgmcp role (for tools.<name>.roles, @authorize, token --role): letters, digits, _ . : -
const roleName = zod
  .string({ error: 'expected a string' })
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { error: 'expected a role name such as analyst or admin' });

// --- several databases ---
// One entry of `databases:`: where it is (a URL, libpq-style fields, or the embedded PGlite)
// and, optionally, any `database.*` setting it changes for itself; unset ones come from the
// `database` section. Passwords come from the environment or a file, never the YAML itself.
const databaseEntryName = zod
  .string({ error: 'expected a string' })
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, {
    error: 'expected a name of letters, digits, _ . - (at most 64)',
  });

const databaseEntrySchema = section({
  name: databaseEntryName,
  default: bool().optional(),
  url: databaseUrl.optional(),
  host: text().optional(),
  port: intIn(1, 65535).optional(),
  database: text().optional(),
  user: text().optional(),
  /** The name of an environment variable holding the password. */
  passwordEnv: text().optional(),
  /** A file whose first line is the password (a mounted secret). */
  passwordFile: text().optional(),
  sslmode: zod.enum(SSL_MODES, { error: `expected one of ${SSL_MODES.join(', ')}` }).optional(),
  embedded: bool().optional(),
  /** User names or pgmcp roles that may use this database; empty: everyone. */
  availableToUsers: stringList(
    zod
      .string({ error: 'expected a string' })
      .min(1)
      .max(256, { error: 'expected at most 256 characters' }),
  ).default([]),
  allowWrites: bool().optional(),
  role: optionalText().optional(),
  statementTimeoutMs: intIn(1).optional(),
  maxRows: intIn(1).optional(),
  defaultRows: intIn(1).optional(),
  maxResultBytes: intIn(1).optional(),
  poolSize: intIn(1).optional(),
  access: accessSchema.optional(),
  deniedFunctions: stringList(namePattern).optional(),
  maxPlanCost: zod.number({ error: 'expected a number or null' }).positive().nullable().optional(),
  maxPlanRows: zod.number({ error: 'expected a number or null' }).positive().nullable().optional(),
  showQueryText: bool().optional(),
}).superRefine((entry, ctx) => {
  const located = [
    entry.url !== undefined && entry.url !== null,
    entry.embedded === true,
    entry.host !== undefined || entry.database !== undefined,
  ];
  if (located.filter(Boolean).length !== 1) {
    ctx.addIssue({
      code: 'custom',
      path: ['url'],
      message: 'expected exactly one of url, host/database, or embedded: true',
    });
  }
});

const databasesSchema = zod
  .array(databaseEntrySchema, { error: 'expected a list of databases' })
  .superRefine((entries, ctx) => {
    const seen = new Set<string>();
    entries.forEach((entry, i) => {
      if (seen.has(entry.name)) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'name'],
          message: `the name ${entry.name} is used twice`,
        });
      }
      seen.add(entry.name);
    });
    if (entries.filter((e) => e.default === true).length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'at most one database may say default: true',
      });
    }
    if (entries.filter((e) => e.embedded === true).length > 1) {
      ctx.addIssue({ code: 'custom', path: [], message: 'at most one database may be embedded' });
    }
  });

export type DatabaseEntry = z.infer<typeof databaseEntrySchema>;

const embeddedSchema = section({
  // Resolved against the working directory by loadConfig, which knows the cwd.
  dataDir: text().default('.pgmcp/data'),
  demo: bool().default(true),
});

const stateSchema = section({
  /** Where tokens, users, sessions and the audit table live; null: the embedded database. */
  url: databaseUrl.default(null),
});

// A peer address or CIDR range: 10.0.0.1, 10.0.0.0/8, ::1, fd00::/8.
const addressItem = zod.string({ error: 'expected a string' }).refine(
  (value) => {
    const [address = '', bits, extra] = value.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) return false;
    if (bits === undefined) return true;
    return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
  },
  { error: 'expected an IP address or CIDR range such as 10.0.0.0/8 or ::1' },
);

const headerName = zod
  .string({ error: 'expected a string' })
  .regex(/^[A-Za-z0-9-]+$/, { error: 'expected an HTTP header name such as X-User-Id' })
  .transform((name) => name.toLowerCase());

// --- OAuth 2.1: resource server, and optionally a built-in authorization server ---
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** https, or http on a loopback name: an issuer or endpoint fetched keys or tokens must not be spoofable. */
export function isSecureOrLoopbackUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return (
    url.protocol === 'http:' &&
    (LOOPBACK_NAMES.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname))
  );
}

const secureUrl = (what: string) =>
  zod
    .string({ error: 'expected a string' })
    .refine((v) => isSecureOrLoopbackUrl(v) && !v.includes('#') && !v.includes('?'), {
      error: `expected an https:// ${what} (http:// only on localhost or 127.0.0.1), without query or fragment`,
    });

// A claim path: dot-separated names into the token's claims (realm_access.roles).
const claimPath = zod
  .string({ error: 'expected a string' })
  .regex(/^[A-Za-z0-9_:/$-]+(\.[A-Za-z0-9_:/$-]+){0,7}$/, {
    error: 'expected a claim name or dotted path such as sub or realm_access.roles',
  });

const scopeName = zod
  .string({ error: 'expected a string' })
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/, {
    error: 'expected a scope such as analyst or mcp:read',
  });

// A host pgmcp may fetch from: a DNS name, an IP address or a CIDR range.
const fetchHostItem = zod
  .string({ error: 'expected a string' })
  .refine(
    (value) =>
      /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(
        value,
      ) || addressItem.safeParse(value.replace(/^\[(.*)\]$/, '$1')).success,
    {
      error:
        'expected a host name, an IP address or a CIDR range such as idp.internal or 10.0.0.0/8',
    },
  );

const oauthServerSchema = section({
  /** Serve a built-in authorization server for pgmcp's users (login, consent, tokens). */
  enabled: bool().default(false),
  /** The issuer identifier; null: this server's origin as the request reaches it. */
  issuer: secureUrl('issuer URL').nullable().default(null),
  accessTokenTtlSeconds: intIn(60, 86_400).default(900),
  refreshTokenTtlSeconds: intIn(300).default(2_592_000),
  codeTtlSeconds: intIn(10, 600).default(60),
  /** RFC 7591 registration at /oauth/register. */
  dynamicRegistration: bool().default(true),
  /** Client IDs that are https URLs of client metadata documents. */
  clientMetadataDocuments: bool().default(true),
  /** Scopes granted when a client asks for none; empty: the user's roles. */
  defaultScopes: stringList(scopeName).default([]),
}).prefault({});

const oauthSchema = section({
  /** Every MCP request needs a verified token (NpgsqlRest's RequireAuthorization). */
  requireAuthorization: bool().default(false),
  /** Issuers whose access tokens are accepted, advertised in the protected resource metadata. */
  authorizationServers: stringList(secureUrl('issuer URL')).default([]),
  /** Scopes advertised in the metadata and asked for in challenges. */
  scopesSupported: stringList(scopeName).default([]),
  /** The canonical resource URI tokens must name in aud; null: derived from each request. */
  audience: secureUrl('resource URI').nullable().default(null),
  /** Other aud values accepted (an IdP that names the API by an id, such as api://…). */
  additionalAudiences: stringList(text()).default([]),
  /** Where the metadata is served; null: /.well-known/oauth-protected-resource + the MCP path. */
  protectedResourceMetadataPath: zod
    .string({ error: 'expected a string' })
    .regex(/^\/[A-Za-z0-9._~/-]*$/, { error: 'expected a path starting with /' })
    .nullable()
    .default(null),
  /** Leave out of lists what the caller may not use (as auth.filterToolsByRole). */
  filterToolsByRole: bool().default(false),
  /** Where in the claims the principal's parts are read from. */
  claims: section({
    userId: claimPath.default('sub'),
    tenantId: claimPath.nullable().default(null),
    /** A list (or space-separated string) of pgmcp roles; null: roles come from scopes only. */
    roles: claimPath.nullable().default(null),
    pgRole: claimPath.nullable().default(null),
  }).prefault({}),
  /** Scope → pgmcp roles; a scope not listed grants the role of the same name. */
  scopeRoles: zod
    .record(scopeName, stringList(roleName), {
      error: 'expected a mapping of scopes to role lists',
    })
    .default({}),
  clockSkewSeconds: intIn(0, 300).default(30),
  /** Bearer tokens longer than this are refused unread. */
  maxTokenBytes: intIn(512, 65_536).default(8192),
  /** Fetching issuer metadata and keys: time limit, cache, and the pause before a refetch on an unknown key id. */
  jwks: section({
    timeoutMs: intIn(100, 30_000).default(3000),
    cacheSeconds: intIn(10).default(600),
    cooldownSeconds: intIn(0).default(30),
    maxBytes: intIn(1024, 4_194_304).default(262_144),
  }).prefault({}),
  /** RFC 7662 introspection for opaque (non-JWT) tokens; off while url is null. */
  introspection: section({
    url: secureUrl('introspection endpoint').nullable().default(null),
    clientId: optionalText().default(null),
    /** Environment variable holding the client secret (never the secret itself). */
    clientSecretEnv: optionalText().default(null),
    cacheSeconds: intIn(0, 3600).default(60),
  }).prefault({}),
  /**
   * Hosts pgmcp's own fetches (client metadata documents, issuer metadata and keys,
   * introspection) may reach although they are on loopback, private, link-local or other
   * special addresses: host names, IP addresses or CIDR ranges, every port of them. The
   * configured issuers and introspection endpoint are allowed without being listed, at their own
   * origin (scheme, host and port) only.
   */
  allowedFetchHosts: stringList(fetchHostItem).default([]),
  server: oauthServerSchema,
});

const authSchema = section({
  /**
   * Whether /mcp and /api/* need a bearer token. null: yes when the HTTP server is bound to a
   * non-loopback address (--require-auth sets true, --no-auth false).
   */
  required: zod.boolean({ error: 'expected true, false or null' }).nullable().default(null),
  /** Leave out of tools/resources/prompts lists what the caller may not use (as NpgsqlRest does). */
  filterToolsByRole: bool().default(false),
  /** Peers whose X-User-Id / X-Tenant-Id headers are believed (addresses or CIDR ranges). */
  trustedProxies: stringList(addressItem).default([]),
  proxyHeaders: section({
    userId: headerName.default('x-user-id'),
    tenantId: headerName.default('x-tenant-id'),
    /** Comma-separated pgmcp roles from the proxy; null: proxy principals have no roles. */
    roles: headerName.nullable().default(null),
  }).prefault({}),
  /** stdio: the caller is the local user who started pgmcp; who that is, for PostgreSQL. */
  stdio: section({
    userId: optionalText().default(null),
    tenantId: optionalText().default(null),
    roles: stringList(roleName).default([]),
    /** A PostgreSQL role for SET LOCAL ROLE on every call (the login role must be a member). */
    pgRole: optionalText().default(null),
  }).prefault({}),
  /** How long a login session lasts (absolute, from login). */
  sessionTtlSeconds: intIn(60).default(86_400),
  /** How long a verified bearer token is trusted in-process before the state database is asked again. */
  cacheTtlMs: intIn(0, 60_000).default(5_000),
  lockout: section({
    /** Failed logins of one user name within the window that lock it. */
    maxFailures: intIn(1).default(5),
    /** Failed logins from one client address within the window that lock the address. */
    maxFailuresPerAddress: intIn(1).default(20),
    windowSeconds: intIn(1).default(900),
    lockSeconds: intIn(1).default(900),
  }).prefault({}),
  oauth: oauthSchema.prefault({}),
});

const auditSchema = section({
  /** Write audit records to the pgmcp.audit table of the state database. */
  database: bool().default(true),
  /** Also append them, one JSON object a line, to this file; null: no file. */
  file: optionalText().default(null),
});

/** Per built-in tool settings: `tools.query_database.roles: [analyst]`. */
const toolsSchema = zod.record(
  zod.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, { error: 'expected a tool name' }),
  section({
    /** Only callers with one of these pgmcp roles may call the tool; empty: everyone. */
    roles: stringList(roleName).default([]),
  }),
  { error: 'expected a mapping of tool names to settings' },
);

// --- edge: rate limits ---
// A route family is `mcp` (the MCP endpoint and its /v1 alias) or `api`, optionally narrowed
// by path segments under /api: `api.login` is /api/login, `api.chat` is /api/chat and below.
const routeFamily = zod.string().regex(/^(mcp|api(\.[\w-]+)*)$/);

const redisUrl = zod
  .string({ error: 'expected a redis:// URL or null' })
  .regex(/^rediss?:\/\/./i, { error: 'expected a URL starting with redis:// or rediss://' })
  .nullable();

const rateLimitSchema = section({
  /** Requests per minute per caller on every limited route family; null = no default limit. */
  requestsPerMinute: intIn(1).nullable().default(null),
  /** Per-family limits that replace requestsPerMinute there (and turn limiting on there). */
  routes: zod
    .record(routeFamily, intIn(1), {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? 'unknown route family (expected mcp, api, or api.<segment> such as api.login)'
          : 'expected a mapping of route families to limits',
    })
    .default({}),
  /** Counters in Redis (shared by every instance); null = in this process's memory. */
  redis: redisUrl.default(null),
  /** Prefix of the Redis keys, so deployments sharing a Redis keep apart. */
  redisKeyPrefix: text().default('pgmcp:ratelimit:'),
});

const EMBEDDING_PROVIDERS = [
  'offline',
  'openai',
  'openaiCompatible',
  'voyage',
  'ollama',
  'gemini',
] as const;

interface RemoteDefaults {
  model: string;
  apiKeyEnv: string | null;
  baseUrl: string | null;
  batchSize: number;
}

// One shape for every provider reached over HTTP; only the defaults differ.
const remoteProvider = (defaults: RemoteDefaults) =>
  section({
    model: text().default(defaults.model),
    /** Ask for (and check) this many dimensions; null: whatever the model returns. */
    dimensions: intIn(1, 16000).nullable().default(null),
    /** Environment variable that holds the API key. */
    apiKeyEnv: optionalText().default(defaults.apiKeyEnv),
    /** File that holds the API key; wins over apiKeyEnv. */
    apiKeyFile: optionalText().default(null),
    baseUrl: optionalText().default(defaults.baseUrl),
    batchSize: intIn(1, 2048).default(defaults.batchSize),
    timeoutMs: intIn(100).default(30_000),
    /** Retries after a 429, a 5xx or a dropped connection, with exponential backoff. */
    maxRetries: intIn(0, 10).default(3),
  }).prefault({});

const embeddingsSchema = section({
  /** The provider generate_embedding, similarity_search and pgmcp embed use by default. */
  provider: zod
    .enum(EMBEDDING_PROVIDERS, { error: `expected one of ${EMBEDDING_PROVIDERS.join(', ')}` })
    .default('offline'),
  offline: section({
    dimensions: intIn(8, 2000).default(256),
    batchSize: intIn(1, 10_000).default(256),
  }).prefault({}),
  openai: remoteProvider({
    model: 'text-embedding-3-small',
    apiKeyEnv: 'OPENAI_API_KEY',
    baseUrl: null,
    batchSize: 256,
  }),
  openaiCompatible: remoteProvider({
    model: 'text-embedding',
    apiKeyEnv: null,
    baseUrl: null,
    batchSize: 64,
  }),
  voyage: remoteProvider({
    model: 'voyage-3.5-lite',
    apiKeyEnv: 'VOYAGE_API_KEY',
    baseUrl: null,
    batchSize: 128,
  }),
  ollama: remoteProvider({
    model: 'nomic-embed-text',
    apiKeyEnv: null,
    baseUrl: null,
    batchSize: 64,
  }),
  gemini: remoteProvider({
    model: 'gemini-embedding-001',
    apiKeyEnv: 'GOOGLE_GENERATIVE_AI_API_KEY',
    baseUrl: null,
    batchSize: 100,
  }),
}).superRefine((e, ctx) => {
  if (e.provider === 'openaiCompatible' && e.openaiCompatible.baseUrl === null) {
    ctx.addIssue({
      code: 'custom',
      path: ['openaiCompatible', 'baseUrl'],
      message: 'is required when embeddings.provider is openaiCompatible',
    });
  }
});

const logSchema = section({
  level: zod
    .enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` })
    .default('info'),
});

const REGISTRY_MODES = ['auto', 'mcp', 'pgmi'] as const;
const registrySchema = section({
  /** Where SQL handlers come from: mcp (pgmcp's registry), pgmi (an existing pgmi deployment), auto. */
  mode: zod
    .enum(REGISTRY_MODES, { error: `expected one of ${REGISTRY_MODES.join(', ')}` })
    .default('auto'),
});

/** The sections, by name; messages about unknown keys list a section's valid keys from here. */
export const SECTIONS = {
  server: serverSchema,
  http: httpSchema,
  database: databaseSchema,
  embedded: embeddedSchema,
  state: stateSchema,
  auth: authSchema,
  audit: auditSchema,
  log: logSchema,
  rateLimit: rateLimitSchema,
  embeddings: embeddingsSchema,
  llm: llmSchema,
  registry: registrySchema,
} as const;

// prefault (not default) so a missing section is parsed from {} and gets its own defaults.
export const configSchema = zod.strictObject(
  {
    server: SECTIONS.server.prefault({}),
    transport: zod
      .enum(TRANSPORTS, { error: `expected one of ${TRANSPORTS.join(', ')}` })
      .default('http'),
    http: SECTIONS.http.prefault({}),
    database: SECTIONS.database.prefault({}),
    /** Several databases; empty: the one of `database` (its url, else the embedded one). */
    databases: databasesSchema.default([]),
    embedded: SECTIONS.embedded.prefault({}),
    state: SECTIONS.state.prefault({}),
    auth: SECTIONS.auth.prefault({}),
    audit: SECTIONS.audit.prefault({}),
    tools: toolsSchema.default({}),
    log: SECTIONS.log.prefault({}),
    rateLimit: SECTIONS.rateLimit.prefault({}),
    embeddings: SECTIONS.embeddings.prefault({}),
    llm: SECTIONS.llm.prefault({}),
    registry: SECTIONS.registry.prefault({}),
  },
  { error: 'expected a mapping of sections' },
);

/** The fully defaulted, validated configuration. */
export type Config = z.infer<typeof configSchema>;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type Transport = (typeof TRANSPORTS)[number];
export type EmbeddingsConfig = Config['embeddings'];
export type { LlmConfig, LlmProviderConfig, LlmProviderType } from './llm.js';
