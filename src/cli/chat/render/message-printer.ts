// Prints an assistant message as it streams in: Markdown a block at a time (a block is printed
// once the next one has begun, so nothing printed ever changes), each tool step's input (the SQL)
// when the call is complete, and its result (rows as a fitted table) when it arrives.
import { getToolName, isToolUIPart, type UIMessage } from 'ai';
import { renderMarkdown, splitSettled } from './markdown.js';
import type { Style } from './style.js';
import { renderTable, type TableInput } from './table.js';
import { truncate } from './width.js';

/** What tools answer through the chat (the MCP result: text joined, structured content). */
export interface ToolOutput {
  isError?: boolean;
  text?: string;
  structuredContent?: Record<string, unknown>;
}

export interface PrinterOptions {
  write(text: string): void;
  width(): number;
  style: Style;
  /** Rows drawn per result table. */
  maxRows?: number;
}

interface PartProgress {
  textPrinted: number;
  inputShown: boolean;
  approvalShown: boolean;
  done: boolean;
}

export interface MessagePrinter {
  /** Print what is new in `message` (the message at `index` of the conversation). */
  update(message: UIMessage, index: number, final?: boolean): void;
  /** Forget what was printed (a new or loaded conversation). */
  reset(): void;
  /** The last result table printed (for /expand). */
  lastTable(): TableInput | null;
  /** What the model is waiting on now, for the spinner. */
  activity(message: UIMessage | undefined): string;
}

const isRows = (value: unknown): value is TableInput & { rowCount?: number } =>
  typeof value === 'object' &&
  value !== null &&
  Array.isArray((value as TableInput).columns) &&
  Array.isArray((value as TableInput).rows);

export function createMessagePrinter(options: PrinterOptions): MessagePrinter {
  const { style, write } = options;
  let progressIndex = -1;
  let progress: PartProgress[] = [];
  let table: TableInput | null = null;
  let blockCount = 0;

  // Blocks of one message are separated by a blank line.
  const block = (text: string): void => {
    if (text === '') return;
    write(`${blockCount > 0 ? '\n' : ''}${text}\n`);
    blockCount++;
  };

  const markdown = (text: string): void => {
    if (text.trim() !== '') block(renderMarkdown(text, { width: options.width(), style }));
  };

  const toolInput = (name: string, input: unknown): void => {
    const width = options.width();
    const title = `${style.magenta('▸')} ${style.bold(name)}`;
    const query = (input as { query?: unknown } | undefined)?.query;
    if (typeof query === 'string') {
      const sql = query
        .trim()
        .split('\n')
        .map((line) => `  ${style.cyan(line)}`);
      block([title, ...sql].join('\n'));
      return;
    }
    const args = input === undefined ? '' : JSON.stringify(input);
    block(truncate(`${title} ${style.dim(args)}`, width));
  };

  const toolOutput = (output: ToolOutput | undefined): void => {
    const width = options.width();
    const text = output?.text ?? '';
    if (output?.isError) {
      block(style.red(`✗ ${firstLine(text) || 'the tool failed'}`));
      return;
    }
    const structured = output?.structuredContent;
    if (isRows(structured) && structured.columns.length > 0) {
      table = structured;
      const lines = renderTable(structured, { width, style, maxRows: options.maxRows ?? 50 });
      const count = structured.rowCount ?? structured.rows.length;
      const more = (structured as { truncated?: boolean }).truncated ? ', more available' : '';
      lines.push(style.dim(`(${count} ${count === 1 ? 'row' : 'rows'}${more})`));
      block(lines.join('\n'));
      return;
    }
    const command = (structured as { command?: unknown } | undefined)?.command;
    if (typeof command === 'string') {
      // The tool's text carries the command tag with its count ("INSERT 1"); rowCount counts
      // returned rows, none for a plain write.
      const tag = text.split('\n').find((line) => line.startsWith(command));
      block(style.dim(`(${tag ?? command})`));
      return;
    }
    const lines = text.split('\n').filter((line, i, all) => line !== '' || i < all.length - 1);
    const shown = lines.slice(0, 20).map((line) => style.dim(truncate(line, width)));
    if (lines.length > 20) shown.push(style.dim(`(${lines.length - 20} more lines)`));
    block(shown.join('\n'));
  };

  return {
    update(message, index, final = false) {
      if (message.role !== 'assistant') return;
      if (index !== progressIndex) {
        progressIndex = index;
        progress = [];
        blockCount = 0;
      }
      for (let i = 0; i < message.parts.length; i++) {
        const part = message.parts[i]!;
        const state = (progress[i] ??= {
          textPrinted: 0,
          inputShown: false,
          approvalShown: false,
          done: false,
        });
        if (state.done) continue;
        if (part.type === 'text') {
          const rest = part.text.slice(state.textPrinted);
          if (final || part.state === 'done') {
            markdown(rest);
            state.textPrinted = part.text.length;
            state.done = true;
            continue;
          }
          const { settled } = splitSettled(rest);
          markdown(settled);
          state.textPrinted += settled.length;
          return; // later parts wait for this one
        }
        if (isToolUIPart(part)) {
          const name = getToolName(part);
          if (part.state === 'input-streaming') {
            if (final) state.done = true;
            if (!final) return;
            continue;
          }
          if (!state.inputShown) {
            toolInput(name, part.input);
            state.inputShown = true;
          }
          if (part.state === 'approval-requested' && !state.approvalShown) {
            write(`${style.yellow('This writes to the database: it runs only if you say yes.')}\n`);
            state.approvalShown = true;
          }
          if (part.state === 'output-available') {
            toolOutput(part.output as ToolOutput);
            state.done = true;
          } else if (part.state === 'output-error') {
            block(style.red(`✗ ${firstLine(part.errorText)}`));
            state.done = true;
          } else if (part.state === 'output-denied') {
            block(style.yellow('✗ not run: the write was refused'));
            state.done = true;
          } else if (!final) {
            return;
          }
          continue;
        }
        state.done = true; // step boundaries, reasoning, sources: not shown
      }
    },
    reset() {
      progressIndex = -1;
      progress = [];
      blockCount = 0;
      table = null;
    },
    lastTable: () => table,
    activity(message) {
      if (!message || message.role !== 'assistant') return 'thinking…';
      const last = message.parts[message.parts.length - 1];
      if (last && isToolUIPart(last)) {
        if (last.state === 'input-available' || last.state === 'approval-responded') {
          return `running ${getToolName(last)}…`;
        }
        if (last.state === 'input-streaming') return 'writing a query…';
      }
      if (last?.type === 'text' && last.state === 'streaming') return 'answering…';
      return 'thinking…';
    },
  };
}

const firstLine = (text: string): string => text.trim().split('\n')[0] ?? '';
