// Large parts of some answers never change between requests (the tools list is ~9 KB of
// schemas and descriptions): they are serialized once and spliced into each response.

const prebuilt = new WeakMap<object, string>();
const MARK = '\u0000pgmcp-prebuilt\u0000';
const MARK_JSON = JSON.stringify(MARK);

/** Remember the JSON text of a value that will be sent unchanged many times. */
export function prebuild<T extends object>(value: T): T {
  if (!prebuilt.has(value)) prebuilt.set(value, JSON.stringify(value));
  return value;
}

/**
 * Whether the message may hold a prebuilt value. They are result members (tools/list's tools):
 * looking two levels down is enough, and a message without one is serialized by plain
 * JSON.stringify, several times faster than with a replacer function (a tool call's rows).
 */
function holdsPrebuilt(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (prebuilt.has(value)) return true;
  const result = (value as { result?: unknown }).result;
  if (typeof result !== 'object' || result === null) return false;
  if (prebuilt.has(result)) return true;
  for (const key in result) {
    const member = (result as Record<string, unknown>)[key];
    if (typeof member === 'object' && member !== null && prebuilt.has(member)) return true;
  }
  return false;
}

/** JSON.stringify, splicing in the prebuilt text of remembered values. */
export function serialize(value: unknown): string {
  if (!holdsPrebuilt(value)) return JSON.stringify(value);
  const parts: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'object' && v !== null) {
      const raw = prebuilt.get(v);
      if (raw !== undefined) {
        parts.push(raw);
        return MARK;
      }
    }
    return v;
  });
  if (parts.length === 0) return text;
  let i = 0;
  return text.replaceAll(MARK_JSON, () => parts[i++]!);
}
