// Reaching the embedded database from a short-lived command (`pgmcp token`, `pgmcp user`).
// When no pgmcp holds the data directory, the command starts the database itself and stops it
// when done. When a server holds it, starting a second PGlite on the same directory would lose
// writes, so the command connects to the server's child through its unix socket instead: the
// lock file says which process holds the directory and where its socket is.

import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from 'pino';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { startEmbedded, type EmbeddedDatabase } from './embedded.js';
import { readLiveLockOwner, type LockOwner } from './lock.js';
import type { Connection } from './readiness.js';
import { SOCKET_FILE_NAME, SOCKET_PORT } from './socket-location.js';

export interface EmbeddedAccess {
  /** pg connection fragment for the database, whoever runs it. */
  readonly connection: Connection;
  /** 'started': this process runs the child and close() stops it; 'attached': a server runs it. */
  readonly mode: 'started' | 'attached';
  /** The pid of the pgmcp that runs the database (this one when started). */
  readonly ownerPid: number;
  close(): Promise<void>;
}

export interface AttachOptions {
  dataDir: string;
  logger: Logger;
  /** Seed the demo dataset when this process starts the database (default false). */
  seedDemo?: boolean;
  /**
   * How long to keep trying while a holder is starting (its socket is not up yet) or all its
   * connection slots are busy. Default 20 s.
   */
  waitMs?: number;
}

const RETRY_MS = 200;
const PROBE_TIMEOUT_MS = 3_000;

export async function openEmbeddedAccess(options: AttachOptions): Promise<EmbeddedAccess> {
  const deadline = Date.now() + (options.waitMs ?? 20_000);
  let lastError: unknown;
  for (;;) {
    const holder = liveHolder(options.dataDir);
    if (holder === null) {
      try {
        return started(
          await startEmbedded({
            dataDir: options.dataDir,
            seedDemo: options.seedDemo ?? false,
            logger: options.logger,
          }),
        );
      } catch (error) {
        // Another process took the directory between our look and our start: attach to it.
        if (!(error instanceof AppError && error.code === ErrorCodes.EMBEDDED_LOCKED)) throw error;
        lastError = error;
      }
    } else {
      const connection = connectionOf(options.dataDir, holder);
      if (connection !== null) {
        try {
          await probe(connection);
          options.logger.debug(
            { pid: holder.pid, socketDir: connection.host },
            'using the embedded database of the running pgmcp',
          );
          return attached(connection, holder.pid);
        } catch (error) {
          lastError = error;
        }
      }
    }
    if (Date.now() >= deadline) throw unreachableError(options.dataDir, holder, lastError);
    await sleep(RETRY_MS);
  }
}

function liveHolder(dataDir: string): LockOwner | null {
  let realDir: string;
  try {
    realDir = realpathSync(dataDir);
  } catch {
    return null; // no directory yet: nobody runs a database there
  }
  return readLiveLockOwner(realDir);
}

function connectionOf(dataDir: string, holder: LockOwner): Connection | null {
  // A pgmcp from before the socket directory was recorded listens in the data directory.
  const dir = holder.socketDir ?? realpathSync(dataDir);
  if (!existsSync(join(dir, SOCKET_FILE_NAME))) return null;
  return { host: dir, port: SOCKET_PORT, user: 'postgres', database: 'postgres' };
}

async function probe(connection: Connection): Promise<void> {
  const client = new pg.Client({ ...connection, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

function started(db: EmbeddedDatabase): EmbeddedAccess {
  return {
    connection: db.connection,
    mode: 'started',
    ownerPid: process.pid,
    close: () => db.stop(),
  };
}

function attached(connection: Connection, ownerPid: number): EmbeddedAccess {
  return { connection, mode: 'attached', ownerPid, close: async () => undefined };
}

function unreachableError(dataDir: string, holder: LockOwner | null, cause: unknown): AppError {
  const who = holder ? `pgmcp (pid ${holder.pid})` : 'another pgmcp';
  const why = cause instanceof Error ? `: ${cause.message}` : '';
  return new AppError(
    ErrorCodes.EMBEDDED_LOCKED,
    `The embedded database in ${dataDir} is held by ${who}, and its socket did not answer${why}. ` +
      'Try again once that server has started, or stop it and run the command again.',
    { category: 'unavailable', cause, details: { dataDir, pid: holder?.pid } },
  );
}
