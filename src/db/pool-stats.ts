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

export function poolStatsOf(pool: pg.Pool): PoolStats {
  return {
    max: pool.options.max ?? 0,
    total: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
  };
}
