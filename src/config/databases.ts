// The configured databases as one list, whichever form the configuration used: `databases:`
// entries (each inheriting what it leaves unset from `database:`), the single `database.url`,
// or nothing at all (the embedded PGlite). Passwords are read here, from the environment or a
// file, and only ever travel inside the connection URL, which is never printed.
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { databaseUrlProblem, parseDatabaseUrl } from './database-url.js';
import { connectTargets, hostLabel, withPassword as passwordInto } from './multi-host.js';
import { configError } from './issues.js';
import type { DatabaseEntry } from './database-section.js';
import type { Config } from './schema.js';

type DatabaseSettings = Omit<
  Config['database'],
  'url' | 'directUrl' | 'exchangeLog' | 'routineSchemas'
>;

/** Where a database is, as `GET /api/databases` shows it (never a password). */
export interface DatabaseLocation {
  host: string;
  port: number | null;
  database: string;
  user: string;
  sslmode: string;
}

export interface ResolvedDatabase extends DatabaseSettings {
  name: string;
  /** postgres:// URL with the password in it (a secret); null: the embedded database. */
  url: string | null;
  /** The same server without a pooler, for LISTEN (a secret too); null: none configured. */
  directUrl: string | null;
  isDefault: boolean;
  location: DatabaseLocation;
  /** User names or pgmcp roles that may use it; empty: everyone. */
  availableToUsers: readonly string[];
}

export interface ResolveDatabasesInput {
  env?: Record<string, string | undefined>;
  cwd?: string;
}

const EMBEDDED_LOCATION: DatabaseLocation = {
  host: 'embedded',
  port: null,
  database: 'postgres',
  user: 'postgres',
  sslmode: 'disable',
};

