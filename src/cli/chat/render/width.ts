// How many terminal cells a string takes, and cutting strings to a number of cells. Escape
// sequences take none; each grapheme cluster (an emoji with its modifiers, a letter with its
// combining marks) is measured whole by string-width, which follows Unicode's East Asian Width
// and emoji presentation data.
import stringWidth from 'string-width';

// CSI sequences (colours, cursor moves) and OSC sequences (hyperlinks).
const ANSI = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

export const stripAnsi = (text: string): string => text.replace(ANSI, '');

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

interface Piece {
  text: string;
  /** Cells it takes: 0 for an escape sequence. */
  cells: number;
}

/** `text` in order as escape sequences and grapheme clusters. */
function* pieces(text: string): Generator<Piece> {
  let last = 0;
  for (const match of text.matchAll(ANSI)) {
    yield* clusters(text.slice(last, match.index));
    yield { text: match[0], cells: 0 };
    last = match.index + match[0].length;
  }
  yield* clusters(text.slice(last));
}

function* clusters(run: string): Generator<Piece> {
  for (const { segment } of graphemes.segment(run)) {
    yield { text: segment, cells: stringWidth(segment) };
  }
}

/** Cells `text` takes on one line (escape sequences ignored). */
export const displayWidth = (text: string): number => stringWidth(text);

/**
 * `text` cut to at most `width` cells, ending in `…` when something was cut. Escape sequences
 * are kept (so a colour still ends); callers reset styles after a cut cell.
 */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  return `${prefix(text, width - 1)}…`; // one cell for the ellipsis
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
        const head = prefix(line, width) || firstPiece(line);
        lines.push(head);
        line = line.slice(head.length);
      }
    }
    lines.push(line);
  }
  return lines;
}

/** The longest prefix of `text` (escape sequences included) that takes at most `width` cells. */
function prefix(text: string, width: number): string {
  let used = 0;
  let out = '';
  for (const piece of pieces(text)) {
    if (used + piece.cells > width) break;
    out += piece.text;
    used += piece.cells;
  }
  return out;
}

/** The first grapheme cluster of `text` (with any escapes before it): a line is never empty. */
function firstPiece(text: string): string {
  let out = '';
  for (const piece of pieces(text)) {
    out += piece.text;
    if (piece.cells > 0 || !piece.text.startsWith('\u001b')) break;
  }
  return out;
}
