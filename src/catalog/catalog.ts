// The catalog cache: one snapshot shared by every caller, loaded on first use, reloaded
// when older than ttlMs or after invalidate() (a DDL notification will call it later).
// Concurrent callers share one load; a failed load is not cached.
import { createHash } from 'node:crypto';
import { ANONYMOUS } from '../core/principal.js';
import type { Database } from '../db/database.js';
import { isCatalogRace } from '../db/shielded.js';
import { loadSnapshot } from './load.js';
import type { CatalogSnapshot, VisibilityRules } from './types.js';

/** Loads made before another session's DDL is allowed to fail the caller's. */
const LOAD_ATTEMPTS = 4;

export interface CatalogOptions {
  /** How long a snapshot stays fresh. 0 reloads on every call. */
  ttlMs: number;
  /** statement_timeout for the catalog queries (default 30 s). */
  timeoutMs?: number;
  /** Clock, for tests. */
  now?: () => number;
}

export type CatalogChangeListener = (snapshot: CatalogSnapshot, previous: CatalogSnapshot) => void;

export interface Catalog {
  readonly policy: VisibilityRules;
  /** The database's name as every tool shows it (Database.name, never the URL). */
  readonly databaseName: string;
  /**
   * A fresh snapshot: the cached one, or a new load when it expired or was invalidated.
   * maxAgeMs asks for one read no longer than that ago (a tool that missed a table asks for
   * a recent one; the bound keeps repeated misses from reloading on every call).
   */
  snapshot(options?: { maxAgeMs?: number }): Promise<CatalogSnapshot>;
  /** The cached snapshot, fresh or not, without loading (null before the first load). */
  cached(): CatalogSnapshot | null;
  /** Forget the cached snapshot: the next snapshot() reloads. */
  invalidate(): void;
  /**
   * Called after a reload whose structure differs from the previous snapshot (tables,
   * columns, keys, indexes, comments; not row estimates or sizes). Returns an unsubscribe.
   */
  onChange(listener: CatalogChangeListener): () => void;
}

/** Structure only: estimates and sizes move with every ANALYZE and are not a change. */
export function structureFingerprint(snapshot: CatalogSnapshot): string {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(snapshot.schemas));
  for (const rel of snapshot.relations) {
    hash.update(
      JSON.stringify([
        rel.schema,
        rel.name,
        rel.kind,
        rel.comment,
        rel.columns,
        rel.primaryKey,
        rel.uniqueKeys,
        rel.foreignKeys,
        rel.indexes,
        rel.parent,
        rel.partitions,
        rel.selectable,
      ]),
    );
  }
  return hash.digest('hex');
}

export function createCatalog(
  db: Database,
  policy: VisibilityRules,
  options: CatalogOptions,
): Catalog {
  const now = options.now ?? Date.now;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const listeners = new Set<CatalogChangeListener>();
  let current: CatalogSnapshot | null = null;
  let fingerprint: string | null = null;
  let freshUntil = 0;
  let currentStartedAt = 0;
  let loading: Promise<CatalogSnapshot> | null = null;
  // Bumped by invalidate(): a load that started before it must not count as fresh.
  let generation = 0;
  // Loads are numbered so a slow old load never replaces the result of a newer one.
  let started = 0;
  let applied = 0;

  /**
   * One load, in a transaction of its own. The catalog functions it calls (pg_get_expr,
   * pg_get_partkeydef …) fail when another session drops their object between the statement's
   * snapshot and the call: the load is then made again, on a catalog where it is gone.
   */
  const readSnapshot = async (): Promise<CatalogSnapshot> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await db.withTransaction(
          { readOnly: true, timeoutMs, principal: ANONYMOUS },
          (client) => loadSnapshot(client, policy),
        );
      } catch (error) {
        if (attempt === LOAD_ATTEMPTS || !isCatalogRace(error)) throw error;
      }
    }
  };

  const load = (): Promise<CatalogSnapshot> => {
    const gen = generation;
    const seq = ++started;
    const startedAt = now();
    const promise = readSnapshot()
      .then((snapshot) => {
        if (seq < applied) return snapshot;
        applied = seq;
        const previous = current;
        current = snapshot;
        currentStartedAt = startedAt;
        freshUntil = gen === generation ? startedAt + options.ttlMs : 0;
        if (previous && listeners.size > 0) {
          const next = structureFingerprint(snapshot);
          const before = fingerprint ?? structureFingerprint(previous);
          fingerprint = next;
          if (next !== before) for (const listener of listeners) listener(snapshot, previous);
        } else {
          fingerprint = null;
        }
        return snapshot;
      })
      .finally(() => {
        if (loading === promise) loading = null;
      });
    loading = promise;
    return promise;
  };

  return {
    policy,
    databaseName: db.name,
    snapshot(opts = {}) {
      const at = now();
      const recentEnough = opts.maxAgeMs === undefined || at - currentStartedAt <= opts.maxAgeMs;
      if (current && at < freshUntil && recentEnough) return Promise.resolve(current);
      return loading ?? load();
    },
    cached: () => current,
    invalidate() {
      generation += 1;
      freshUntil = 0;
      // A load in flight may have read the old catalog: the next caller starts a new one.
      loading = null;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
