// What the conversation store accepts: the limits, ids, owners, titles and message lists, each
// checked (or cleaned) before it reaches the state database, with errors that say which limit.
import { randomBytes } from 'node:crypto';
import { messageText, roleOf, shortText } from '../core/chat-message.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';

/** Bounds on what one conversation may hold; the routes and the chat loop check against these. */
export const CONVERSATION_LIMITS = Object.freeze({
  /** Conversations one owner may keep. */
  maxConversations: 10_000,
  maxMessages: 1000,
  /** The messages' JSON text, in bytes. */
  maxMessageBytes: 8 * 1024 * 1024,
  maxTitleLength: 200,
  maxSettingLength: 200,
  maxListLimit: 200,
  defaultListLimit: 50,
  previewLength: 100,
});

/**
 * Ids we make are `conv_` and 128 random bits; ids clients choose (useChat's) must match this.
 * At most 100 characters: Fastify's router refuses longer path parameters (414) anyway.
 */
export const CONVERSATION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
const DEFAULT_TITLE = 'New conversation';

export interface Owner {
  key: string;
  username: string;
}

/** Whether `principal` can have stored conversations (anonymous callers cannot). */
export function keepsConversations(principal: Principal): boolean {
  return ownerOf(principal) !== null;
}

function ownerOf(principal: Principal): Owner | null {
  if (principal.kind === 'anonymous' || !principal.userId) return null;
  // A token is its id (a revoked token's name can be taken again by a new token); the others
  // are their user id within their kind (and tenant), so an OAuth subject "alice" and the
  // password user "alice" are different owners.
  const who =
    principal.kind === 'token' && principal.tokenId ? principal.tokenId : principal.userId;
  // JSON, so no user id or tenant can be spelt to look like another owner's.
  const key = JSON.stringify([principal.kind, principal.tenantId ?? null, who]);
  return { key, username: principal.userId };
}

export function requireOwner(principal: Principal): Owner {
  const owner = ownerOf(principal);
  if (!owner) {
    throw new AppError(
      ErrorCodes.CONVERSATION_OWNER_REQUIRED,
      'Conversations are kept per signed-in user: sign in or send a bearer token.',
      { category: 'auth' },
    );
  }
  return owner;
}

export function newConversationId(): string {
  return `conv_${randomBytes(16).toString('base64url')}`;
}

const invalid = (message: string): AppError =>
  new AppError(ErrorCodes.CONVERSATION_INVALID, message, { category: 'input' });

export const tooMany = (max: number): AppError =>
  invalid(`You have ${max} conversations, the most one user may keep; delete some first.`);

export const notFound = (): AppError =>
  new AppError(ErrorCodes.CONVERSATION_NOT_FOUND, 'No such conversation.', {
    category: 'not_found',
  });

export function checkId(id: unknown): string {
  if (typeof id !== 'string' || !CONVERSATION_ID_PATTERN.test(id)) {
    throw invalid(
      'A conversation id is 1 to 100 letters, digits, "_" or "-", starting with a letter or digit.',
    );
  }
  return id;
}

/** The messages as JSON text, checked against the limits. */
export function messagesJson(messages: readonly unknown[] | undefined): {
  json: string;
  count: number;
} {
  const list = messages ?? [];
  if (!Array.isArray(list)) throw invalid('messages must be an array.');
  if (list.length > CONVERSATION_LIMITS.maxMessages) {
    throw invalid(
      `A conversation holds at most ${CONVERSATION_LIMITS.maxMessages} messages (got ${list.length}); compact it first.`,
    );
  }
  for (const message of list) {
    if (roleOf(message) === '') throw invalid('Every message must be an object with a role.');
  }
  const json = JSON.stringify(list, storable);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > CONVERSATION_LIMITS.maxMessageBytes) {
    throw invalid(
      `A conversation's messages may take at most ${CONVERSATION_LIMITS.maxMessageBytes} bytes (got ${bytes}); compact it first.`,
    );
  }
  return { json, count: list.length };
}

// jsonb refuses \u0000 and unpaired surrogates; a message carrying them (pasted binary, a
// string cut mid-character) is stored without them rather than refused.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const HAS_UNSTORABLE = new RegExp(UNSTORABLE.source);
const clean = (text: string): string =>
  text.replace(UNSTORABLE, (c) => (c === '\u0000' ? '' : '\uFFFD'));

function storable(_key: string, value: unknown): unknown {
  if (typeof value === 'string') return clean(value);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.some((key) => HAS_UNSTORABLE.test(key))) {
      return Object.fromEntries(
        keys.map((key) => [clean(key), (value as Record<string, unknown>)[key]]),
      );
    }
  }
  return value;
}

export function checkTitle(title: unknown): string {
  const text = typeof title === 'string' ? clean(title).replace(/\s+/g, ' ').trim() : '';
  if (text === '') throw invalid('A title must have at least one visible character.');
  if (text.length > CONVERSATION_LIMITS.maxTitleLength) {
    throw invalid(`A title is at most ${CONVERSATION_LIMITS.maxTitleLength} characters.`);
  }
  return text;
}

export function checkSetting(
  name: string,
  value: string | null | undefined,
): string | null | undefined {
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string' || value.length > CONVERSATION_LIMITS.maxSettingLength) {
    throw invalid(
      `${name} must be a string of at most ${CONVERSATION_LIMITS.maxSettingLength} characters.`,
    );
  }
  return clean(value);
}

/** Title and preview from the first user message that has text. */
export function derived(messages: readonly unknown[]): { title: string; preview: string } {
  for (const message of messages) {
    if (roleOf(message) !== 'user') continue;
    const text = clean(messageText(message)).trim();
    if (text === '') continue;
    return {
      title: shortText(text, CONVERSATION_LIMITS.maxTitleLength),
      preview: shortText(text, CONVERSATION_LIMITS.previewLength),
    };
  }
  return { title: DEFAULT_TITLE, preview: '' };
}

export function pageOf(page: { limit?: number; offset?: number } | undefined): [number, number] {
  const limit = page?.limit ?? CONVERSATION_LIMITS.defaultListLimit;
  const offset = page?.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > CONVERSATION_LIMITS.maxListLimit) {
    throw invalid(`limit must be an integer from 1 to ${CONVERSATION_LIMITS.maxListLimit}.`);
  }
  if (!Number.isInteger(offset) || offset < 0 || offset > 1_000_000) {
    throw invalid('offset must be an integer from 0 to 1000000.');
  }
  return [limit, offset];
}

export const usageNumber = (value: number | undefined): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
