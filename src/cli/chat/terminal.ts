// Where the chat writes: answers and listings on stdout, the spinner and errors on stderr. Every
// write clears the spinner first, so the two never share a line.
import { createSpinner, type Spinner } from './render/spinner.js';
import { createStyle, wantsColor, type Style } from './render/style.js';

export interface Terminal {
  readonly style: Style;
  readonly spinner: Spinner;
  width(): number;
  /** Text to stdout (a newline is added). */
  print(text: string): void;
  /** Text to stdout as it comes (no newline added). */
  write(text: string): void;
  /** One line to stderr, in red on a colour terminal. */
  error(text: string): void;
  /** A note to stderr (dim). */
  note(text: string): void;
}

export interface TerminalOptions {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  /** No spinner (scripts, --once). */
  quiet?: boolean;
}

const FALLBACK_WIDTH = 80;

export function createTerminal(options: TerminalOptions): Terminal {
  const { stdout, stderr, env } = options;
  const style = createStyle(wantsColor(stdout, env));
  const errStyle = createStyle(wantsColor(stderr, env));
  const spinner = createSpinner(stderr, !options.quiet && stderr.isTTY === true);
  const write = (text: string): void => {
    spinner.stop();
    stdout.write(text);
  };
  return {
    style,
    spinner,
    width: () => {
      const columns = stdout.isTTY ? stdout.columns : Number(env.COLUMNS);
      return Number.isFinite(columns) && columns > 10 ? columns : FALLBACK_WIDTH;
    },
    write,
    print: (text) => write(`${text}\n`),
    error(text) {
      spinner.stop();
      stderr.write(`${errStyle.red(`error: ${text}`)}\n`);
    },
    note(text) {
      spinner.stop();
      stderr.write(`${errStyle.dim(text)}\n`);
    },
  };
}
