// `pgmcp serve` run in a terminal that closes (the window of `npm start` shut): the kernel sends
// SIGHUP and the terminal is gone, so pgmcp stops and frees its port and its data directory, as
// on SIGTERM. It used to take the SIGHUP for a reload, fail to log to the dead terminal (EIO),
// and retry that write forever while exiting, deaf to SIGTERM. A SIGHUP while the terminal is
// still open reloads, and the embedded database's child, which every signal to the terminal's
// process group reaches too, leaves the decision to pgmcp. `script` (util-linux) gives the
// server a pseudo-terminal; killing it closes the terminal.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { realPostgres } from '../helpers/postgres.js';
import { PGMCP_BIN } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/terminal-hangup.test.ts (a terminal that closes)');
const hasScript = spawnSync('script', ['--version']).status === 0 && existsSync('/proc/self');

interface InTerminal {
  script: ChildProcess;
  /** The pgmcp process inside the terminal, and its embedded database's child. */
  pid: number;
  childPid: number;
  url: string;
  output(): string;
}

const alive = (pid: number): boolean => existsSync(`/proc/${pid}`);
const cmdline = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};
/** Every process below `pid` (children first), from /proc. */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return [...children, ...children.flatMap(descendants)];
}

describe.skipIf(!pg || !hasScript)('a terminal that closes under pgmcp serve', () => {
  const started: InTerminal['script'][] = [];
  const pids: number[] = [];
  const dirs: string[] = [];
  afterEach(() => {
    for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    for (const script of started.splice(0)) script.kill('SIGKILL');
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** pgmcp serve in a new terminal; `exec`: pgmcp is the terminal's first process, else a shell's child. */
  async function serveInTerminal(exec: boolean, dataDir?: string): Promise<InTerminal> {
    const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'pgmcp-hangup-'));
    if (!dataDir) dirs.push(dir);
    const serve = `${process.execPath} ${PGMCP_BIN} serve --http 127.0.0.1:0 --database ${pg!.url} --data-dir ${dir}`;
    const command = exec ? `exec ${serve}` : `${serve}; true`;
    const script = spawn('script', ['-qefc', command, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', TERM: 'xterm' },
    });
    started.push(script);
    let output = '';
    script.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    script.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const url = await vi.waitFor(
      () => {
        const match = /serving MCP at (\S+)/.exec(output);
        if (!match) throw new Error(`not serving yet:\n${output.slice(-2000)}`);
        return match[1]!;
      },
      { timeout: 60_000, interval: 100 },
    );
    const below = descendants(script.pid!);
    const pid = below.find((p) => cmdline(p).includes(PGMCP_BIN));
    expect(pid, below.map(cmdline).join('\n')).toBeDefined();
    const childPid = descendants(pid!).find((p) => cmdline(p).includes('pgmcp-embedded-pglite'));
    expect(childPid, 'the embedded database child').toBeDefined();
    pids.push(pid!, childPid!);
    return { script, pid: pid!, childPid: childPid!, url, output: () => output };
  }

  it('stops pgmcp and frees its port', async () => {
    const t = await serveInTerminal(true);
    const health = new URL('/health', t.url).toString();
    expect((await fetch(health)).status).toBe(200);
    t.script.kill('SIGKILL'); // the terminal window closes
    await vi.waitFor(() => expect(alive(t.pid)).toBe(false), { timeout: 15_000, interval: 100 });
    await vi.waitFor(() => expect(alive(t.childPid)).toBe(false), { timeout: 10_000 });
    await expect(fetch(health)).rejects.toThrow();
  });

  it('pgmcp under a shell: both stop, and the data directory opens again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgmcp-hangup-'));
    dirs.push(dir);
    const t = await serveInTerminal(false, dir);
    t.script.kill('SIGKILL');
    await vi.waitFor(() => expect(alive(t.pid)).toBe(false), { timeout: 15_000, interval: 100 });
    await vi.waitFor(() => expect(alive(t.childPid)).toBe(false), { timeout: 10_000 });
    // Nothing holds the directory: the next server on it starts and serves.
    const next = await serveInTerminal(true, dir);
    expect((await fetch(new URL('/health', next.url))).status).toBe(200);
  });

  it('a SIGHUP while the terminal is open reloads; the child stays; SIGTERM stops it', async () => {
    const t = await serveInTerminal(true);
    process.kill(t.childPid, 'SIGHUP'); // as a signal to the terminal's process group would
    process.kill(t.pid, 'SIGHUP');
    await vi.waitFor(() => expect(t.output()).toMatch(/SIGHUP: configuration reloaded/), {
      timeout: 10_000,
      interval: 100,
    });
    expect(alive(t.childPid)).toBe(true);
    expect((await fetch(new URL('/health', t.url))).status).toBe(200);
    process.kill(t.pid, 'SIGTERM');
    await vi.waitFor(() => expect(alive(t.pid)).toBe(false), { timeout: 15_000, interval: 100 });
  });
});
