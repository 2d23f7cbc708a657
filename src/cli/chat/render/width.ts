// How many terminal cells a string takes, and cutting strings to a number of cells. Escape
// sequences take none, combining marks none, East Asian wide characters and emoji two.

// CSI sequences (colours, cursor moves) and OSC sequences (hyperlinks).
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

export const stripAnsi = (text: string): string => text.replace(ANSI, '');

function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0x303e) ||
    (code >= 0x3041 && code <= 0x33ff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0xa000 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1f64f) ||
    (code >= 0x1f900 && code <= 0x1f9ff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}

const ZERO_WIDTH = /[\u0300-\u036f\u200b-\u200f\u20d0-\u20ff\ufe00-\ufe0f]/;

function charWidth(char: string): number {
  const code = char.codePointAt(0)!;
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return 0;
  if (ZERO_WIDTH.test(char)) return 0;
  return isWide(code) ? 2 : 1;
}

/** Cells `text` takes on one line (escape sequences ignored). */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of stripAnsi(text)) width += charWidth(char);
  return width;
}

/**
 * `text` cut to at most `width` cells, ending in `…` when something was cut. Escape sequences
 * are kept (so a colour still ends); callers reset styles after a cut cell.
 */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  const room = width - 1; // for the ellipsis
  let used = 0;
  let out = '';
  let index = 0;
  while (index < text.length) {
    const escape = matchAt(text, index);
    if (escape) {
      out += escape;
      index += escape.length;
      continue;
    }
    const char = String.fromCodePoint(text.codePointAt(index)!);
    const w = charWidth(char);
    if (used + w > room) break;
    out += char;
    used += w;
    index += char.length;
  }
  return `${out}…`;
}

function matchAt(text: string, index: number): string | null {
  if (text[index] !== '\u001b') return null;
  const match = new RegExp(ANSI.source, 'y');
  match.lastIndex = index;
  return match.exec(text)?.[0] ?? null;
}

/** `text` followed by spaces up to `width` cells. */
export const padEnd = (text: string, width: number): string =>
  text + ' '.repeat(Math.max(0, width - displayWidth(text)));

/** `text` preceded by spaces up to `width` cells. */
export const padStart = (text: string, width: number): string =>
  ' '.repeat(Math.max(0, width - displayWidth(text))) + text;

/** Words of `text` laid into lines of at most `width` cells (long words are cut hard). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/ +/)) {
      if (word === '') continue;
      const candidate = line === '' ? word : `${line} ${word}`;
      if (displayWidth(candidate) <= width) {
        line = candidate;
        continue;
      }
      if (line !== '') lines.push(line);
      line = word;
      while (displayWidth(line) > width && width > 1) {
        const head = sliceCells(line, width);
        lines.push(head);
        line = line.slice(head.length);
      }
    }
    lines.push(line);
  }
  return lines;
}

/** The longest prefix of `text` (escape sequences included) that takes at most `width` cells. */
function sliceCells(text: string, width: number): string {
  let used = 0;
  let index = 0;
  while (index < text.length) {
    const escape = matchAt(text, index);
    if (escape) {
      index += escape.length;
      continue;
    }
    const char = String.fromCodePoint(text.codePointAt(index)!);
    const w = charWidth(char);
    if (used + w > width) break;
    used += w;
    index += char.length;
  }
  return text.slice(0, Math.max(index, 1));
}
