// The output screen: the backstop that keeps credentials (credentials.ts) out of every answer
// built from database values, whatever produced them — query_database, an @mcp routine, a
// registry handler's tool, resource or prompt, an error a function raised. Each string is one
// cheap test (looksLikeCredential); only a string that fails it costs more. What is withheld is
// replaced by WITHHELD and counted, and the answer carries one note saying how many and why.
import type {
  ContentBlock,
  PromptResult,
  ResourceContents,
  ResourceReadResult,
  ToolResult,
} from '../core/content.js';
import { AppError, isAppError } from '../core/errors.js';
import { looksLikeCredential, WITHHELD } from './credentials.js';

/** How many values one answer had withheld. */
export interface Tally {
  count: number;
}

/** The note an answer carries when values were withheld. */
export function withheldNote(count: number): string {
  return `${count} value${count === 1 ? '' : 's'} withheld as ${WITHHELD}: ${count === 1 ? 'it reads' : 'they read'} like a credential (a password hash or a connection string with a password), and pgmcp never returns credentials.`;
}

// Past this depth a JSON value is judged whole (as its text) instead of member by member.
const MAX_DEPTH = 64;

/** Binary data (base64: a blob, an image) whose bytes read like a credential. */
export function base64LooksLikeCredential(data: string): boolean {
  return looksLikeCredential(Buffer.from(data, 'base64').toString('latin1'));
}

function withhold(tally: Tally): string {
  tally.count += 1;
  return WITHHELD;
}

/**
 * A string that reads like a credential is withheld whole, unless it is the text of a JSON
 * object or array: then only the members that read like one are, and it is written out again.
 */
function screenString(value: string, tally: Tally, depth: number): string {
  if (!looksLikeCredential(value)) return value;
  const first = value.trimStart()[0];
  if ((first === '{' || first === '[') && depth < MAX_DEPTH) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return withhold(tally);
    }
    const inner: Tally = { count: 0 };
    const text = JSON.stringify(screenAt(parsed, inner, depth + 1));
    // Anything still shaped like a credential (a key, say) withholds the whole text.
    if (inner.count > 0 && !looksLikeCredential(text)) {
      tally.count += inner.count;
      return text;
    }
  }
  return withhold(tally);
}

function screenAt(value: unknown, tally: Tally, depth: number): unknown {
  if (typeof value === 'string') return screenString(value, tally, depth);
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  if (Buffer.isBuffer(value)) {
    return looksLikeCredential(value.toString('latin1')) ? withhold(tally) : value;
  }
  if (depth >= MAX_DEPTH) {
    return looksLikeCredential(JSON.stringify(value)) ? withhold(tally) : value;
  }
  // Copied only when something in it is withheld: an ordinary answer allocates nothing.
  if (Array.isArray(value)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const screened = screenAt(item, tally, depth + 1);
      if (screened !== item) (out ??= value.slice())[i] = screened;
    }
    return out ?? value;
  }
  const record = value as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    // A key is data too (a jsonb object's): one shaped like a credential withholds the object.
    if (looksLikeCredential(key)) return withhold(tally);
    const item = record[key];
    const screened = screenAt(item, tally, depth + 1);
    if (screened !== item) (out ??= { ...record })[key] = screened;
  }
  return out ?? value;
}

/**
 * The value with whatever in it reads like a credential withheld (strings, bytea Buffers, and
 * the members of arrays and objects at any depth), counted in `tally`. The value itself when
 * nothing was.
 */
export function screenValue<T>(value: T, tally: Tally): T {
  return screenAt(value, tally, 0) as T;
}

function screenContents(contents: ResourceContents, tally: Tally): ResourceContents {
  if ('blob' in contents && base64LooksLikeCredential(contents.blob)) {
    return screenValue({ uri: contents.uri, mimeType: 'text/plain', text: withhold(tally) }, tally);
  }
  return screenValue(contents, tally);
}

function screenBlock(block: ContentBlock, tally: Tally): ContentBlock {
  if ((block.type === 'image' || block.type === 'audio') && base64LooksLikeCredential(block.data))
    return { type: 'text', text: withhold(tally) };
  if (block.type === 'resource') {
    const resource = screenContents(block.resource, tally);
    return screenValue(resource === block.resource ? block : { ...block, resource }, tally);
  }
  return screenValue(block, tally);
}

/** Each of `items` through `screen`: the same array when none changed. */
export function mapScreened<T>(items: T[], screen: (item: T) => T): T[] {
  let out: T[] | null = null;
  items.forEach((item, i) => {
    const screened = screen(item);
    if (screened !== item) (out ??= items.slice())[i] = screened;
  });
  return out ?? items;
}

/** A tool's answer screened (content and structuredContent); the note is one more text block. */
export function screenToolResult(result: ToolResult): ToolResult {
  const tally: Tally = { count: 0 };
  const content = mapScreened(result.content, (b) => screenBlock(b, tally));
  const structured =
    result.structuredContent === undefined
      ? undefined
      : screenValue(result.structuredContent, tally);
  if (tally.count === 0) return result;
  const out: ToolResult = {
    ...result,
    content: [...content, { type: 'text', text: withheldNote(tally.count) }],
  };
  if (structured !== undefined) out.structuredContent = structured;
  return out;
}

/** A resource read screened; the note is one more (text/plain) item of its contents. */
export function screenResourceResult(result: ResourceReadResult): ResourceReadResult {
  const tally: Tally = { count: 0 };
  const contents = mapScreened(result.contents, (c) => screenContents(c, tally));
  if (tally.count === 0) return result;
  const uri = contents[0]?.uri ?? '';
  return {
    ...result,
    contents: [...contents, { uri, mimeType: 'text/plain', text: withheldNote(tally.count) }],
  };
}

/** A prompt screened; the note goes into its description (the messages are the model's). */
export function screenPromptResult(result: PromptResult): PromptResult {
  const tally: Tally = { count: 0 };
  const messages = mapScreened(result.messages, (m) => {
    const content = screenBlock(m.content, tally);
    return content === m.content ? m : { ...m, content };
  });
  const description =
    result.description === undefined ? undefined : screenValue(result.description, tally);
  if (tally.count === 0) return result;
  const note = withheldNote(tally.count);
  return {
    ...result,
    messages,
    description: description === undefined ? note : `${description}\n${note}`,
  };
}

// `ERROR 28000:`, `DETAIL:`, `HINT:` …: kept when the rest of their line is withheld.
const LABEL = /^[A-Z][A-Z ]*(?: [0-9A-Z]{5})?: /;

/**
 * An error whose message or fields carry a value a function raised or PostgreSQL quoted (a
 * RAISE of a hash, a DETAIL with a key): such lines and fields are withheld, the note added.
 * The original error is dropped, not kept as the cause, so no log shows it either.
 */
export function screenError(error: unknown): unknown {
  if (!isAppError(error)) return error;
  const tally: Tally = { count: 0 };
  const message = error.message
    .split('\n')
    .map((line) => {
      if (!looksLikeCredential(line)) return line;
      const label = LABEL.exec(line)?.[0] ?? '';
      return label + screenValue(line.slice(label.length), tally);
    })
    .join('\n');
  const details = error.details === undefined ? undefined : screenValue(error.details, tally);
  if (tally.count === 0) return error;
  return new AppError(error.code, `${message}\n${withheldNote(tally.count)}`, {
    category: error.category,
    ...(details !== undefined ? { details } : {}),
  });
}
