// One tool call of the assistant: its name and state, the SQL (collapsible), and what came
// back: rows as a table and, when they read as a series or categories, a chart.
import type { UIMessage } from 'ai';
import { chartShapeOf } from '../lib/chart-shape';
import { asQueryResult } from '../lib/table-data';
import { ResultChart } from './result-chart';
import { ResultTable } from './result-table';

export interface ToolPartLike {
  type: string;
  toolName?: string;
  toolCallId: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  approval?: { id: string; approved?: boolean; reason?: string };
}

export function isToolPart(
  part: UIMessage['parts'][number],
): part is UIMessage['parts'][number] & ToolPartLike {
  return part.type.startsWith('tool-') || part.type === 'dynamic-tool';
}

export function toolNameOf(part: ToolPartLike): string {
  return part.type === 'dynamic-tool' ? (part.toolName ?? 'tool') : part.type.slice('tool-'.length);
}

/** The SQL a call carries, if any (query_database's `query`, EXPLAIN's `sql`, …). */
export function statementOf(input: unknown): string | null {
  if (!input || typeof input !== 'object') return null;
  const record = input as Record<string, unknown>;
  for (const key of ['query', 'sql', 'statement']) {
    if (typeof record[key] === 'string') return record[key];
  }
  return null;
}

interface ToolOutput {
  isError?: boolean;
  text?: string;
  structuredContent?: unknown;
}

const STATE_WORDS: Record<string, string> = {
  'input-streaming': 'preparing…',
  'input-available': 'running…',
  'approval-requested': 'waiting for your confirmation',
  'approval-responded': 'answered',
  'output-available': 'done',
  'output-error': 'failed',
  'output-denied': 'refused by you',
};

export function ToolStep({ part }: { part: ToolPartLike }) {
  const name = toolNameOf(part);
  const statement = statementOf(part.input);
  const output = (part.output ?? null) as ToolOutput | null;
  const failed = part.state === 'output-error' || output?.isError === true;
  const result = output && !output.isError ? asQueryResult(output.structuredContent) : null;
  const shape = result ? chartShapeOf(result) : null;
  const words = failed ? 'failed' : (STATE_WORDS[part.state] ?? part.state);
  const hasArgs =
    part.input !== undefined && statement === null && Object.keys(part.input ?? {}).length > 0;
  return (
    <section className={`tool-step${failed ? ' failed' : ''}`} aria-label={`Tool ${name}`}>
      <details open={part.state === 'approval-requested' ? true : undefined}>
        <summary>
          <span className="tool-name">{name}</span> <span className="tool-state">{words}</span>
        </summary>
        {statement !== null ? (
          <pre className="code-block sql">
            <code>{statement}</code>
          </pre>
        ) : hasArgs ? (
          <pre className="code-block">
            <code>{JSON.stringify(part.input, null, 2)}</code>
          </pre>
        ) : null}
        {output && !result && !output.isError && output.text ? (
          <pre className="tool-text">{output.text}</pre>
        ) : null}
      </details>
      {part.state === 'output-error' && part.errorText ? (
        <p className="error-text">{part.errorText}</p>
      ) : null}
      {output?.isError && output.text ? (
        <p className="error-text">{firstLines(output.text)}</p>
      ) : null}
      {part.state === 'output-denied' ? (
        <p className="muted">You refused this statement; it was not run.</p>
      ) : null}
      {result && result.columns.length > 0 ? (
        <>
          <ResultTable result={result} name={name} />
          {shape ? <ResultChart shape={shape} /> : null}
        </>
      ) : result && output?.text ? (
        // A statement without rows (a write): the tool's own words, e.g. "UPDATE 1".
        <p className="muted">{firstLines(output.text)}</p>
      ) : null}
    </section>
  );
}

function firstLines(text: string): string {
  const lines = text.split('\n');
  return lines.length > 6 ? `${lines.slice(0, 6).join('\n')}\n…` : text;
}
