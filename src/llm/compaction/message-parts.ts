// Reading chat messages in every form a client may send: the AI SDK's model messages
// (tool-call / tool-result parts), its UI messages (`tool-<name>` parts holding call and
// result together), OpenAI's chat form (`tool_calls`, `tool_call_id`) and Anthropic's content
// blocks (`tool_use`, `tool_result`). Nothing here throws on an odd shape.
import { isRecord, messageText, partsOf, roleOf } from '../../core/chat-message.js';

export interface ToolCall {
  id: string | null;
  name: string;
  input: unknown;
}

export interface ToolResult {
  id: string | null;
  name: string | null;
  text: string;
  isError: boolean;
}

export { messageText, partsOf, roleOf };

/** A UI message's tool part (`tool-<name>` or `dynamic-tool`), not a model message's part. */
const isUiToolPart = (type: string): boolean =>
  type === 'dynamic-tool' ||
  (type.startsWith('tool-') && type !== 'tool-call' && type !== 'tool-result');

const str = (value: unknown): string | null =>
  typeof value === 'string' && value !== '' ? value : null;

function parseArguments(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** The tool calls a message makes (its own results included, for UI tool parts). */
export function toolCallsOf(message: unknown): ToolCall[] {
  const calls: ToolCall[] = [];
  if (isRecord(message) && Array.isArray(message['tool_calls'])) {
    for (const call of message['tool_calls'].filter(isRecord)) {
      const fn = isRecord(call['function']) ? call['function'] : {};
      calls.push({
        id: str(call['id']),
        name: str(fn['name']) ?? 'tool',
        input: parseArguments(fn['arguments']),
      });
    }
  }
  for (const part of partsOf(message)) {
    const type = typeof part['type'] === 'string' ? part['type'] : '';
    if (type === 'tool-call' || type === 'tool_use') {
      calls.push({
        id: str(part['toolCallId']) ?? str(part['id']),
        name: str(part['toolName']) ?? str(part['name']) ?? 'tool',
        input: part['input'] ?? part['args'],
      });
    } else if (isUiToolPart(type)) {
      calls.push({
        id: str(part['toolCallId']),
        name: type === 'dynamic-tool' ? (str(part['toolName']) ?? 'tool') : type.slice(5),
        input: part['input'],
      });
    }
  }
  return calls;
}

/** The tool results a message carries. */
export function toolResultsOf(message: unknown): ToolResult[] {
  const results: ToolResult[] = [];
  const role = roleOf(message);
  if (role === 'tool' && isRecord(message) && typeof message['content'] === 'string') {
    results.push({
      id: str(message['tool_call_id']),
      name: str(message['name']),
      text: message['content'],
      isError: false,
    });
  }
  for (const part of partsOf(message)) {
    const type = typeof part['type'] === 'string' ? part['type'] : '';
    if (type === 'tool-result') {
      const output = part['output'] ?? part['result'];
      const kind = isRecord(output) && typeof output['type'] === 'string' ? output['type'] : '';
      results.push({
        id: str(part['toolCallId']),
        name: str(part['toolName']),
        text: outputText(output),
        isError: part['isError'] === true || kind.startsWith('error') || errorFlag(output),
      });
    } else if (type === 'tool_result') {
      results.push({
        id: str(part['tool_use_id']),
        name: null,
        text: outputText(part['content']),
        isError: part['is_error'] === true,
      });
    } else if (isUiToolPart(type) && part['state'] !== 'input-streaming') {
      const output = part['output'];
      const errorText = str(part['errorText']);
      if (output === undefined && errorText === null) continue;
      results.push({
        id: str(part['toolCallId']),
        name: type === 'dynamic-tool' ? str(part['toolName']) : type.slice(5),
        text: errorText ?? outputText(output),
        isError: errorText !== null || part['state'] === 'output-error' || errorFlag(output),
      });
    }
  }
  return results;
}

function errorFlag(output: unknown): boolean {
  return isRecord(output) && output['isError'] === true;
}

/** A tool output as text: the MCP-like `{text}`, the AI SDK's `{type, value}`, content blocks. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map(outputText).join('\n');
  if (!isRecord(output)) return output === undefined || output === null ? '' : String(output);
  if (typeof output['text'] === 'string') return output['text'];
  if ('value' in output) return outputText(output['value']);
  if (Array.isArray(output['content'])) return outputText(output['content']);
  return JSON.stringify(output);
}

/** A message read once: what the classifiers, the counters and the summaries look at. */
export interface MessageView {
  role: string;
  /** What the person or the model wrote (string content, text parts). */
  text: string;
  calls: ToolCall[];
  results: ToolResult[];
  /** Everything a model would read: text, tool calls with arguments, results, reasoning. */
  everything: string;
}

export function viewOf(message: unknown): MessageView {
  const text = messageText(message);
  const calls = toolCallsOf(message);
  const results = toolResultsOf(message);
  const pieces = [text];
  for (const call of calls) {
    const input = typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {});
    pieces.push(`${call.name} ${input}`);
  }
  for (const result of results) pieces.push(result.text);
  for (const part of partsOf(message)) {
    if (part['type'] === 'reasoning' && typeof part['text'] === 'string') pieces.push(part['text']);
  }
  const everything = pieces.filter((piece) => piece !== '').join('\n');
  return { role: roleOf(message), text, calls, results, everything };
}

/** Everything a model would read in the message, for counting and for the classifiers. */
export function fullText(message: unknown): string {
  return viewOf(message).everything;
}
