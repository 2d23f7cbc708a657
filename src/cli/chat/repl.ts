// The interactive chat: a readline prompt with line editing, history kept across runs and tab
// completion; Ctrl-C stops the running answer (or clears the line), Ctrl-D leaves.
import { createInterface } from 'node:readline';
import { COMMAND_NAMES, LIST_TOPICS, SET_TOPICS, runCommand } from './commands.js';
import type { ChatContext } from './context.js';
import { HISTORY_SIZE, loadHistory, saveHistory } from './history-file.js';
import { runTurn } from './turn.js';

export interface ReplOptions {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  /** Databases for /set database completion. */
  databases(): Promise<string[]>;
}

const PROMPT = '› ';

/** Runs until Ctrl-D, /exit or /logout; resolves with the exit code. */
export function runRepl(context: ChatContext, options: ReplOptions): Promise<number> {
  const { term, session } = context;
  const terminal = options.stdin.isTTY === true;
  const rl = createInterface({
    input: options.stdin,
    output: options.stdout,
    terminal,
    history: context.historyFile ? loadHistory(context.historyFile) : [],
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    tabSize: 2,
    completer: (line: string, callback: (error: null, result: [string[], string]) => void) => {
      void complete(line, context, options).then(
        (result) => callback(null, result),
        () => callback(null, [[], line]),
      );
    },
  });
  rl.setPrompt(term.style.bold(PROMPT));
  if (context.historyFile) {
    const file = context.historyFile;
    rl.on('history', (history: string[]) => {
      const problem = saveHistory(file, history);
      if (problem) term.note(problem);
    });
  }

  let answering: ((approved: boolean) => void) | null = null;
  const queue: string[] = [];
  let working = false;
  let closed = false;
  let quitting = false;

  return new Promise<number>((resolve) => {
    const finish = async (): Promise<void> => {
      if (session.busy) await session.stop();
      rl.close();
      resolve(0);
    };
    context.quit = () => {
      quitting = true;
    };

    const confirm = (approval: { tool: string; input: unknown }): Promise<boolean> => {
      if (closed) return Promise.resolve(false);
      const statement = (approval.input as { query?: unknown })?.query;
      const what = typeof statement === 'string' ? 'this statement' : `${approval.tool}`;
      return new Promise<boolean>((done) => {
        answering = done;
        rl.question(term.style.yellow(`Run ${what}? [y/N] `), (answer) => {
          answering = null;
          done(/^y(es)?$/i.test(answer.trim()));
        });
      });
    };

    const pump = async (): Promise<void> => {
      if (working) return;
      working = true;
      while (queue.length > 0 && !quitting) {
        const line = queue.shift()!.trim();
        if (line === '') continue;
        if (line.startsWith('/')) await runCommand(line, context);
        else await runTurn(line, context, confirm);
      }
      working = false;
      if (quitting || (closed && queue.length === 0)) return void finish();
      rl.prompt();
    };

    rl.on('line', (line) => {
      queue.push(line);
      void pump();
    });
    rl.on('SIGINT', () => {
      if (answering) {
        // Ctrl-C at "Run this statement?" is a no.
        const done = answering;
        answering = null;
        options.stdout.write('\n');
        rl.write(null, { ctrl: true, name: 'u' });
        done(false);
        return;
      }
      if (session.busy) {
        void session.stop();
        return;
      }
      // At the prompt: drop what was typed, like a shell does.
      rl.write(null, { ctrl: true, name: 'u' });
      options.stdout.write('^C\n');
      term.note('(Ctrl-D leaves)');
      rl.prompt();
    });
    rl.on('close', () => {
      closed = true;
      if (answering) {
        const done = answering;
        answering = null;
        done(false);
      }
      if (!working) void finish();
      else if (session.busy) void session.stop();
    });
    rl.prompt();
  });
}

async function complete(
  line: string,
  context: ChatContext,
  options: ReplOptions,
): Promise<[string[], string]> {
  const words = line.split(/\s+/);
  const last = words[words.length - 1] ?? '';
  const pick = (candidates: readonly string[]): [string[], string] => {
    const hits = candidates.filter((c) => c.toLowerCase().startsWith(last.toLowerCase()));
    return [hits, last];
  };
  if (words.length === 1 && line.startsWith('/')) return pick(COMMAND_NAMES);
  const command = words[0];
  if (words.length === 2 && command === '/list') return pick(LIST_TOPICS);
  if (words.length === 2 && command === '/set') return pick(SET_TOPICS);
  if (words.length === 2 && command === '/show') return pick(['settings']);
  if (words.length === 2 && command === '/history') return pick(['load', 'rename', 'delete']);
  if (words.length === 3 && command === '/set' && words[1] === 'database') {
    return pick(await options.databases());
  }
  if (command?.startsWith('/')) return [[], last];
  return pick(context.tableNames);
}
