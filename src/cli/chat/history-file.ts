// The lines typed at the chat prompt, kept across runs in the user's config directory
// ($XDG_CONFIG_HOME/pgmcp/chat_history, else ~/.config/pgmcp/chat_history). Readable by the
// user only: questions can name customers and tables.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export const HISTORY_SIZE = 1000;

function configDir(env: NodeJS.ProcessEnv): string {
  const base =
    env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== ''
      ? env.XDG_CONFIG_HOME
      : join(homedir(), '.config');
  return join(base, 'pgmcp');
}

export const historyFile = (env: NodeJS.ProcessEnv): string => join(configDir(env), 'chat_history');

/** The saved lines, newest first (the order readline keeps them in); none when unreadable. */
export function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .reverse()
      .slice(0, HISTORY_SIZE);
  } catch {
    return [];
  }
}

/** Saves `history` (newest first); a failure only costs the history, so it is not fatal. */
export function saveHistory(file: string, history: readonly string[]): string | null {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const lines = history.slice(0, HISTORY_SIZE).slice().reverse();
    writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
    chmodSync(file, 0o600);
    return null;
  } catch (error) {
    return `could not save the line history to ${file}: ${(error as Error).message}`;
  }
}
