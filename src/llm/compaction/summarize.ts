// What a dropped stretch of conversation was about, in one line the model can read in its place:
// the topics, the tables it named, the tools it used and how many messages it held. The
// enhanced form (enable_llm_summarization) adds the actions taken, the errors met and the
// person's requests; it is extracted from the messages, no model is called.
import type { MessageView } from './message-parts.js';
import { shortText } from '../../core/chat-message.js';
import type { CompactSummary } from './types.js';

const TOPICS: readonly [string, RegExp][] = [
  ['database queries', /\b(select|query|queries|rows?|count)\b/i],
  ['schema exploration', /\b(schema|columns?|tables?|describe|structure|get_schema_info)\b/i],
  ['performance analysis', /\b(explain|index(?:es)?|slow|performance|query plan|seq scan)\b/i],
  ['data changes', /\b(insert|update|delete|upsert|write)\b/i],
  ['errors', /\b(error|failed|permission denied|does not exist)\b/i],
  ['vector search', /\b(similarity|embedding|vector|semantic search)\b/i],
];

const NAME =
  '((?:"[^"]{1,63}"|[a-z_][a-z0-9_$]{0,62})(?:\\.(?:"[^"]{1,63}"|[a-z_][a-z0-9_$]{0,62}))?)';
// In SQL: names after FROM, JOIN, INTO, UPDATE and TABLE.
const SQL_TABLE = new RegExp(
  `\\b(?:from|join|into|update|table(?: if (?:not )?exists)?)\\s+${NAME}`,
  'gi',
);
// In prose the words are ordinary English, so only the surer forms: "from orders", "the
// customers table", DDL.
const PROSE_TABLE = new RegExp(
  `\\b(?:from|join|into|(?:create|alter|drop) table(?: if (?:not )?exists)?)\\s+${NAME}|\\bthe\\s+${NAME}\\s+table\\b`,
  'gi',
);
const NOT_TABLES = new Set(
  (
    'select the a an this that these those it its them there here your my our their all each ' +
    'every which what where when lateral unnest generate_series values information_schema pg_catalog ' +
    'now then scratch memory start end same other first last one two'
  ).split(' '),
);

const MAX_LISTED = 10;

function tablesIn(text: string, into: Set<string>, sql: boolean): void {
  for (const match of text.matchAll(sql ? SQL_TABLE : PROSE_TABLE)) {
    const raw = match[1] ?? match[2];
    if (!raw) continue;
    const name = raw.replaceAll('"', '');
    const bare = name.toLowerCase();
    if (NOT_TABLES.has(bare) || /^\d/.test(bare)) continue;
    into.add(name);
  }
}

function tablesFromInput(input: unknown, into: Set<string>): void {
  if (typeof input !== 'object' || input === null) return;
  const args = input as Record<string, unknown>;
  for (const key of ['table', 'table_name', 'relation', 'name']) {
    const value = args[key];
    if (typeof value === 'string' && /^[A-Za-z_][\w$.]{0,127}$/.test(value)) {
      const schema = typeof args['schema_name'] === 'string' ? `${args['schema_name']}.` : '';
      into.add(schema && !value.includes('.') ? `${schema}${value}` : value);
    }
  }
  for (const key of ['query', 'sql', 'statement']) {
    if (typeof args[key] === 'string') tablesIn(args[key], into, true);
  }
}

const list = (set: Set<string>): string[] => [...set].slice(0, MAX_LISTED);

/** What one message contributes to a summary; computed once per message. */
export interface SummaryFeatures {
  topics: string[];
  tables: string[];
  tools: string[];
  queries: number;
  errors: string[];
  request: string | null;
}

export function summaryFeatures(view: MessageView): SummaryFeatures {
  const text = view.everything.slice(0, 50_000);
  const topics = TOPICS.filter(([, pattern]) => pattern.test(text)).map(([topic]) => topic);
  const tables = new Set<string>();
  const tools: string[] = [];
  let queries = 0;
  const calls = view.calls;
  for (const call of calls) {
    tools.push(call.name);
    tablesFromInput(call.input, tables);
    if (call.name === 'query_database') queries++;
  }
  if (calls.length === 0) tablesIn(view.text.slice(0, 50_000), tables, false);
  const errors = view.results
    .filter((result) => result.isError)
    .map((result) => shortText(result.text, 120));
  const asked = view.role === 'user' ? view.text.trim() : '';
  return {
    topics,
    tables: [...tables],
    tools,
    queries,
    errors,
    request: asked ? shortText(asked, 80) : null,
  };
}

/** The summary of the messages whose features are given (the dropped ones, in order). */
export function summarize(features: readonly SummaryFeatures[], enhanced: boolean): CompactSummary {
  const topics = new Set<string>();
  const tables = new Set<string>();
  const tools = new Set<string>();
  const errors: string[] = [];
  const requests: string[] = [];
  let queries = 0;
  for (const f of features) {
    for (const topic of f.topics) topics.add(topic);
    for (const table of f.tables) tables.add(table);
    for (const tool of f.tools) tools.add(tool);
    queries += f.queries;
    for (const error of f.errors) if (errors.length < 3) errors.push(error);
    if (f.request !== null && requests.length < 3) requests.push(f.request);
  }
  const parts: string[] = [];
  if (topics.size > 0) parts.push(`Topics: ${list(topics).join(', ')}`);
  if (tables.size > 0) parts.push(`Tables: ${list(tables).join(', ')}`);
  if (tools.size > 0) parts.push(`Tools used: ${list(tools).join(', ')}`);
  if (enhanced) {
    if (requests.length > 0) parts.push(`Requests: ${requests.map((r) => `"${r}"`).join('; ')}`);
    if (queries > 0) parts.push(`Actions: ran ${queries} ${queries === 1 ? 'query' : 'queries'}`);
    if (errors.length > 0) parts.push(`Errors: ${errors.join('; ')}`);
  }
  const count = features.length;
  parts.push(`${count} ${count === 1 ? 'message' : 'messages'} compressed`);
  return {
    topics: list(topics),
    tables: list(tables),
    tools: list(tools),
    description: `[Compressed context: ${parts.join(', ')}]`,
  };
}
