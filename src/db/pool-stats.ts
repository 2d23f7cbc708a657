// A pool's connections at this moment, as the metrics show them per database.
import type pg from 'pg';

export interface PoolStats {
  /** The pool's size (poolSize). */
  max: number;
  /** Connections open, idle or in use. */
  total: number;
  idle: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

/** One pool, or the pools of several hosts added up (only the host in use is usually open). */
export function poolStatsOf(pools: pg.Pool | readonly pg.Pool[], max: number): PoolStats {
  const all = Array.isArray(pools) ? pools : [pools as pg.Pool];
  return {
    max,
    total: all.reduce((n, p) => n + p.totalCount, 0),
    idle: all.reduce((n, p) => n + p.idleCount, 0),
    waiting: all.reduce((n, p) => n + p.waitingCount, 0),
  };
}
