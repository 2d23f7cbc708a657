// The state database: where tokens, users, sessions, login attempts and the audit table live,
// in schema `pgmcp`. The embedded PGlite by default (the same instance as the demo data; a
// running server's instance is reached through its socket), or any PostgreSQL at state.url,
// which several pgmcp instances may share.
import pg from 'pg';
import type { Logger } from 'pino';
import { AppError, ErrorCodes } from '../core/errors.js';
import { redactUrl } from '../config/index.js';
import { driverMessage, isConnectionError } from '../db/errors.js';
import { openEmbeddedAccess, type EmbeddedAccess } from '../db/embedded/index.js';
import { createHostPool, singleTarget, targetsOfUrl, type HostPool } from '../db/host-pool.js';
import { migrateState } from './migrations.js';

export interface StateDb {
  /** For messages: `embedded database in DIR` or the URL without its password. */
  readonly description: string;
  /** 'embedded-attached': a running pgmcp owns the embedded child; we use its socket. */
  readonly mode: 'postgres' | 'embedded-started' | 'embedded-attached' | 'shared';
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /** `work` inside BEGIN … COMMIT on one connection (ROLLBACK on a throw). */
  transaction<T>(work: (client: Queryable) => Promise<T>): Promise<T>;
  /** Ends what this StateDb opened (an injected pool is left to its owner). */
  close(): Promise<void>;
}

/** Lends a connection for `work` and takes it back idle (db/database.ts Database fits). */
export interface ConnectionSource {
  withOwnConnection<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
}

export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

export interface OpenStateOptions {
  /** state.url; null: the embedded database in `dataDir`. */
  url: string | null;
  dataDir: string;
  logger: Logger;
  /**
   * Borrow connections from here instead of opening a pool (the server passes its embedded
   * Database: PGlite has one session, so state queries take turns with the tools' calls).
   */
  via?: ConnectionSource;
  /** Bring an older schema up to date (default true); false: an older schema is an error. */
  migrate?: boolean;
}

// The pool's owner may parse timestamps as text (db/database.ts does); the stores want Dates
// and numbers, so every state query names its own parsers.
const STATE_TYPES: pg.CustomTypesConfig = { getTypeParser: pg.types.getTypeParser };

export async function openStateDatabase(options: OpenStateOptions): Promise<StateDb> {
  let embedded: EmbeddedAccess | null = null;
  let pool: HostPool | null = null;
  const onIdleError = (error: Error): void =>
    options.logger.warn(
      { err: { message: error.message } },
      'idle state database connection failed',
    );
  let description: string;
  let mode: StateDb['mode'];
  if (options.via) {
    description = options.url ? redactUrl(options.url) : `embedded database in ${options.dataDir}`;
    mode = 'shared';
  } else if (options.url) {
    description = redactUrl(options.url);
    // One host or several (libpq's multi-host URL, target_session_attrs): see db/host-pool.ts.
    pool = createHostPool(targetsOfUrl(options.url), {
      pool: { max: 4, connectionTimeoutMillis: 10_000 },
      onIdleError,
    });
    mode = 'postgres';
  } else {
    description = `embedded database in ${options.dataDir}`;
    embedded = await openEmbeddedAccess({ dataDir: options.dataDir, logger: options.logger });
    // One connection: the embedded database has a single session, whatever the pool size.
    pool = createHostPool(singleTarget('embedded', embedded.connection), {
      pool: { max: 1, connectionTimeoutMillis: 10_000 },
      onIdleError,
    });
    mode = embedded.mode === 'started' ? 'embedded-started' : 'embedded-attached';
  }
  const wrap = (error: unknown): unknown => {
    // The host pool's refusal (no host reachable or qualifying) is the state database's.
    if (error instanceof AppError && error.code === ErrorCodes.DB_UNAVAILABLE) {
      const several = Array.isArray(error.details?.['hosts']);
      return unavailable(description, several ? error : (error.cause ?? error));
    }
    return error instanceof AppError || !cannotReach(error)
      ? error
      : unavailable(description, error);
  };

  const source: ConnectionSource = options.via ?? {
    async withOwnConnection(work) {
      const client = await pool!.connect();
      let broken: unknown;
      try {
        return await work(client);
      } catch (error) {
        broken = error;
        throw error;
      } finally {
        const lost = broken instanceof Error && cannotReach(broken) ? broken : undefined;
        client.release(lost);
        if (lost) pool!.lost(client, 'connection lost');
      }
    },
  };

  const run = <R extends pg.QueryResultRow>(
    on: HostPool | pg.PoolClient,
    text: string,
    values?: unknown[],
  ) =>
    (on as HostPool).query<R>({ text, values, types: STATE_TYPES }).catch((error: unknown) => {
      throw wrap(error);
    });

  const db: StateDb = {
    description,
    mode,
    query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) =>
      pool
        ? run<R>(pool, text, values)
        : source
            .withOwnConnection((client) => run<R>(client, text, values))
            .catch((error: unknown) => {
              throw wrap(error);
            }),
    async transaction(work) {
      return source
        .withOwnConnection(async (client) => {
          await client.query('BEGIN');
          try {
            const result = await work({ query: (text, values) => run(client, text, values) });
            await client.query('COMMIT');
            return result;
          } catch (error) {
            // A failed ROLLBACK leaves the connection unusable: the source retires it.
            await client.query('ROLLBACK');
            throw error;
          }
        })
        .catch((error: unknown) => {
          throw wrap(error);
        });
    },
    async close() {
      if (pool) await pool.end().catch(() => undefined);
      await embedded?.close();
    },
  };

  try {
    await migrateState(db, { migrate: options.migrate ?? true });
  } catch (error) {
    await db.close();
    throw wrap(error);
  }
  return db;
}

// Besides a lost socket: the server refusing us (28xxx), no such database, shutting down, full.
function cannotReach(error: unknown): boolean {
  if (isConnectionError(error)) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(08|28|3D000|57P0|53300)/.test(code);
}

function unavailable(description: string, cause: unknown): AppError {
  const why = driverMessage(cause);
  return new AppError(
    ErrorCodes.STATE_UNAVAILABLE,
    `The state database (${description}) cannot be reached: ${why}. ` +
      'Check that it runs and that state.url (PGMCP_STATE_URL) is right.',
    { category: 'unavailable', cause, details: { state: description } },
  );
}
