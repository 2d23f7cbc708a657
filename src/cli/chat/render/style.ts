// Terminal styles that become no-ops when colour is off, so renderers never ask.

export interface Style {
  readonly color: boolean;
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  strike(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  blue(text: string): string;
  magenta(text: string): string;
  cyan(text: string): string;
}

const sgr =
  (open: number, close: number) =>
  (text: string): string =>
    text === '' ? text : `\u001b[${open}m${text}\u001b[${close}m`;

const plain = (text: string): string => text;

export function createStyle(color: boolean): Style {
  if (!color) {
    return {
      color,
      bold: plain,
      dim: plain,
      italic: plain,
      underline: plain,
      strike: plain,
      red: plain,
      green: plain,
      yellow: plain,
      blue: plain,
      magenta: plain,
      cyan: plain,
    };
  }
  return {
    color,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    italic: sgr(3, 23),
    underline: sgr(4, 24),
    strike: sgr(9, 29),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    blue: sgr(34, 39),
    magenta: sgr(35, 39),
    cyan: sgr(36, 39),
  };
}

/**
 * Whether to colour what goes to `stream`: only a terminal that says it has colours, and never
 * when NO_COLOR is set to anything (https://no-color.org) or TERM is dumb.
 */
export function wantsColor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.TERM === 'dumb') return false;
  if (!stream.isTTY) return false;
  return typeof stream.hasColors === 'function' ? stream.hasColors(env) : true;
}
