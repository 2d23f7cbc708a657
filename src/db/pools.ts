// The pools a Database draws its connections from: the primary's host pool (one host or
// several) and, with database.readReplicas, the call router that sends replicaOk calls to a
// replica (replicas.ts).
import type { Logger } from 'pino';
import type { DatabaseOptions } from './database-options.js';
import { createHostPool, type HostPool, type HostTargets } from './host-pool.js';
import { PG_TYPES } from './pg-types.js';
import { createCallRouter, NO_REPLICAS, type CallRouter, type PrimaryLogin } from './replicas.js';

export function openPools(
  targets: HostTargets,
  options: DatabaseOptions,
  opened: {
    poolMax: number;
    connectTimeoutMs: number;
    name: string;
    logger: Logger;
    /** The primary's user and live password: replicas without one of their own follow it. */
    primaryLogin: PrimaryLogin | null;
  },
): { pool: HostPool; router: CallRouter } {
  const { name, logger } = opened;
  const poolOptions = {
    pool: {
      max: opened.poolMax,
      types: PG_TYPES,
      connectionTimeoutMillis: opened.connectTimeoutMs,
      idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    },
    // An idle client dying (server restart, embedded child killed) must not crash the process.
    onIdleError: (error: Error, host: string) =>
      logger.warn({ err: { message: error.message }, host }, 'idle database connection failed'),
    onSwitch: (host: string | null, previous: string | null, why: string) =>
      logger.info({ database: name, host, previous, why }, 'database host in use changed'),
  };
  const pool = createHostPool(targets, poolOptions);
  const router = createCallRouter(
    pool,
    options.replicas ?? NO_REPLICAS,
    poolOptions,
    (replica, usable, why) =>
      logger.info(
        { database: name, replica, why },
        usable ? 'read replica in use' : 'read replica skipped',
      ),
    opened.primaryLogin,
  );
  return { pool, router };
}
