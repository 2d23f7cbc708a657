// Several configured databases behind one registry. Each database has its own Database (pool,
// health), catalog, access policy and a private registry of the built-ins bound to it; the
// directory says who may use which, remembers each caller's selection, and resolves the
// database a call runs on: its `database` argument, else the session's selection, else the
// caller's bound database, else the default one.
import type { DatabaseLocation } from '../config/index.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { Database } from '../db/database.js';
import type { Registry } from './registry.js';

export interface DatabaseTarget {
  readonly name: string;
  readonly location: DatabaseLocation;
  /** User names or pgmcp roles that may use it; empty: everyone. */
  readonly availableToUsers: readonly string[];
  readonly allowWrites: boolean;
  readonly db: Database;
  /** The built-in tools, resources and prompts bound to this database. */
  readonly registry: Registry;
}

/** Why a caller may not use a database, in the words of the pgEdge agent's REST errors. */
export type DatabaseAccess = 'ok' | 'not-found' | 'denied' | 'bound';

export interface DatabaseDirectory {
  readonly targets: readonly DatabaseTarget[];
  readonly defaultName: string;
  get(name: string): DatabaseTarget | undefined;
  access(principal: Principal, name: string): DatabaseAccess;
  /** The databases this caller may use, in configuration order. */
  visibleTo(principal: Principal): DatabaseTarget[];
  /** What the caller selected outside an MCP session (REST, tokens, sessionless MCP). */
  selectedBy(principal: Principal): string | null;
  selectFor(principal: Principal, name: string): void;
  /** The database the caller's calls use when they name none; null when it may use none. */
  currentFor(principal: Principal, sessionSelection: string | null): string | null;
  /** The database a call runs on; throws a clear AppError when it may not use it. */
  resolve(
    principal: Principal,
    requested: string | undefined,
    sessionSelection: string | null,
  ): DatabaseTarget;
  /** The configured database a postgres:// URL (or a bare name) designates, if any. */
  match(reference: string): DatabaseTarget | undefined;
}

/** Principals of stdio and of a server without authentication see every database (pgEdge-compatible). */
const unrestricted = (principal: Principal): boolean =>
  principal.kind === 'anonymous' || principal.kind === 'local';

/** Whose selection a REST request or a sessionless MCP request reads and sets. */
function callerKey(principal: Principal): string {
  if (principal.kind === 'anonymous') return 'anonymous';
  if (principal.kind === 'token') return `token:${principal.tokenId ?? principal.userId ?? ''}`;
  return `${principal.kind}:${principal.userId ?? ''}`;
}

export function createDatabaseDirectory(
  targets: readonly DatabaseTarget[],
  defaultName: string,
): DatabaseDirectory {
  const byName = new Map(targets.map((t) => [t.name, t]));
  const selections = new Map<string, string>();

  const access = (principal: Principal, name: string): DatabaseAccess => {
    const target = byName.get(name);
    if (!target) return 'not-found';
    const bound = principal.boundDatabase ?? null;
    if (bound !== null && bound !== name) return 'bound';
    if (target.availableToUsers.length === 0 || unrestricted(principal)) return 'ok';
    const allowed =
      (principal.userId !== null && target.availableToUsers.includes(principal.userId)) ||
      principal.roles.some((role) => target.availableToUsers.includes(role));
    return allowed ? 'ok' : 'denied';
  };

  const refusal = (name: string, verdict: Exclude<DatabaseAccess, 'ok'>): AppError => {
    if (verdict === 'not-found') {
      return new AppError(
        ErrorCodes.DATABASE_NOT_FOUND,
        `Database not found: no configured database is named ${name}. list_database_connections (or GET /api/databases) lists the ones you may use.`,
        { category: 'not_found', details: { database: name } },
      );
    }
    return new AppError(
      ErrorCodes.DATABASE_DENIED,
      verdict === 'bound'
        ? `Access denied to database ${name}: your API token is bound to a different database.`
        : `Access denied to database ${name}: you are not among its users.`,
      { category: 'forbidden', details: { database: name } },
    );
  };

  const currentFor = (principal: Principal, sessionSelection: string | null): string | null => {
    for (const candidate of [
      sessionSelection,
      selections.get(callerKey(principal)) ?? null,
      principal.boundDatabase ?? null,
      defaultName,
    ]) {
      if (candidate !== null && access(principal, candidate) === 'ok') return candidate;
    }
    return targets.find((t) => access(principal, t.name) === 'ok')?.name ?? null;
  };

  return {
    targets,
    defaultName,
    get: (name) => byName.get(name),
    access,
    visibleTo: (principal) => targets.filter((t) => access(principal, t.name) === 'ok'),
    selectedBy: (principal) => selections.get(callerKey(principal)) ?? null,
    selectFor(principal, name) {
      selections.set(callerKey(principal), name);
    },
    currentFor,
    resolve(principal, requested, sessionSelection) {
      const name = requested ?? currentFor(principal, sessionSelection);
      if (name === null) {
        throw new AppError(
          ErrorCodes.DATABASE_DENIED,
          'Access denied: you may use none of the configured databases.',
          { category: 'forbidden' },
        );
      }
      const verdict = access(principal, name);
      if (verdict !== 'ok') throw refusal(name, verdict);
      return byName.get(name)!;
    },
    match(reference) {
      const direct = byName.get(reference);
      if (direct) return direct;
      let wanted: DatabaseLocation;
      try {
        const url = new URL(reference);
        if (!/^postgres(ql)?:$/i.test(url.protocol)) return undefined;
        wanted = {
          host: decodeURIComponent(url.hostname).toLowerCase(),
          port: url.port === '' ? 5432 : Number(url.port),
          database: decodeURIComponent(url.pathname.replace(/^\//, '')),
          user: decodeURIComponent(url.username),
          sslmode: '',
        };
      } catch {
        return undefined;
      }
      const local = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
      const sameHost = (a: string, b: string): boolean =>
        a.toLowerCase() === b.toLowerCase() || (local.has(a.toLowerCase()) && local.has(b));
      return targets.find(
        (t) =>
          t.location.port !== null &&
          sameHost(t.location.host, wanted.host) &&
          t.location.port === wanted.port &&
          (wanted.database === '' || t.location.database === wanted.database) &&
          (wanted.user === '' || t.location.user === wanted.user),
      );
    },
  };
}

/** The refusal for a reference that designates no configured database (never echoes a password). */
export function unknownDatabaseReference(reference: string): AppError {
  let shown = reference;
  try {
    const url = new URL(reference);
    shown = `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    shown = reference.replace(/:[^@/]*@/, ':****@');
  }
  return new AppError(
    ErrorCodes.DATABASE_NOT_FOUND,
    `Refused: ${shown} is not one of the configured databases, and pgmcp never connects to any other host or database. list_database_connections lists the databases you may use.`,
    { category: 'not_found', details: { database: shown } },
  );
}
