// What the access policy learned from the catalog, kept between calls. Under a policy every
// statement is judged on lookups (its relations as PostgreSQL resolves them, the views and
// functions it reaches); they depend only on the catalog, the role and the search_path, so a
// call may reuse the answers of earlier ones — provided the catalog has not changed since.
//
// That is checked by PostgreSQL itself, in the call's own transaction and round trip, in a step
// sent just ahead of the caller's SQL (CallSession.precede): the catalog generation (a count of
// committed DDL transactions kept by the event trigger of sql/watch/002_generation.sql) and the
// effective search_path must be what they were when the answers were read, or that step fails
// and the caller's SQL is not executed; query_database then runs the call again without the
// cache. So a remembered answer is never used on a catalog that changed: the cache adds no
// window to the analysis' own (docs/security.md, "Concurrent DDL").
//
// Soundness of what is remembered: the generation is read before any answer it covers (it only
// grows, and a change is visible with the DDL that made it, at commit), so an answer read after
// a change is filed under the older generation and is never used once the change is seen.
// Without the generation (a database where `pgmcp install` has not run, a role that may not read
// it) nothing is remembered and every call looks the catalog up, as before.
//
// Entries are per role (the role decides which schemas the search_path keeps), dropped after
// ttlMs, on invalidate() (the live catalog's reload: a change notification or its TTL) and after
// a write pgmcp runs itself.
import type { CallSession, Lookup } from '../../db/call-session.js';
import type { AccessPolicy } from '../access-policy.js';
import type { Masks } from './query-policy.js';

const POLICY_CACHE_TTL_MS = 60_000;
/** Remembered answers (and statements) per role, the least recently used dropped first. */
const MAX_ENTRIES = 2_000;

/** Whether the database keeps a generation (asked on pgmcp's own connection). */
export const GENERATION_KEPT_SQL = `SELECT EXISTS (SELECT FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'pgmcp_watch' AND c.relname = 'generation' AND c.relkind = 'r') AS ok`;

/** Whether this role may read the generation, and its search_path. */
const PROBE_SQL = `SELECT pg_catalog.current_schemas(true)::text AS path,
  EXISTS (SELECT FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'pgmcp_watch' AND c.relname = 'generation' AND c.relkind = 'r'
      AND pg_catalog.has_schema_privilege(n.oid, 'USAGE')
      AND pg_catalog.has_table_privilege(c.oid, 'SELECT')) AS counted`;

const GENERATION_SQL = `SELECT pg_catalog.sum(g.n)::text AS generation FROM pgmcp_watch.generation g`;

/**
 * Fails (22P02, before the caller's SQL) unless the generation and the search_path are still
 * those the remembered answers were read under. The cast of a non-constant CASE is evaluated at
 * run time, never folded by the planner.
 */
const UNCHANGED_SQL = `SELECT (CASE
  WHEN (SELECT pg_catalog.sum(g.n) FROM pgmcp_watch.generation g)::text = $1
   AND pg_catalog.current_schemas(true)::text = $2
  THEN '0' ELSE 'pgmcp: the catalog changed' END)::int4 AS unchanged`;

interface Scope {
  since: number;
  /** null: this role cannot read the generation; nothing is remembered. */
  generation: string | null;
  path: string;
  answers: Map<string, { rows: object[] }>;
  /** Verdicts by policy (one cache may serve tools with different policies), then statement. */
  masks: WeakMap<AccessPolicy, Map<string, Masks>>;
}

/** The cache as one call sees it. */
export interface CallCache {
  /** Lookups answered from the cache when they can be, remembered when they cannot. */
  readonly lookup: Lookup;
  /** The statement's verdict under `policy` from an earlier call, if the catalog has not changed. */
  masks(policy: AccessPolicy, sql: string): Promise<Masks | undefined>;
  remember(policy: AccessPolicy, sql: string, masks: Masks): void;
  /** Whether anything remembered was used: the caller's SQL must then be preceded by the check. */
  readonly used: boolean;
  /** Whether one of the cache's own statements failed (then the call is run again without it). */
  readonly failed: boolean;
  /** Sends the check ahead of the caller's SQL when something remembered was used. */
  guard(): void;
}

