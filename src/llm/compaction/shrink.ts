// Shortening a message that is worth keeping but too long to keep whole — typically a tool
// result with thousands of rows or a full schema dump. Long strings keep their head (where the
// columns, the first rows and error messages are) and their tail, with the count of characters
// left out between; long arrays (rows) keep their first items. The message keeps its shape, its
// role and its tool-call ids, so a shortened result still answers its call.
import { isRecord } from '../../core/chat-message.js';

const KEEP_KEYS = new Set([
  'role',
  'type',
  'id',
  'toolCallId',
  'toolName',
  'tool_call_id',
  'tool_use_id',
  'state',
  'name',
]);
const MAX_ITEMS = 50;

function shrinkString(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.floor(maxChars * 0.75);
  const tail = Math.max(0, maxChars - head);
  const left = text.length - head - tail;
  return `${text.slice(0, head)}\n… [${left} characters left out by compaction] …\n${tail > 0 ? text.slice(-tail) : ''}`;
}

function shrinkValue(value: unknown, maxChars: number, depth: number): unknown {
  if (typeof value === 'string') return shrinkString(value, maxChars);
  if (depth > 20) return value;
  if (Array.isArray(value)) {
    const kept = value.length > MAX_ITEMS ? value.slice(0, MAX_ITEMS) : value;
    return kept.map((item) => shrinkValue(item, maxChars, depth + 1));
  }
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = KEEP_KEYS.has(key) ? inner : shrinkValue(inner, maxChars, depth + 1);
  }
  // A row list that lost rows says so, where the rows' own count field is.
  if (Array.isArray(value['rows']) && value['rows'].length > MAX_ITEMS) {
    out['truncated'] = true;
  }
  return out;
}

/** `message` with every string cut to about `maxChars` and every list to its first items. */
export function shrinkMessage<T>(message: T, maxChars: number): T {
  return shrinkValue(message, maxChars, 0) as T;
}
