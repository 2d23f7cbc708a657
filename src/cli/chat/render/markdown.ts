// The model's Markdown for a terminal: marked's lexer gives the blocks and inline spans, and each
// becomes styled text (bold headings, cyan code, bullets, quoted bars, tables fitted like result
// rows). With colour off the structure stays (#, •, │) and only the escape codes go.
import { Lexer, type Token, type Tokens } from 'marked';
import type { Style } from './style.js';
import { renderTable } from './table.js';
import { wrap } from './width.js';

export interface MarkdownOptions {
  width: number;
  style: Style;
}

/** `markdown` as terminal lines (no trailing newline). */
export function renderMarkdown(markdown: string, options: MarkdownOptions): string {
  return renderBlocks(Lexer.lex(markdown), options).join('\n');
}

/**
 * For streaming: the part of `markdown` made of blocks that can no longer change (every block
 * but the last), and the rest. Text arriving later only ever extends the last block.
 */
export function splitSettled(markdown: string): { settled: string; pending: string } {
  const tokens = Lexer.lex(markdown);
  let last = tokens.length - 1;
  while (last >= 0 && tokens[last]!.type === 'space') last--;
  if (last <= 0) return { settled: '', pending: markdown };
  const settled = tokens
    .slice(0, last)
    .map((t) => t.raw)
    .join('');
  // The lexer's raws add up to the input; guard anyway so nothing is printed twice.
  if (!markdown.startsWith(settled)) return { settled: '', pending: markdown };
  return { settled, pending: markdown.slice(settled.length) };
}

function renderBlocks(tokens: readonly Token[], options: MarkdownOptions): string[] {
  const blocks: string[][] = [];
  for (const token of tokens) {
    const lines = renderBlock(token, options);
    if (lines.length > 0) blocks.push(lines);
  }
  return blocks.flatMap((lines, i) => (i === 0 ? lines : ['', ...lines]));
}

function renderBlock(token: Token, options: MarkdownOptions): string[] {
  const { style, width } = options;
  const t = token as Tokens.Generic;
  switch (token.type) {
    case 'space':
    case 'def':
      return [];
    case 'heading': {
      const text = inline((t as Tokens.Heading).tokens, style);
      const depth = (t as Tokens.Heading).depth;
      if (!style.color) return [`${'#'.repeat(depth)} ${text}`];
      return [depth <= 2 ? style.bold(style.underline(text)) : style.bold(text)];
    }
    case 'paragraph':
      return wrap(inline((t as Tokens.Paragraph).tokens, style), width);
    case 'text': {
      const text = t as Tokens.Text;
      return wrap(text.tokens ? inline(text.tokens, style) : text.text, width);
    }
    case 'code': {
      const code = t as Tokens.Code;
      const lines = code.text.split('\n').map((line) => `  ${style.cyan(line)}`);
      return code.lang ? [style.dim(`  ${code.lang}`), ...lines] : lines;
    }
    case 'blockquote': {
      const inner = renderBlocks((t as Tokens.Blockquote).tokens, { ...options, width: width - 2 });
      return inner.map((line) => `${style.dim('│')} ${style.italic(line)}`);
    }
    case 'list':
      return renderList(t as Tokens.List, options);
    case 'table':
      return renderMarkdownTable(t as Tokens.Table, options);
    case 'hr':
      return [style.dim('─'.repeat(Math.max(3, Math.min(width, 40))))];
    case 'html':
      return (t as Tokens.HTML).text.replace(/\n+$/, '').split('\n');
    default:
      return typeof t.raw === 'string' ? t.raw.replace(/\n+$/, '').split('\n') : [];
  }
}

function renderList(list: Tokens.List, options: MarkdownOptions): string[] {
  const { style } = options;
  const start = typeof list.start === 'number' ? list.start : 1;
  const lines: string[] = [];
  list.items.forEach((item, i) => {
    let marker = list.ordered ? `${start + i}.` : '•';
    if (item.task) marker = item.checked ? '[x]' : '[ ]';
    const indent = ' '.repeat(marker.length + 1);
    const body = renderBlocks(
      item.tokens.filter((tok) => tok.type !== 'checkbox'),
      { ...options, width: options.width - indent.length },
    ).filter((line, k, all) => !(line === '' && !item.loose && k > 0 && k < all.length));
    body.forEach((line, k) => {
      lines.push(k === 0 ? `${style.dim(marker)} ${line}` : line === '' ? '' : indent + line);
    });
    if (item.loose && i < list.items.length - 1) lines.push('');
  });
  return lines;
}

function renderMarkdownTable(table: Tokens.Table, options: MarkdownOptions): string[] {
  const { style } = options;
  const lines = renderTable(
    {
      columns: table.header.map((cell) => ({ name: inline(cell.tokens, style) })),
      rows: table.rows.map((row) => row.map((cell) => inline(cell.tokens, style))),
    },
    { width: options.width, style, numbered: false },
  );
  return lines;
}

/** Inline spans as styled text on one logical line (soft breaks become spaces). */
function inline(tokens: readonly Token[] | undefined, style: Style): string {
  if (!tokens) return '';
  return tokens
    .map((token) => {
      const t = token as Tokens.Generic;
      switch (token.type) {
        case 'strong':
          return style.bold(inline(t.tokens, style));
        case 'em':
          return style.italic(inline(t.tokens, style));
        case 'del':
          return style.strike(inline(t.tokens, style));
        case 'codespan':
          return style.color ? style.cyan((t as Tokens.Codespan).text) : `\`${t.text}\``;
        case 'link': {
          const link = t as Tokens.Link;
          const text = inline(link.tokens, style);
          return text === link.href
            ? style.underline(text)
            : `${style.underline(text)} (${link.href})`;
        }
        case 'image':
          return `[${(t as Tokens.Image).text}] (${(t as Tokens.Image).href})`;
        case 'br':
          return '\n';
        case 'text':
          return t.tokens ? inline(t.tokens, style) : (t as Tokens.Text).text.replace(/\n/g, ' ');
        case 'escape':
        case 'html':
          return (t as Tokens.Escape).text;
        default:
          return typeof t.raw === 'string' ? t.raw : '';
      }
    })
    .join('');
}