export interface PolicyCache {
  /**
   * Whether the database keeps a generation at all (checked by the composition at start and on
   * every catalog reload). When it does not, calls do not open the cache: they look the catalog
   * up as before, without even asking each role whether it may read the generation.
   */
  available: boolean;
  open(session: CallSession): CallCache;
  /** Forget everything (a change notification, a reload, a write of pgmcp's own). */
  invalidate(): void;
}

function bounded<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.set(key, value);
  if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as K);
}

/** The entry, moved to the end so that the least recently used is the first dropped. */
function recent<K, V>(map: Map<K, V> | undefined, key: K): V | undefined {
  const value = map?.get(key);
  if (value !== undefined) {
    map!.delete(key);
    map!.set(key, value);
  }
  return value;
}

export function createPolicyCache(
  options: { ttlMs?: number; now?: () => number } = {},
): PolicyCache {
  const ttlMs = options.ttlMs ?? POLICY_CACHE_TTL_MS;
  const now = options.now ?? Date.now;
  const scopes = new Map<string, Scope>();
  // A scope read by a call that started before an invalidate() must not be kept.
  let epoch = 0;

  return {
    available: true,
    invalidate() {
      epoch += 1;
      scopes.clear();
    },
    open(session) {
      let reused = false;
      let failed = false;
      let scope: Scope | null = null;

      /** Ours, not the caller's: a failure here sends the call round again without the cache. */
      const own = async <R extends object>(text: string): Promise<R[]> => {
        try {
          return (await session.query<R>(text)).rows;
        } catch (error) {
          failed = true;
          throw error;
        }
      };

      const ensureScope = async (): Promise<Scope> => {
        if (scope) return scope;
        const known = scopes.get(session.role);
        if (known && now() - known.since < ttlMs) return (scope = known);
        const started = epoch;
        const [probe] = await own<{ path: string; counted: boolean }>(PROBE_SQL);
        let generation: string | null = null;
        if (probe?.counted) {
          const [row] = await own<{ generation: string | null }>(GENERATION_SQL);
          generation = row?.generation ?? null;
        }
        scope = {
          since: now(),
          generation,
          path: probe?.path ?? '',
          answers: new Map(),
          masks: new WeakMap(),
        };
        if (started === epoch) scopes.set(session.role, scope);
        return scope;
      };

      /** A lookup answered from the cache when it can be, through `send` when it cannot. */
      const remembering =
        (send: NonNullable<Lookup['shielded']>): NonNullable<Lookup['shielded']> =>
        async <R extends object>(text: string, values: unknown[] = [], options = {}) => {
          const current = await ensureScope();
          if (current.generation === null) return send<R>(text, values, options);
          const key = `${text}\u0000${JSON.stringify(values)}`;
          const remembered = recent(current.answers, key);
          if (remembered) {
            reused = true;
            return remembered as { rows: R[] };
          }
          const answer = await send<R>(text, values, options);
          bounded(current.answers, key, answer);
          return answer;
        };
      const lookup: Lookup = {
        query: remembering((text, values) => session.query(text, values)),
        shielded: remembering((text, values, options) => session.shielded(text, values, options)),
      };

      return {
        lookup,
        get used() {
          return reused;
        },
        get failed() {
          return failed;
        },
        async masks(policy, sql) {
          const current = await ensureScope();
          if (current.generation === null) return undefined;
          const masks = recent(current.masks.get(policy), sql);
          if (masks) reused = true;
          return masks;
        },
        remember(policy, sql, masks) {
          if (scope?.generation == null) return;
          let verdicts = scope.masks.get(policy);
          if (!verdicts) scope.masks.set(policy, (verdicts = new Map()));
          bounded(verdicts, sql, masks);
        },
        guard() {
          if (reused && scope?.generation != null)
            session.precede({ text: UNCHANGED_SQL, values: [scope.generation, scope.path] });
        },
      };
    },
  };
}
