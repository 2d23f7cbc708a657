import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../core/errors.js';
import { acquireDataDirLock, LOCK_FILE_NAME, systemProbe, type ProcessProbe } from './lock.js';

function captureLogger(): { logger: pino.Logger; messages: string[] } {
  const messages: string[] = [];
  const logger = pino(
    { level: 'debug' },
    {
      write: (line: string) => void messages.push((JSON.parse(line) as { msg: string }).msg),
    },
  );
  return { logger, messages };
}

function fakeProbe(overrides: Partial<ProcessProbe> = {}): ProcessProbe & { killed: number[] } {
  const killed: number[] = [];
  return {
    pid: 1000,
    hostname: 'here',
    isAlive: () => false,
    isEmbeddedChild: () => false,
    kill: (pid) => void killed.push(pid),
    killed,
    ...overrides,
  };
}

describe('acquireDataDirLock', () => {
  let dir: string;
  let lockPath: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'pgmcp-lock-'));
    lockPath = join(dir, LOCK_FILE_NAME);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const writeOwner = (owner: Record<string, unknown>): void =>
    writeFileSync(
      lockPath,
      JSON.stringify({ hostname: 'here', token: 't', startedAt: 'x', ...owner }),
    );
  const readOwner = (): Record<string, unknown> =>
    JSON.parse(readFileSync(lockPath, 'utf8')) as Record<string, unknown>;

  it('creates a lock file with our pid and removes it on release', () => {
    const { logger } = captureLogger();
    const lock = acquireDataDirLock(dir, logger, { probe: fakeProbe() });
    expect(readOwner()).toMatchObject({ pid: 1000, hostname: 'here' });
    lock.release();
    expect(existsSync(lockPath)).toBe(false);
    lock.release(); // idempotent
  });

  it('refuses a directory held by a live process, naming the directory, the pid and the way out', () => {
    writeOwner({ pid: 4242 });
    const { logger } = captureLogger();
    const probe = fakeProbe({ isAlive: (pid) => pid === 4242 });
    let error: unknown;
    try {
      acquireDataDirLock(dir, logger, { probe, displayDir: '/home/me/.pgmcp' });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: ErrorCodes.EMBEDDED_LOCKED, category: 'unavailable' });
    const message = (error as Error).message;
    expect(message).toContain('/home/me/.pgmcp'); // the name the user gave, not the resolved one
    expect(message).toContain('pid 4242');
    expect(message).toContain('--data-dir');
    expect(readOwner()).toMatchObject({ pid: 4242 }); // untouched
  });

  it('refuses a lock held by another host, whose pid cannot be checked', () => {
    writeOwner({ pid: 4242, hostname: 'elsewhere' });
    const { logger } = captureLogger();
    expect(() => acquireDataDirLock(dir, logger, { probe: fakeProbe() })).toThrow(
      /in use by another pgmcp/,
    );
  });

  it('takes over a stale lock whose pid is dead, with a log line', () => {
    writeOwner({ pid: 4242 });
    const { logger, messages } = captureLogger();
    const lock = acquireDataDirLock(dir, logger, { probe: fakeProbe() });
    expect(readOwner()).toMatchObject({ pid: 1000 });
    expect(messages.some((m) => m.includes('pid 4242') && m.includes('no longer running'))).toBe(
      true,
    );
    lock.release();
  });

  it('takes over a stale lock left by a real process that has exited', () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeOwner({ pid: gone, hostname: systemProbe.hostname });
    const { logger } = captureLogger();
    const lock = acquireDataDirLock(dir, logger);
    expect(readOwner()).toMatchObject({ pid: process.pid });
    lock.release();
  });

  it('refuses a lock held by a real live process', () => {
    writeOwner({ pid: process.ppid, hostname: systemProbe.hostname });
    const { logger } = captureLogger();
    expect(() => acquireDataDirLock(dir, logger)).toThrow(`pid ${process.ppid}`);
  });

  it('takes over an unreadable lock file', () => {
    writeFileSync(lockPath, 'not json');
    const { logger, messages } = captureLogger();
    const lock = acquireDataDirLock(dir, logger, { probe: fakeProbe() });
    expect(readOwner()).toMatchObject({ pid: 1000 });
    expect(messages.some((m) => m.includes('unreadable'))).toBe(true);
    lock.release();
  });

  it('stops an orphaned child of a dead owner only when it is verifiably ours', () => {
    writeOwner({ pid: 4242, childPid: 4343 });
    const { logger } = captureLogger();
    const stranger = fakeProbe({ isAlive: (pid) => pid === 4343 });
    acquireDataDirLock(dir, logger, { probe: stranger }).release();
    expect(stranger.killed).toEqual([]);

    writeOwner({ pid: 4242, childPid: 4343 });
    const ours = fakeProbe({
      isAlive: (pid) => pid === 4343 && !ours.killed.includes(pid),
      isEmbeddedChild: () => true,
    });
    acquireDataDirLock(dir, logger, { probe: ours }).release();
    expect(ours.killed).toEqual([4343]);
  });

  it('records the child pid and still releases only its own lock', () => {
    const { logger } = captureLogger();
    const lock = acquireDataDirLock(dir, logger, { probe: fakeProbe() });
    lock.setChildPid(5555);
    expect(readOwner()).toMatchObject({ pid: 1000, childPid: 5555 });

    // Someone else's lock now sits in the file (e.g. after a forced takeover): leave it alone.
    writeOwner({ pid: 2000, token: 'theirs' });
    lock.release();
    expect(readOwner()).toMatchObject({ pid: 2000 });
  });
});
