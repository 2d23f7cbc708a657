// The embedded default database: owns the data directory lock, the socket location and the
// PGlite child, restarts the child on request (to stop a runaway query: PGlite ignores
// statement_timeout and cancel) and on unexpected death, and seeds the demo dataset.

import { mkdirSync, realpathSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { AppError } from '../../core/errors.js';
import { describeExit, spawnPgliteChild, type ChildExit, type PgliteChild } from './child.js';
import { seedDemoDataset } from './demo.js';
import {
  crashLoopError,
  startFailedError,
  stoppedError,
  unusableDirectoryError,
} from './embedded-errors.js';
import { acquireDataDirLock, type DataDirLock } from './lock.js';
import { waitUntilQueryable, type Connection } from './readiness.js';
import { createSocketLocation, SOCKET_PORT, type SocketLocation } from './socket-location.js';

export interface EmbeddedOptions {
  dataDir: string;
  seedDemo: boolean;
  logger: Logger;
  startTimeoutMs?: number;
}

export interface EmbeddedDatabase {
  /** pg.PoolConfig fragment: { host: <socket dir>, port, user: 'postgres', database: 'postgres' }. */
  readonly connection: Connection;
  readonly dataDir: string;
  /** SIGKILL the child and start it again on the same directory; concurrent calls share one restart. */
  restart(reason: string): Promise<void>;
  /** True while the child is up and accepting connections. */
  readonly running: boolean;
  /** Resolves once a restart in progress (if any) has finished, successfully or not. */
  whenReady(): Promise<void>;
  /** Stop the child and release the lock. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_START_TIMEOUT_MS = 60_000;
// pglite-socket answers a connection over the limit with raw text, not an error, and a pool of
// one needs a second slot while a broken connection is torn down (reference §4.3). The third is
// for a short-lived admin command (`pgmcp token|user`) reaching the running database
// (db/embedded/attach.ts). Every connection shares PGlite's one session; the socket server runs
// one connection's transaction to its end before it serves another.
const MAX_CONNECTIONS = 3;
const STOP_GRACE_MS = 3_000;
// Crash-loop guard for automatic restarts: more than this many failures within the window
// means something is wrong with the directory or the installation, not a one-off crash.
const MAX_FAILURES_IN_WINDOW = 4;
const FAILURE_WINDOW_MS = 60_000;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 5_000;

export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = resolve(options.dataDir);
  const logger = options.logger.child({ component: 'embedded-db' });
  let realDir: string;
  try {
    // PGlite trusts every connection; keep the directory (and a socket inside it) private.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    // PGlite cannot mount a data directory given through a symlink (ENOENT inside WASM).
    realDir = realpathSync(dataDir);
  } catch (error) {
    throw unusableDirectoryError(dataDir, error);
  }
  let lock: DataDirLock;
  try {
    lock = acquireDataDirLock(realDir, logger, { displayDir: dataDir });
  } catch (error) {
    throw error instanceof AppError ? error : unusableDirectoryError(dataDir, error);
  }
  let socket: SocketLocation;
  try {
    socket = createSocketLocation(realDir);
  } catch (error) {
    lock.release();
    throw unusableDirectoryError(dataDir, error);
  }
  try {
    lock.setSocketDir(socket.dir);
  } catch (error) {
    // Only `pgmcp token|user` reaching a running server depends on it.
    logger.warn({ err: error }, 'could not record the socket directory in the lock file');
  }

  const db = new EmbeddedSupervisor({
    dataDir,
    realDir,
    lock,
    socket,
    logger,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
  });
  try {
    const started = Date.now();
    await db.launch();
    logger.info(
      { dataDir, socketDir: socket.dir, ms: Date.now() - started },
      'embedded database started',
    );
  } catch (error) {
    await db.stop();
    throw error;
  }
  if (options.seedDemo) {
    // The database itself is fine without the demo; the transaction rolled back, so the next
    // start tries again.
    await seedDemoDataset(db.connection, logger).catch((error: unknown) =>
      logger.error(
        { err: error },
        'loading the demo dataset failed; the next start will try again',
      ),
    );
  }
  return db;
}

interface SupervisorParts {
  /** As the user gave it (resolved): used in messages. */
  dataDir: string;
  /** With symlinks resolved: what the child opens. */
  realDir: string;
  lock: DataDirLock;
  socket: SocketLocation;
  logger: Logger;
  startTimeoutMs: number;
}

class EmbeddedSupervisor implements EmbeddedDatabase {
  readonly connection: Connection;
  #child: PgliteChild | undefined;
  #up = false;
  #stopped = false;
  #stopping: Promise<void> | undefined;
  #restarting: Promise<void> | undefined;
  #failures: number[] = [];
  readonly #stopSignal = new AbortController();
  readonly #onProcessExit = (): void => this.#cleanupSync();

  readonly dataDir: string;
  private readonly realDir: string;
  private readonly lock: DataDirLock;
  private readonly socket: SocketLocation;
  private readonly logger: Logger;
  private readonly startTimeoutMs: number;

  constructor(parts: SupervisorParts) {
    this.dataDir = parts.dataDir;
    this.realDir = parts.realDir;
    this.lock = parts.lock;
    this.socket = parts.socket;
    this.logger = parts.logger;
    this.startTimeoutMs = parts.startTimeoutMs;
    this.connection = Object.freeze({
      host: parts.socket.dir,
      port: SOCKET_PORT,
      user: 'postgres',
      database: 'postgres',
    });
    process.once('exit', this.#onProcessExit);
  }

  get running(): boolean {
    return this.#up && !this.#stopped;
  }

  /** Spawn a child and wait until it answers SELECT 1; the previous child must be gone. */
  async launch(): Promise<void> {
    if (this.#stopped) throw stoppedError();
    // A killed child leaves its socket file behind, and listen() on it fails with EADDRINUSE.
    // Removing it is safe: we hold the directory lock and the previous child has exited.
    rmSync(this.socket.path, { force: true });
    const child = spawnPgliteChild({
      dataDir: this.realDir,
      socketPath: this.socket.path,
      maxConnections: MAX_CONNECTIONS,
      logger: this.logger,
    });
    this.#child = child;
    try {
      this.lock.setChildPid(child.pid);
    } catch (error) {
      // Only orphan clean-up after a crash depends on it; not worth failing the start.
      this.logger.warn({ err: error }, 'could not record the child pid in the lock file');
    }
    void child.exited.then((exit) => this.#onChildExit(child, exit));
    try {
      await waitUntilQueryable(child, this.connection, this.startTimeoutMs);
    } catch (error) {
      await child.kill();
      throw startFailedError(this.dataDir, child.lastOutput(), error);
    }
    if (this.#stopped) {
      await child.kill();
      throw stoppedError();
    }
    this.#up = true;
  }

  whenReady(): Promise<void> {
    return this.#restarting?.catch(() => undefined) ?? Promise.resolve();
  }

  restart(reason: string): Promise<void> {
    if (this.#stopped) return Promise.reject(stoppedError());
    this.#restarting ??= this.#restartNow(reason).finally(() => {
      this.#restarting = undefined;
    });
    return this.#restarting;
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#stopNow();
    return this.#stopping;
  }

  async #restartNow(reason: string): Promise<void> {
    const started = Date.now();
    this.logger.info({ reason }, 'restarting the embedded database');
    this.#up = false;
    await this.#child?.kill();
    await this.launch();
    this.logger.info({ reason, ms: Date.now() - started }, 'embedded database restarted');
  }

  #onChildExit(child: PgliteChild, exit: ChildExit): void {
    this.logger.debug(
      { childPid: child.pid, code: exit.code, signal: exit.signal },
      'embedded database process exited',
    );
    if (child !== this.#child) return;
    const wasUp = this.#up;
    this.#up = false;
    // A child that never became ready is reported by launch() itself.
    if (!wasUp || child.stopRequested || this.#stopped || this.#restarting) return;
    this.logger.warn(
      { childPid: child.pid, code: exit.code, signal: exit.signal, lastOutput: child.lastOutput() },
      `the embedded database process ${describeExit(exit)} unexpectedly; restarting it`,
    );
    const restarting = this.#restartAfterCrash().finally(() => {
      this.#restarting = undefined;
    });
    restarting.catch(() => undefined); // logged inside; callers of restart() see the rejection
    this.#restarting = restarting;
  }

  async #restartAfterCrash(): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.#failures = [...this.#failures.filter((at) => now - at < FAILURE_WINDOW_MS), now];
      if (this.#failures.length > MAX_FAILURES_IN_WINDOW) {
        this.logger.error(
          { failures: this.#failures.length, windowMs: FAILURE_WINDOW_MS },
          'the embedded database keeps failing; giving up on automatic restarts (restart pgmcp to try again)',
        );
        throw crashLoopError(this.dataDir);
      }
      const delay = Math.min(BACKOFF_BASE_MS * 2 ** (this.#failures.length - 1), BACKOFF_MAX_MS);
      await sleep(delay, undefined, { signal: this.#stopSignal.signal }).catch(() => undefined);
      if (this.#stopped) throw stoppedError();
      try {
        await this.launch();
        this.logger.info(
          { attempt: this.#failures.length },
          'embedded database restarted after a crash',
        );
        return;
      } catch (error) {
        if (this.#stopped) throw error;
        this.logger.warn({ err: error }, 'automatic restart of the embedded database failed');
      }
    }
  }

  async #stopNow(): Promise<void> {
    this.#stopped = true;
    this.#up = false;
    this.#stopSignal.abort();
    // Whatever child exists now (even one a restart is still waiting for) goes; a restart that
    // has not spawned yet sees #stopped and spawns nothing.
    await this.#child?.shutdown(STOP_GRACE_MS);
    await this.#restarting?.catch(() => undefined);
    await this.#child?.kill();
    this.#cleanupSync();
    process.off('exit', this.#onProcessExit);
    this.logger.info({ dataDir: this.dataDir }, 'embedded database stopped');
  }

  /** Runs from stop() and, if pgmcp exits without stop(), from the process 'exit' event. */
  #cleanupSync(): void {
    const child = this.#child;
    if (child && !child.stopRequested) void child.kill();
    this.lock.release();
    this.socket.cleanup();
  }
}
