// Chat messages as they arrive from clients and the chat loop: the pgEdge agent's `{role, content}`
// (content a string or the AI SDK's model-message parts) or the AI SDK's UI message
// (`{id, role, parts}`). These helpers read them without trusting their shape: anything that is
// not the expected type reads as empty, never as an exception.

/** A message's role, or '' when it has none. */
export function roleOf(message: unknown): string {
  if (!isRecord(message)) return '';
  return typeof message['role'] === 'string' ? message['role'] : '';
}

/** The parts of a message: `content` when it is an array, else `parts`, else none. */
export function partsOf(message: unknown): readonly Record<string, unknown>[] {
  if (!isRecord(message)) return [];
  const parts = Array.isArray(message['content']) ? message['content'] : message['parts'];
  return Array.isArray(parts) ? parts.filter(isRecord) : [];
}

/** The plain text a person wrote or a model answered: string content and text parts, joined. */
export function messageText(message: unknown): string {
  if (!isRecord(message)) return '';
  if (typeof message['content'] === 'string') return message['content'];
  return partsOf(message)
    .filter((part) => part['type'] === 'text' && typeof part['text'] === 'string')
    .map((part) => part['text'] as string)
    .join('\n');
}

/** Whitespace folded and the text cut to `max` characters at a word where one is near. */
export function shortText(text: string, max: number): string {
  const folded = text.replace(/\s+/g, ' ').trim();
  if (folded.length <= max) return folded;
  const cut = folded.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
