// The `database` section (the one database: its URL, pool, limits and access policy) and
// `databases:` (several, each a URL, libpq-style fields or the embedded PGlite, optionally
// changing any `database.*` setting for itself).
import type { z } from 'zod';
import { SSL_MODES } from './database-url.js';
import { LOAD_BALANCE_HOSTS, TARGET_SESSION_ATTRS } from './multi-host.js';
import { bool, databaseUrl, databaseUrls, intIn, stringList } from './fields.js';
import { optionalText, section, text, zod } from './zod.js';

// A name pattern: dot-separated parts of letters, digits, _, $, - and the * wildcard.
export const namePattern = zod
  .string({ error: 'expected a string' })
  .regex(/^[\w$*-]+(\.[\w$*-]+){0,2}$/, {
    error: 'expected a name pattern such as public, public.users, *.email or users.ssn',
  });

export const accessSchema = section({
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

export const databaseSchema = section({
  url: databaseUrl.default(null),
  /**
   * The same server without a connection pooler in between, for the catalog watch's LISTEN
   * (a LISTEN through a transaction-mode pooler would sit on a server session that callers
   * share); null: LISTEN on `url` unless it goes through a pooler, then poll.
   */
  directUrl: databaseUrl.default(null),
  /** Standbys read-only calls may use (docs/high-availability.md, "Read replicas"). */
  readReplicas: databaseUrls.default([]),
  /** A replica replaying more than this far behind the primary is skipped. */
  replicaMaxLagMs: intIn(0).default(5000),
  /** After a caller's write, that caller's reads go to the primary for this long. */
  readYourWritesMs: intIn(0).default(5000),
  allowWrites: bool().default(false),
  statementTimeoutMs: intIn(1).default(30_000),
  maxRows: intIn(1).default(1000),
  /** Unset: min(100, maxRows), filled in by withDefaultRows once the whole file is read. */
  defaultRows: intIn(1).optional(),
  maxResultBytes: intIn(1).default(1_048_576),
  poolSize: intIn(1).default(10),
  /** Calls that may wait for a connection when all are busy; more are refused (PGMCP212). */
  queueLimit: intIn(0).default(100),
  /** How long a call waits for a connection before it is refused (PGMCP212). */
  queueTimeoutMs: intIn(1).default(10_000),
  /** How long opening a connection to the database may take. */
  connectTimeoutMs: intIn(1).default(10_000),
  /** How long an unused connection stays open in the pool. */
  idleTimeoutMs: intIn(1).default(30_000),
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
  if (db.defaultRows !== undefined && db.defaultRows > db.maxRows) {
    ctx.addIssue({
      code: 'custom',
      path: ['defaultRows'],
      message: `must not exceed database.maxRows (${db.maxRows})`,
      // issues.ts names where maxRows was set (or that it is the default) beside its value.
      params: { rule: 'must not exceed', relatedKey: 'database.maxRows', relatedValue: db.maxRows },
    });
  }
});

/** The row limit when the caller gives none and the configuration names none. */
export const DEFAULT_ROWS = 100;

interface RowLimits {
  maxRows?: number;
  defaultRows?: number;
}

/**
 * Fills in `defaultRows` where the configuration leaves it unset: min(100, maxRows), so a
 * maxRows below 100 alone is enough. A `databases:` entry with its own maxRows gets its own
 * default unless `database.defaultRows` was set (then it inherits that, and resolveDatabases
 * refuses a value above its maxRows).
 */
export function withDefaultRows<
  C extends { database: RowLimits & { maxRows: number }; databases: RowLimits[] },
>(config: C): C & { database: C['database'] & { defaultRows: number } } {
  const given = config.database.defaultRows;
  const database = {
    ...config.database,
    defaultRows: given ?? Math.min(DEFAULT_ROWS, config.database.maxRows),
  };
  const databases = config.databases.map((entry) =>
    entry.defaultRows !== undefined || given !== undefined || entry.maxRows === undefined
      ? entry
      : { ...entry, defaultRows: Math.min(DEFAULT_ROWS, entry.maxRows) },
  );
  return { ...config, database, databases };
}

// --- several databases ---
// One entry of `databases:`: where it is (a URL, libpq-style fields, or the embedded PGlite)
// and, optionally, any `database.*` setting it changes for itself; unset ones come from the
// `database` section. Passwords come from the environment or a file, never the YAML itself.
export const databaseEntryName = zod
  .string({ error: 'expected a string' })
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, {
    error: 'expected a name of letters, digits, _ . - (at most 64)',
  });

export const databaseEntrySchema = section({
  name: databaseEntryName,
  default: bool().optional(),
  url: databaseUrl.optional(),
  /** As database.directUrl, for this database (never inherited: it names one server). */
  directUrl: databaseUrl.optional(),
  /** As database.readReplicas, for this database (never inherited: they name servers). */
  readReplicas: databaseUrls.optional(),
  replicaMaxLagMs: intIn(0).optional(),
  readYourWritesMs: intIn(0).optional(),
  /** One host, or several separated by commas (tried as libpq tries them). */
  host: text().optional(),
  /** One port for every host, or a list with one per host. */
  port: zod
    .union([intIn(1, 65535), zod.array(intIn(1, 65535)).min(1)], {
      error: 'expected a port number or a list of port numbers',
    })
    .optional(),
  database: text().optional(),
  user: text().optional(),
  /** The name of an environment variable holding the password. */
  passwordEnv: text().optional(),
  /** A file whose first line is the password (a mounted secret). */
  passwordFile: text().optional(),
  sslmode: zod.enum(SSL_MODES, { error: `expected one of ${SSL_MODES.join(', ')}` }).optional(),
  /** Which server of several hosts to use (libpq's target_session_attrs). */
  targetSessionAttrs: zod
    .enum(TARGET_SESSION_ATTRS, { error: `expected one of ${TARGET_SESSION_ATTRS.join(', ')}` })
    .optional(),
  /** Try the hosts in a random order (libpq's load_balance_hosts). */
  loadBalanceHosts: zod
    .enum(LOAD_BALANCE_HOSTS, { error: `expected one of ${LOAD_BALANCE_HOSTS.join(', ')}` })
    .optional(),
  /** Seconds to wait for each host (libpq's connect_timeout). */
  connectTimeout: intIn(0).optional(),
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
  queueLimit: intIn(0).optional(),
  queueTimeoutMs: intIn(1).optional(),
  connectTimeoutMs: intIn(1).optional(),
  idleTimeoutMs: intIn(1).optional(),
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

export const databasesSchema = zod
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