/** Where a URL points, without its password (parsed as the driver parses it). */
export function locationOf(url: string): DatabaseLocation {
  const targets = connectTargets(url);
  if (typeof targets === 'string') throw new TypeError('not a valid postgres:// URL');
  const parsed = parseDatabaseUrl(targets.urlFor(targets.hosts[0]!));
  if (parsed === null) throw new TypeError('not a valid postgres:// URL');
  const { url: u, hostless } = parsed;
  // Without sslmode in the URL, node-postgres connects without SSL unless PGSSLMODE says
  // otherwise (configuration.md, "Connection URLs and sslmode").
  const sslmode = u.searchParams.get('sslmode') ?? process.env.PGSSLMODE ?? 'disable';
  const port = u.port === '' ? (u.searchParams.get('port') ?? '') : u.port;
  if (targets.hosts.length > 1) {
    // Several hosts (libpq's multi-host form): all of them, each with its port.
    return {
      host: targets.hosts.map(hostLabel).join(','),
      port: null,
      database: decoded(u.pathname.replace(/^\//, '')) || 'postgres',
      user: decoded(u.username) || 'postgres',
      sslmode,
    };
  }
  return {
    host: (hostless ? '' : decoded(u.hostname)) || u.searchParams.get('host') || 'localhost',
    port: port === '' ? 5432 : Number(port),
    database: decoded(u.pathname.replace(/^\//, '')) || 'postgres',
    user: decoded(u.username) || 'postgres',
    sslmode,
  };
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The name a database gets when the configuration gives none (the single `database.url`). */
function nameOfUrl(url: string | null): string {
  if (url === null) return 'pgmcp-embedded';
  return locationOf(url).database;
}

export function resolveDatabases(
  config: Config,
  input: ResolveDatabasesInput = {},
): ResolvedDatabase[] {
  const {
    url: singleUrl,
    directUrl: singleDirectUrl,
    exchangeLog: _log,
    routineSchemas: _rs,
    ...shared
  } = config.database;
  if (config.databases.length === 0) {
    return [
      {
        ...shared,
        name: nameOfUrl(singleUrl),
        url: singleUrl,
        directUrl: singleUrl === null ? null : singleDirectUrl,
        readReplicas: singleUrl === null ? [] : shared.readReplicas,
        isDefault: true,
        location: singleUrl === null ? EMBEDDED_LOCATION : safeLocation(singleUrl),
        availableToUsers: [],
      },
    ];
  }
  const defaultIndex = Math.max(
    0,
    config.databases.findIndex((entry) => entry.default === true),
  );
  return config.databases.map((entry, i) => {
    const url = entry.embedded === true ? null : urlOf(entry, i, input);
    // The schema checked a given url; one assembled from host, port, … is checked here.
    const problem = url === null || entry.url != null ? null : databaseUrlProblem(url);
    if (problem !== null) {
      throw configError(
        `databases[${i}]: host, port, database and user do not make a usable URL: ${problem}`,
        `databases.${i}.host`,
      );
    }
    const {
      name,
      availableToUsers,
      default: _d,
      url: _u,
      directUrl: entryDirectUrl,
      readReplicas: entryReplicas,
      host: _h,
      port: _p,
      database: _db,
      user: _user,
      passwordEnv: _pe,
      passwordFile: _pf,
      sslmode: _s,
      targetSessionAttrs: _tsa,
      loadBalanceHosts: _lbh,
      connectTimeout: _ct,
      embedded: _e,
      access,
      ...overrides
    } = entry;
    const settings: DatabaseSettings = { ...shared };
    for (const [key, value] of Object.entries(overrides)) {
      if (value !== undefined) (settings as unknown as Record<string, unknown>)[key] = value;
    }
    if (access !== undefined) settings.access = access;
    if (settings.defaultRows > settings.maxRows) {
      // Both values as they were set: this entry's own, or the `database` section's.
      const from = (key: 'defaultRows' | 'maxRows'): string =>
        entry[key] !== undefined ? `databases[${i}].${key}` : `database.${key}`;
      throw configError(
        `databases[${i}].defaultRows: ${from('defaultRows')} (${settings.defaultRows}) must not exceed ${from('maxRows')} (${settings.maxRows})`,
        `databases.${i}.defaultRows`,
      );
    }
    return {
      ...settings,
      name,
      url,
      directUrl:
        url === null || entryDirectUrl == null
          ? null
          : withPassword(entryDirectUrl, passwordOf(entry, i, input), `databases.${i}.directUrl`),
      readReplicas: url === null ? [] : (entryReplicas ?? []),
      isDefault: i === defaultIndex,
      location: url === null ? EMBEDDED_LOCATION : safeLocation(url),
      availableToUsers,
    };
  });
}

function safeLocation(url: string): DatabaseLocation {
  try {
    return locationOf(url);
  } catch {
    return {
      host: 'unknown',
      port: null,
      database: 'unknown',
      user: 'unknown',
      sslmode: 'unknown',
    };
  }
}

/** `url` with the entry's password in it, unless it names one itself. */
function withPassword(url: string, password: string | null, path: string): string {
  const parsed = parseDatabaseUrl(url);
  if (parsed === null) throw configError(`${path}: expected a valid postgres:// URL`, path);
  if (password === null || parsed.url.password !== '') return url;
  parsed.url.password = encodeURIComponent(password);
  const out = parsed.url.toString();
  return parsed.hostless ? out.replace(/@[^/]*\//, '@/') : out;
}

function urlOf(entry: DatabaseEntry, i: number, input: ResolveDatabasesInput): string {
  const password = passwordOf(entry, i, input);
  if (entry.url !== undefined && entry.url !== null) {
    if (password === null) return entry.url;
    if (connectTargetsOf(entry.url) > 1) return passwordInto(entry.url, password) ?? entry.url;
    const parsed = parseDatabaseUrl(entry.url);
    if (parsed === null) {
      throw configError(
        `databases[${i}].url: expected a valid postgres:// URL`,
        `databases.${i}.url`,
      );
    }
    parsed.url.password = encodeURIComponent(password);
    const withPassword = parsed.url.toString();
    // A URL without a host (a socket in ?host=) got the driver's placeholder to parse.
    return parsed.hostless ? withPassword.replace(/@[^/]*\//, '@/') : withPassword;
  }
  const user = entry.user ?? 'postgres';
  const auth =
    password === null
      ? encodeURIComponent(user)
      : `${encodeURIComponent(user)}:${encodeURIComponent(password)}`;
  // host and port may be lists (libpq's multi-host form): one port for all, or one per host.
  const hosts = (entry.host ?? 'localhost').split(',').map((h) => h.trim() || 'localhost');
  const ports = portsOf(entry.port, hosts.length, i);
  const params = new URLSearchParams();
  if (entry.sslmode !== undefined) params.set('sslmode', entry.sslmode);
  if (entry.targetSessionAttrs !== undefined) {
    params.set('target_session_attrs', entry.targetSessionAttrs);
  }
  if (entry.loadBalanceHosts !== undefined) {
    params.set('load_balance_hosts', entry.loadBalanceHosts);
  }
  if (entry.connectTimeout !== undefined) {
    params.set('connect_timeout', String(entry.connectTimeout));
  }
  // A socket directory goes in ?host= (and its port with it): `@:5432/` parses nowhere.
  const socket = hosts.some((h) => h.startsWith('/'));
  if (socket) {
    params.set('host', hosts.join(','));
    params.set('port', ports.join(','));
  }
  const where = socket
    ? ''
    : hosts.map((host, n) => hostLabel({ host, port: ports[n]! })).join(',');
  const query = params.toString();
  return `postgres://${auth}@${where}/${encodeURIComponent(entry.database ?? 'postgres')}${query ? `?${query}` : ''}`;
}

function portsOf(port: DatabaseEntry['port'], count: number, i: number): number[] {
  const list = port === undefined ? [5432] : Array.isArray(port) ? port : [port];
  if (list.length !== 1 && list.length !== count) {
    throw configError(
      `databases[${i}].port: expected one port, or one per host (${count})`,
      `databases.${i}.port`,
    );
  }
  return Array.from({ length: count }, (_, n) => list[list.length === 1 ? 0 : n]!);
}

function connectTargetsOf(url: string): number {
  const targets = connectTargets(url);
  return typeof targets === 'string' ? 1 : targets.hosts.length;
}

function passwordOf(entry: DatabaseEntry, i: number, input: ResolveDatabasesInput): string | null {
  if (entry.passwordEnv !== undefined) {
    const value = (input.env ?? process.env)[entry.passwordEnv];
    if (value === undefined || value === '') {
      throw configError(
        `databases[${i}].passwordEnv: the environment variable ${entry.passwordEnv} is not set`,
        `databases.${i}.passwordEnv`,
      );
    }
    return value;
  }
  if (entry.passwordFile !== undefined) {
    const path = resolvePath(input.cwd ?? process.cwd(), entry.passwordFile);
    try {
      return (readFileSync(path, 'utf8').split(/\r?\n/)[0] ?? '').trim();
    } catch {
      throw configError(
        `databases[${i}].passwordFile: cannot read ${entry.passwordFile}`,
        `databases.${i}.passwordFile`,
      );
    }
  }
  return null;
}
