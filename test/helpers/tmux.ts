// A pseudo-terminal for tests of interactive programs: a tmux server of the test's own (private
// socket), one window of a given size running the command, keys sent as a person types them and
// the screen read back with capture-pane. Waits poll the screen until it shows what is expected.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { vi } from 'vitest';

const run = promisify(execFile);
export const TMUX = '/usr/bin/tmux';

export interface TmuxOptions {
  /** The program and its arguments. */
  command: string[];
  /** The whole environment of the program (nothing is inherited). */
  env: Record<string, string>;
  cwd: string;
  width?: number;
  height?: number;
}

export interface Terminal {
  /** The visible screen plus scrollback, one string per line, trailing blanks trimmed. */
  screen(options?: { escapes?: boolean }): Promise<string>;
  /** Waits until the screen matches (a string it contains, or a pattern); returns the screen. */
  waitFor(expected: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Types `text` literally (no Enter). */
  type(text: string): Promise<void>;
  /** Sends tmux key names: 'Enter', 'C-c', 'C-d', 'Tab', 'Up' … */
  keys(...names: string[]): Promise<void>;
  /** Types a line and presses Enter. */
  line(text: string): Promise<void>;
  /** Changes the window's size (the program gets SIGWINCH). */
  resize(width: number, height?: number): Promise<void>;
  /** The program's exit status once it has exited (the pane is dead), else null. */
  exitStatus(): Promise<number | null>;
  close(): Promise<void>;
}

let sockets = 0;

const quote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

export async function startTerminal(options: TmuxOptions): Promise<Terminal> {
  const socket = `pgmcp-test-${process.pid}-${++sockets}-${Math.random().toString(36).slice(2, 8)}`;
  const tmux = (...args: string[]): Promise<{ stdout: string }> =>
    run(TMUX, ['-L', socket, '-f', '/dev/null', ...args], {
      env: { PATH: process.env.PATH ?? '' },
    });
  const env = Object.entries(options.env).map(([k, v]) => `${k}=${quote(v)}`);
  const shell = `cd ${quote(options.cwd)} && exec env -i ${env.join(' ')} ${options.command.map(quote).join(' ')}`;
  await tmux(
    'new-session',
    '-d',
    '-s',
    'test',
    '-x',
    String(options.width ?? 100),
    '-y',
    String(options.height ?? 40),
    shell,
  );
  // Keep the pane after the program exits, so its last screen and exit status can be read.
  await tmux('set-option', '-t', 'test', 'remain-on-exit', 'on');
  await tmux('set-option', '-t', 'test', 'history-limit', '5000');

  const screen = async ({ escapes = false } = {}): Promise<string> => {
    const { stdout } = await tmux(
      'capture-pane',
      '-p',
      ...(escapes ? ['-e'] : []),
      '-S',
      '-',
      '-t',
      'test',
    );
    return stdout
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .trimEnd();
  };
  return {
    screen,
    async waitFor(expected, timeoutMs = 20_000) {
      let last = '';
      try {
        return await vi.waitFor(
          async () => {
            last = await screen();
            const ok = typeof expected === 'string' ? last.includes(expected) : expected.test(last);
            if (!ok) throw new Error('not yet');
            return last;
          },
          { timeout: timeoutMs, interval: 50 },
        );
      } catch {
        throw new Error(`the screen never showed ${String(expected)}; it shows:\n${last}`);
      }
    },
    async type(text) {
      await tmux('send-keys', '-t', 'test', '-l', text);
    },
    async keys(...names) {
      await tmux('send-keys', '-t', 'test', ...names);
    },
    async line(text) {
      await tmux('send-keys', '-t', 'test', '-l', text);
      await tmux('send-keys', '-t', 'test', 'Enter');
    },
    async resize(width, height) {
      await tmux(
        'resize-window',
        '-t',
        'test',
        '-x',
        String(width),
        ...(height ? ['-y', String(height)] : []),
      );
    },
    async exitStatus() {
      const { stdout } = await tmux(
        'display-message',
        '-p',
        '-t',
        'test',
        '#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}',
      );
      const [dead, status, signal] = stdout.trim().split(':');
      if (dead !== '1') return null;
      if (status === '' && signal) throw new Error(`the program was killed by signal ${signal}`);
      return Number(status);
    },
    async close() {
      await tmux('kill-server').catch(() => undefined);
    },
  };
}
