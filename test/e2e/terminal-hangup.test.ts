// `pgmcp serve` run in a terminal that closes (the window of `npm start` shut): the kernel sends
// SIGHUP and the terminal is gone, so pgmcp stops and frees its port, as on SIGTERM. It used to
// take the SIGHUP for a reload, fail to log to the dead terminal (EIO), and retry that write
// forever while exiting, deaf to SIGTERM. A SIGHUP while the terminal is still open reloads.
// `script` (util-linux) gives the server a pseudo-terminal; killing it closes the terminal.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { realPostgres } from '../helpers/postgres.js';
import { PGMCP_BIN } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/terminal-hangup.test.ts (a terminal that closes)');

interface InTerminal {
  script: ChildProcess;
  /** The pgmcp process inside the terminal. */
  pid: number;
  url: string;
  output(): string;
}

const alive = (pid: number): boolean => existsSync(`/proc/${pid}`);

async function serveInTerminal(url: string): Promise<InTerminal> {
  const command = `exec ${process.execPath} ${PGMCP_BIN} serve --http 127.0.0.1:0 --database ${url}`;
  const script = spawn('script', ['-qefc', command, '/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', TERM: 'xterm' },
  });
  let output = '';
  script.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  script.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const served = await vi.waitFor(
    () => {
      const match = /serving MCP at (\S+)/.exec(output);
      if (!match) throw new Error(`not serving yet:\n${output.slice(-2000)}`);
      return match[1]!;
    },
    { timeout: 60_000, interval: 100 },
  );
  const children = readFileSync(`/proc/${script.pid}/task/${script.pid}/children`, 'utf8');
  const pid = Number(children.trim().split(/\s+/)[0]);
  expect(pid).toBeGreaterThan(0);
  return { script, pid, url: served, output: () => output };
}

describe.skipIf(!pg)('a terminal that closes under pgmcp serve', () => {
  const started: InTerminal[] = [];
  afterEach(() => {
    for (const t of started.splice(0)) {
      if (alive(t.pid)) process.kill(t.pid, 'SIGKILL');
      t.script.kill('SIGKILL');
    }
  });

  it('stops pgmcp and frees its port', async () => {
    const t = await serveInTerminal(pg!.url);
    started.push(t);
    const health = new URL('/health', t.url).toString();
    expect((await fetch(health)).status).toBe(200);
    t.script.kill('SIGKILL'); // the terminal window closes
    await vi.waitFor(() => expect(alive(t.pid)).toBe(false), { timeout: 15_000, interval: 100 });
    await expect(fetch(health)).rejects.toThrow();
  });

  it('a SIGHUP while the terminal is open reloads, and SIGTERM still stops it', async () => {
    const t = await serveInTerminal(pg!.url);
    started.push(t);
    process.kill(t.pid, 'SIGHUP');
    await vi.waitFor(() => expect(t.output()).toMatch(/SIGHUP: configuration reloaded/), {
      timeout: 10_000,
      interval: 100,
    });
    expect((await fetch(new URL('/health', t.url))).status).toBe(200);
    process.kill(t.pid, 'SIGTERM');
    await vi.waitFor(() => expect(alive(t.pid)).toBe(false), { timeout: 15_000, interval: 100 });
  });
});
