// The five classes a message can fall in, decided from what it says and which tools it touched,
// most valuable first:
//   anchor      the first request, system instructions, corrections and standing instructions
//               from the person, schema changes (DDL), schema facts (when preserve_schema_info)
//   important   errors, query plans and analysis, tool calls and results (when
//               preserve_tool_results), schema facts (when not preserved as anchors)
//   contextual  the person's other questions, longer explanations
//   routine     ordinary replies, tool steps when tool results are not preserved
//   transient   acknowledgements and empty turns ("ok", "thanks")
// A message takes the most valuable class any of its reasons gives it.
import { viewOf, type MessageView } from './message-parts.js';
import { MESSAGE_CLASSES, type MessageClass } from './types.js';

export interface ClassifyOptions {
  preserveToolResults: boolean;
  preserveSchemaInfo: boolean;
}

export interface Classification {
  class: MessageClass;
  /** Why, for tests and analytics: 'first-request', 'error', 'schema', … */
  reasons: string[];
  hasError: boolean;
  hasSchema: boolean;
}

/** Tools whose results describe the database's structure. */
const SCHEMA_TOOLS = new Set([
  'get_schema_info',
  'describe_relations',
  'search_columns',
  'list_tables',
  'describe_table',
]);
const ANALYSIS_TOOLS = new Set(['execute_explain', 'explain_query', 'analyze_query']);

const DDL =
  /\b(create|alter|drop|truncate)\s+(?:or\s+replace\s+|unique\s+|materialized\s+)?(table|index|view|schema|column|type|function|procedure|extension|sequence|trigger|policy|role)\b/i;
const SCHEMA_FACTS =
  /\b(create table|column_name|data_type|primary key|foreign key|references \w|not null default)\b|^\s*(schema|table|column)\t/im;
const ERROR_TEXT =
  /\b(error|sqlstate|permission denied|does not exist|syntax error|violates|timed out|timeout|failed|exception|invalid input)\b/i;
const ANALYSIS_TEXT =
  /\b(query plan|seq scan|index scan|index only scan|hash join|nested loop|bitmap heap scan|explain(?: analyze)?|execution time|planning time|cost=\d)/i;
const CORRECTION =
  /^\s*(no[,.!\s]|nope\b|wrong\b|incorrect\b|actually\b|instead\b|i meant\b|correction\b|that'?s (?:not|wrong|incorrect))|\b(that is not what i|not what i (?:asked|meant|wanted)|you (?:misunderstood|got it wrong))\b/i;
const STANDING =
  /\b(from now on|always|never|don'?t ever|do not ever|make sure to|remember that|keep in mind|please use|only use)\b/i;
const ACKNOWLEDGEMENT =
  /^(ok(?:ay)?|k|thanks?(?: you)?(?: very much)?|thx|great|cool|nice|perfect|got it|sure|yes|yep|yeah|no problem|sounds good|understood|alright|done|👍|🙏)[\s.!]*$/i;

const rank = (c: MessageClass): number => MESSAGE_CLASSES.indexOf(c);

/** Classifies `message`; `isFirstRequest` marks the conversation's first user message. */
export function classifyMessage(
  message: unknown,
  isFirstRequest: boolean,
  options: ClassifyOptions,
): Classification {
  return classifyView(viewOf(message), isFirstRequest, options);
}

/** The same for a message already read. */
export function classifyView(
  view: MessageView,
  isFirstRequest: boolean,
  options: ClassifyOptions,
): Classification {
  const { role, calls, results } = view;
  const text = view.text.trim();
  // The classifiers look at the start of long texts only: what a dump is shows in its head.
  const everything = view.everything.length > 20_000 ? view.everything : view.everything;
  const reasons: string[] = [];
  let best: MessageClass = 'transient';
  const give = (c: MessageClass, reason: string): void => {
    reasons.push(reason);
    if (rank(c) < rank(best)) best = c;
  };

  const hasError =
    results.some((r) => r.isError) ||
    (results.length > 0 && results.some((r) => ERROR_TEXT.test(r.text.slice(0, 2_000)))) ||
    (role === 'assistant' &&
      /\b(error|failed)\b/i.test(text) &&
      /\b(sqlstate|does not exist|permission denied|syntax error)\b/i.test(text));
  const schemaTool =
    calls.some((c) => SCHEMA_TOOLS.has(c.name)) ||
    results.some((r) => r.name !== null && SCHEMA_TOOLS.has(r.name));
  const hasSchema = schemaTool || SCHEMA_FACTS.test(everything);

  if (role === 'system') give('anchor', 'system');
  if (role === 'user' && isFirstRequest) give('anchor', 'first-request');
  if (role === 'user' && CORRECTION.test(text)) give('anchor', 'correction');
  if (role === 'user' && STANDING.test(text)) give('anchor', 'instruction');
  if (DDL.test(everything)) give('anchor', 'schema-change');
  if (hasSchema) give(options.preserveSchemaInfo ? 'anchor' : 'important', 'schema');
  if (hasError) give('important', 'error');
  if (calls.some((c) => ANALYSIS_TOOLS.has(c.name)) || ANALYSIS_TEXT.test(everything)) {
    give('important', 'analysis');
  }
  if (calls.length > 0 || results.length > 0) {
    give(options.preserveToolResults ? 'important' : 'routine', 'tool');
  }
  if (role === 'user' && text !== '' && !ACKNOWLEDGEMENT.test(text)) give('contextual', 'question');
  if (role === 'assistant' && text.length > 400) give('contextual', 'explanation');
  if (text !== '' && !ACKNOWLEDGEMENT.test(text)) give('routine', 'text');
  if (reasons.length === 0) reasons.push(text === '' ? 'empty' : 'acknowledgement');
  return { class: best, reasons, hasError, hasSchema };
}
