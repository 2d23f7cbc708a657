// A server whose stderr takes nothing (a pipe nobody reads, full; a terminal paused with Ctrl-S)
// still stops on SIGTERM: the last log lines get a bounded time, then are dropped. Before, pino's
// flush at exit retried the blocked write forever and the process never ended. The full pipe is
// a FIFO the test fills before the server starts and never reads.
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { realPostgres } from '../helpers/postgres.js';
import { PGMCP_BIN } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/stderr-blocked.test.ts (a stderr that takes nothing)');
const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0;

describe.skipIf(!pg || !hasMkfifo)('a server whose stderr is a full pipe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-stderr-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stops on SIGTERM all the same', { timeout: 120_000 }, async () => {
    const fifo = join(dir, 'stderr');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // Both ends held here; the write end non-blocking, filled until the pipe takes no more.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const chunk = Buffer.alloc(4096, 'x');
    for (;;) {
      try {
        writeSync(writer, chunk);
      } catch (error) {
        expect((error as { code?: string }).code).toBe('EAGAIN');
        break;
      }
    }
    const server = spawn(
      process.execPath,
      [
        PGMCP_BIN,
        'serve',
        '--http',
        '127.0.0.1:0',
        '--database',
        pg!.url,
        '--data-dir',
        join(dir, 'data'),
      ],
      {
        stdio: ['ignore', 'pipe', writer],
        env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp' },
      },
    );
    try {
      let stdout = '';
      server.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      const url = await vi.waitFor(
        () => {
          const match = /serving MCP at (\S+)/.exec(stdout);
          if (!match) throw new Error(`not serving yet:\n${stdout}`);
          return match[1]!;
        },
        { timeout: 60_000, interval: 100 },
      );
      expect((await fetch(new URL('/health', url))).status).toBe(200);
      const exited = new Promise<number | null>((resolve) => server.on('exit', resolve));
      server.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000)),
      ]);
      expect(code).toBe(0);
    } finally {
      if (server.exitCode === null) server.kill('SIGKILL');
      closeSync(writer);
      closeSync(reader);
    }
    expect(existsSync(fifo)).toBe(true);
  });
});
