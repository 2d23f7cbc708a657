// The one description of pgmcp's configuration: types, defaults and validation rules.
// Every source (file, env, flags) is merged into a plain object first and validated here
// once, so a value is judged the same way wherever it came from. The larger sections have files
// of their own (database-section.ts, auth-section.ts, embeddings-section.ts, llm.ts), and the
// field types they share are in fields.ts.
import type { z } from 'zod';
import { authSchema } from './auth-section.js';
import { databaseSchema, databasesSchema, withDefaultRows } from './database-section.js';
import { embeddingsSchema } from './embeddings-section.js';
import {
  bool,
  databaseUrl,
  hostItem,
  intIn,
  originItem,
  portSchema,
  roleName,
  stringList,
} from './fields.js';
import { LOG_LEVELS } from './levels.js';
import { llmSchema } from './llm.js';
import { optionalText, section, text, zod } from './zod.js';

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
  'cluster.redis',
  // An OTLP endpoint's URL may carry a credential in its user part or query.
  'telemetry.otlpEndpoint',
]);

const serverSchema = section({
  name: optionalText().default(null),
  /** serverInfo.version in initialize and server/discover; null: pgmcp's own version. */
  version: optionalText().default(null),
  instructions: optionalText().default(null),
  toolDescriptionSuffix: optionalText().default(null),
  stateSecret: optionalText().default(null),
  /** Offer list_database_connections and select_database_connection to the model. */
  databaseTools: bool().default(false),
  /** At SIGTERM, how long calls in flight may go on before they are cancelled. */
  shutdownTimeoutMs: intIn(0).default(10_000),
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
  /** After SIGTERM, how long /ready answers 503 while requests are still served, before closing. */
  drainMs: intIn(0).default(0),
  requestTimeoutMs: intIn(1).default(30_000),
  maxConnections: intIn(1).default(1024),
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

const embeddedSchema = section({
  // Resolved against the working directory by loadConfig, which knows the cwd.
  dataDir: text().default('.pgmcp/data'),
  demo: bool().default(true),
});

const stateSchema = section({
  /** Where tokens, users, sessions and the audit table live; null: the embedded database. */
  url: databaseUrl.default(null),
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
    /** false: the tool is not offered at all. */
    enabled: bool().default(true),
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

// --- several instances: where shared sessions and the messages between instances go ---
const clusterSchema = section({
  /** Sessions and messages in Redis; null = in the state database (PostgreSQL state only). */
  redis: redisUrl.default(null),
  /** Prefix of the Redis keys and channel, so deployments sharing a Redis keep apart. */
  redisKeyPrefix: text().default('pgmcp:cluster:'),
});

// --- tasks: tool calls answered with a handle and run on (docs/tools.md, Tasks) ---
const tasksSchema = section({
  /** The longest a task and its result are kept (also the ttl of one that asks for none). */
  maxTtlMs: intIn(1_000).default(3_600_000),
  /** One caller's tasks running at once; one more is refused (-32000) until one ends. */
  maxRunningPerCaller: intIn(1).default(4),
  /** One caller's tasks kept (ended or not, within their ttl); one more is refused. */
  maxStoredPerCaller: intIn(1).default(100),
  /** How often an instance marks its running tasks alive and stops those cancelled elsewhere. */
  heartbeatIntervalMs: intIn(100).default(5_000),
  /** How often expired ended tasks are deleted and abandoned working ones failed. */
  sweepIntervalMs: intIn(100).default(60_000),
});

// --- operability: Prometheus metrics ---
const listenAddress = zod
  .string({ error: 'expected HOST:PORT or null' })
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):\d{1,5}$/, {
    error: 'expected HOST:PORT (an IPv6 host in brackets: [::1]:9464)',
  })
  .refine((value) => Number(value.slice(value.lastIndexOf(':') + 1)) <= 65535, {
    error: 'expected a port 0–65535',
  })
  .nullable();

const metricsSchema = section({
  /** Serve GET /metrics in the Prometheus text format. */
  enabled: bool().default(false),
  /** Serve it on this address only (not on the main port); null: on the main port. */
  listen: listenAddress.default(null),
  /** On the main port, /metrics without an admin token. */
  allowAnonymous: bool().default(false),
});

const logSchema = section({
  level: zod
    .enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` })
    .default('info'),
});

// --- traces (OpenTelemetry; docs/tracing.md) ---
const telemetrySchema = section({
  /** OTLP/HTTP base URL (as OTEL_EXPORTER_OTLP_ENDPOINT; /v1/traces is appended); null: the OTEL_* variables decide. */
  otlpEndpoint: zod
    .string({ error: 'expected an http:// or https:// URL or null' })
    .regex(/^https?:\/\/./i, { error: 'expected a URL starting with http:// or https://' })
    .nullable()
    .default(null),
  /** Put the statement's text on PostgreSQL spans (db.query.text); off: only its operation. */
  includeSql: bool().default(false),
  /** Append a sqlcommenter comment (/*traceparent='…'*\/) to the statements a tool call sends. */
  sqlComment: bool().default(false),
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
  metrics: metricsSchema,
  rateLimit: rateLimitSchema,
  cluster: clusterSchema,
  tasks: tasksSchema,
  embeddings: embeddingsSchema,
  llm: llmSchema,
  registry: registrySchema,
  telemetry: telemetrySchema,
} as const;

// prefault (not default) so a missing section is parsed from {} and gets its own defaults.
export const configObject = zod.strictObject(
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
    metrics: SECTIONS.metrics.prefault({}),
    rateLimit: SECTIONS.rateLimit.prefault({}),
    cluster: SECTIONS.cluster.prefault({}),
    tasks: SECTIONS.tasks.prefault({}),
    embeddings: SECTIONS.embeddings.prefault({}),
    llm: SECTIONS.llm.prefault({}),
    registry: SECTIONS.registry.prefault({}),
    telemetry: SECTIONS.telemetry.prefault({}),
  },
  { error: 'expected a mapping of sections' },
);

/** The configuration's schema: the sections, then the defaults that depend on other keys. */
export const configSchema = configObject.transform(withDefaultRows);

/** The fully defaulted, validated configuration. */
export type Config = z.infer<typeof configSchema>;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type Transport = (typeof TRANSPORTS)[number];
export type EmbeddingsConfig = Config['embeddings'];
export type TelemetryConfig = Config['telemetry'];
export type { LlmConfig, LlmProviderConfig, LlmProviderType } from './llm.js';
