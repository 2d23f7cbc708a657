// One run of the embedded database child: PGlite + pgvector behind pglite-socket, in its own
// Node process so a long query never blocks pgmcp's event loop and can be stopped by a kill.

import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import {
  CHILD_CONFIG_ENV,
  CHILD_SCRIPT,
  type ChildConfig,
  type ChildMessage,
  type ParentMessage,
} from './child-script.js';
import { createOutputTail } from './output-tail.js';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process could not be spawned at all. */
  error?: Error;
}

export interface PgliteChild {
  readonly pid: number | undefined;
  /** Resolves with PGlite's own start time once the socket listens; rejects if the child exits first. */
  readonly ready: Promise<number>;
  /** Resolves once the process has exited and its output is drained. Never rejects. */
  readonly exited: Promise<ChildExit>;
  /** True once we killed or asked it to stop, so its exit is expected. */
  readonly stopRequested: boolean;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<ChildExit>;
  /** Ask for a clean shutdown (closes PGlite), SIGKILL after `graceMs`. */
  shutdown(graceMs: number): Promise<ChildExit>;
  /** The last lines the child printed, for error messages. */
  lastOutput(): string[];
}

export interface SpawnChildOptions extends ChildConfig {
  logger: Logger;
}

const OUTPUT_LINES_KEPT = 20;
// Only what Node and PGlite need. NODE_OPTIONS is left out on purpose: a parent's loaders or
// heap flags must not leak into the database process, nor should unrelated secrets.
const INHERITED_ENV = ['PATH', 'HOME', 'TMPDIR', 'TMP', 'TEMP', 'LANG', 'LC_ALL', 'SYSTEMROOT'];

export function spawnPgliteChild(options: SpawnChildOptions): PgliteChild {
  const { logger, ...config } = options;
  const env: NodeJS.ProcessEnv = {
    [CHILD_CONFIG_ENV]: JSON.stringify(config satisfies ChildConfig),
  };
  for (const name of INHERITED_ENV) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }

  const child = spawn(process.execPath, ['--input-type=module', '--eval', CHILD_SCRIPT], {
    cwd: dirname(fileURLToPath(import.meta.url)),
    env,
    // Never inherit stdout: in stdio mode it carries MCP protocol messages.
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    windowsHide: true,
  });
  const pid = child.pid;
  const log = logger.child({ childPid: pid });
  const tail = createOutputTail(OUTPUT_LINES_KEPT, (stream, line) => log.debug({ stream }, line));
  child.stdout?.on('data', (chunk: Buffer) => tail.write('stdout', chunk));
  child.stderr?.on('data', (chunk: Buffer) => tail.write('stderr', chunk));

  let stopRequested = false;
  let exitInfo: ChildExit | undefined;
  const exited = new Promise<ChildExit>((resolve) => {
    child.on('error', (error) => {
      // 'error' without 'close' happens when spawning itself failed.
      if (child.pid === undefined) {
        exitInfo = { code: null, signal: null, error };
        resolve(exitInfo);
      } else {
        log.warn({ err: error }, 'embedded database process error');
      }
    });
    child.once('close', (code, signal) => {
      tail.flush();
      exitInfo = { code, signal };
      resolve(exitInfo);
    });
  });

  const ready = new Promise<number>((resolve, reject) => {
    child.on('message', (message: ChildMessage) => {
      if (message?.type === 'ready') resolve(message.pgliteMs);
    });
    void exited.then((exit) => reject(new ChildExitedError(exit)));
  });
  ready.catch(() => undefined); // the caller may stop listening once it gave up waiting

  // pgmcp's own lifetime is decided by its servers and stdin, not by this child.
  child.unref();
  child.channel?.unref();
  for (const stream of [child.stdout, child.stderr])
    (stream as { unref?: () => void } | null)?.unref?.();

  // The handles above are unref'd, so without this a caller awaiting the exit (restart, stop)
  // in an otherwise idle process would see Node quit under it.
  const awaitExit = async (): Promise<ChildExit> => {
    const keepAlive = setInterval(() => undefined, 60_000);
    try {
      return await exited;
    } finally {
      clearInterval(keepAlive);
    }
  };

  const kill = async (): Promise<ChildExit> => {
    stopRequested = true;
    if (exitInfo === undefined) child.kill('SIGKILL');
    return awaitExit();
  };

  return {
    pid,
    ready,
    exited,
    get stopRequested() {
      return stopRequested;
    },
    kill,
    async shutdown(graceMs) {
      stopRequested = true;
      if (exitInfo !== undefined) return exitInfo;
      try {
        child.send({ type: 'shutdown' } satisfies ParentMessage);
      } catch {
        child.kill('SIGTERM');
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      try {
        return await awaitExit();
      } finally {
        clearTimeout(timer);
      }
    },
    lastOutput: () => tail.lines(),
  };
}

export class ChildExitedError extends Error {
  constructor(readonly exit: ChildExit) {
    super(describeExit(exit));
    this.name = 'ChildExitedError';
  }
}

export function describeExit(exit: ChildExit): string {
  if (exit.error) return `could not be spawned (${exit.error.message})`;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? 'unknown'}`;
}
