// Exclusive lock on an embedded data directory. PGlite has no postmaster.pid: two processes
// can open one directory without error and silently lose committed writes, so pgmcp must
// refuse to start while another live pgmcp holds the directory.

import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { CHILD_PROCESS_TITLE } from './child-script.js';

export const LOCK_FILE_NAME = 'pgmcp.lock';

export interface LockOwner {
  pid: number;
  hostname: string;
  token: string;
  startedAt: string;
  /** The PGlite child of that pgmcp, so a successor can stop an orphan left behind by a crash. */
  childPid?: number;
  /**
   * Where the child's unix socket is (the data directory, or a temp directory when that path is
   * too long), so another pgmcp command can reach the running database instead of failing.
   */
  socketDir?: string;
}

export interface DataDirLock {
  readonly path: string;
  readonly owner: Readonly<LockOwner>;
  /** Records the current child in the lock file (atomically, by rename). */
  setChildPid(pid: number | undefined): void;
  /** Records where the child listens (atomically, by rename). */
  setSocketDir(dir: string): void;
  /** Removes the lock file if it is still ours. Synchronous so an 'exit' handler can call it. */
  release(): void;
}

/** Process inspection, injectable so tests need no real processes. */
export interface ProcessProbe {
  pid: number;
  hostname: string;
  isAlive(pid: number): boolean;
  /** True only when the pid is verifiably an embedded PGlite child of some pgmcp. */
  isEmbeddedChild(pid: number): boolean;
  kill(pid: number): void;
}

export const systemProbe: ProcessProbe = {
  pid: process.pid,
  hostname: osHostname(),
  isAlive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      // EPERM: the process exists but belongs to another user.
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
  isEmbeddedChild(pid) {
    try {
      // The child sets process.title, which Linux shows as its command line.
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith(CHILD_PROCESS_TITLE);
    } catch {
      return false; // no /proc (not Linux) or the process is gone: never kill what we cannot identify
    }
  },
  kill(pid) {
    process.kill(pid, 'SIGKILL');
  },
};

const ATTEMPTS = 4;
// A lock file is created empty and then written; a reader may catch it in between.
const GARBLED_RECHECK_MS = 100;
const ORPHAN_EXIT_WAIT_MS = 1_000;

export interface AcquireOptions {
  /** The directory as the user named it, for messages (default: `dataDir`). */
  displayDir?: string;
  probe?: ProcessProbe;
}

export function acquireDataDirLock(
  dataDir: string,
  logger: Logger,
  options: AcquireOptions = {},
): DataDirLock {
  const { displayDir = dataDir, probe = systemProbe } = options;
  const path = join(dataDir, LOCK_FILE_NAME);
  const owner: LockOwner = {
    pid: probe.pid,
    hostname: probe.hostname,
    token: randomUUID(),
    startedAt: new Date().toISOString(),
  };

  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (tryCreate(path, owner)) return createLockHandle(path, owner);

    const existing = readOwnerSettled(path);
    if (existing === 'missing') continue;
    if (existing !== 'garbled' && holdsLock(existing, probe))
      throw lockedError(displayDir, path, existing);

    if (existing === 'garbled') {
      logger.warn({ lockFile: path }, 'taking over an unreadable embedded database lock file');
    } else {
      logger.warn(
        { lockFile: path, stalePid: existing.pid },
        `taking over the embedded database lock of pid ${existing.pid}, which is no longer running`,
      );
      stopOrphanChild(existing, probe, logger);
    }
    removeIfPresent(path);
  }
  // Only reachable when other starters keep racing us for the same directory.
  const last = readOwner(path);
  throw lockedError(displayDir, path, typeof last === 'string' ? undefined : last);
}

function tryCreate(path: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, `${JSON.stringify(owner)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * The live pgmcp holding `dataDir` (with symlinks resolved), or null when the directory is free
 * or its lock is stale. A holder on another host counts as live, as for acquiring.
 */
export function readLiveLockOwner(
  dataDir: string,
  probe: ProcessProbe = systemProbe,
): LockOwner | null {
  const owner = readOwner(join(dataDir, LOCK_FILE_NAME));
  if (typeof owner === 'string') return null;
  return holdsLock(owner, probe) ? owner : null;
}

function holdsLock(owner: LockOwner, probe: ProcessProbe): boolean {
  // A pid from another host cannot be checked (shared or network file system): assume it is live.
  if (owner.hostname !== probe.hostname) return true;
  return probe.isAlive(owner.pid);
}

function stopOrphanChild(owner: LockOwner, probe: ProcessProbe, logger: Logger): void {
  const childPid = owner.childPid;
  if (childPid === undefined || !probe.isAlive(childPid)) return;
  if (!probe.isEmbeddedChild(childPid)) {
    logger.warn(
      { childPid },
      'the previous owner recorded a child process that cannot be identified; leaving it alone',
    );
    return;
  }
  // An orphan exits by itself when it notices its parent is gone, but not while a runaway query
  // blocks it; two PGlite processes on one directory lose writes, so it has to go now.
  logger.warn(
    { childPid },
    'stopping an orphaned embedded database process left by a previous pgmcp',
  );
  try {
    probe.kill(childPid);
  } catch (error) {
    logger.warn({ childPid, err: error }, 'could not stop the orphaned embedded database process');
    return;
  }
  // SIGKILL is asynchronous; give the kernel a moment to close its files before a new child
  // opens the directory. (A zombie still counts as alive but has already closed them.)
  for (let waited = 0; waited < ORPHAN_EXIT_WAIT_MS && probe.isAlive(childPid); waited += 50) {
    sleepSync(50);
  }
}

type ReadResult = LockOwner | 'missing' | 'garbled';

function readOwner(path: string): ReadResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockOwner>;
    if (typeof parsed.pid === 'number' && typeof parsed.hostname === 'string')
      return parsed as LockOwner;
  } catch {
    // fall through
  }
  return 'garbled';
}

function readOwnerSettled(path: string): ReadResult {
  const first = readOwner(path);
  if (first !== 'garbled') return first;
  sleepSync(GARBLED_RECHECK_MS);
  return readOwner(path);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function lockedError(dataDir: string, path: string, owner: LockOwner | undefined): AppError {
  const who = owner
    ? `another pgmcp process (pid ${owner.pid}${owner.hostname ? ` on ${owner.hostname}` : ''})`
    : 'another pgmcp process';
  return new AppError(
    ErrorCodes.EMBEDDED_LOCKED,
    `The embedded database directory ${dataDir} is in use by ${who}. ` +
      'Stop the other pgmcp, or start this one with --data-dir pointing to a different directory. ' +
      `If you are sure no pgmcp uses it, delete ${path}.`,
    { category: 'unavailable', details: { dataDir, lockFile: path, pid: owner?.pid } },
  );
}

function createLockHandle(path: string, owner: LockOwner): DataDirLock {
  let released = false;
  const isStillOurs = (): boolean => {
    const current = readOwner(path);
    return typeof current !== 'string' && current.token === owner.token;
  };
  const rewrite = (): void => {
    const temp = `${path}.${owner.token}.tmp`;
    const fd = openSync(temp, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(owner)}\n`);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  };
  return {
    path,
    owner,
    setChildPid(pid) {
      if (released) return;
      owner.childPid = pid;
      rewrite();
    },
    setSocketDir(dir) {
      if (released) return;
      owner.socketDir = dir;
      rewrite();
    },
    release() {
      if (released) return;
      released = true;
      try {
        if (isStillOurs()) unlinkSync(path);
      } catch {
        // best effort: a leftover lock with a dead pid is taken over on the next start
      }
    },
  };
}
