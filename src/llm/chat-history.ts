// A stored conversation is the server's truth. /api/chat with the id of a conversation the
// caller has stored runs on the stored history; the request contributes only what is new:
//
// - the client's messages, as useChat sends them, begin with the stored ones, equal by role and
//   content (every part: text, reasoning, tool calls with their input, output and state);
// - after them comes at most one new message, from the user;
// - the stored last assistant message may come back with tool approvals answered (a part the
//   server left `approval-requested`, now `approval-responded` with `approved` and an optional
//   `reason`, nothing else changed): that decision is taken, the rest is the stored part;
// - a client may also send the new user message alone.
//
// Anything else (an earlier message rewritten, removed or added, a tail that is not one user
// message) disagrees with the store and is refused (CONVERSATION_HISTORY_CONFLICT, HTTP 409): it
// is never used. Two leniencies, harmless because the client's copy of a stored message is never
// used: an answer the client stopped may be cut short in the client's copy (each of its parts
// the stored one or the beginning of it: a text that begins the stored text, a tool call without
// the result the server went on to store); and a message stored in the plain `{role, content}`
// form is compared by its text, the form clients show it in.
import { AppError, ErrorCodes } from '../core/errors.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface Message {
  id?: unknown;
  role?: unknown;
  parts?: unknown;
  content?: unknown;
  metadata?: unknown;
  [key: string]: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** `value` as it is after a trip through JSON (what the store and the wire both keep). */
function plain(value: unknown): Json {
  return JSON.parse(JSON.stringify(value ?? null)) as Json;
}

/** Deep equality of JSON values; object keys in any order. */
function same(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]!));
  }
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && same(a[k] as Json, b[k] as Json))
    );
  }
  return false;
}

/** A stored message in the plain `{role, content}` form (the pgEdge agent's), as a UI message. */
function asUiMessage(message: Message, index: number): Message {
  if (Array.isArray(message.parts)) return message;
  const { content, ...rest } = message;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content
            .map((c) => (isObject(c) && typeof c['text'] === 'string' ? c['text'] : ''))
            .join('')
        : '';
  return {
    ...rest,
    id: typeof message.id === 'string' ? message.id : `stored-${index}`,
    parts: [{ type: 'text', text }],
  };
}

const textOf = (message: Message): string | null => {
  if (!Array.isArray(message.parts)) return null;
  const texts = message.parts.filter((p) => isObject(p) && p['type'] === 'text');
  return texts.map((p) => String((p as { text?: unknown }).text ?? '')).join('');
};

type Part = Record<string, unknown> & { approval?: Record<string, unknown> };

const isToolPart = (part: Part): boolean =>
  typeof part['type'] === 'string' &&
  (part['type'].startsWith('tool-') || part['type'] === 'dynamic-tool');

/**
 * The client's part is the stored one as far as the client got before it stopped the answer:
 * a text or reasoning that begins the stored one; a tool call whose input, output, error and
 * approval, as far as the client has them, are the stored ones.
 */
function beginsPart(stored: Part, sent: Part): boolean {
  if (!isObject(sent) || sent['type'] !== stored['type']) return false;
  if (same(plain(stored), plain(sent))) return true;
  if (stored['type'] === 'text' || stored['type'] === 'reasoning') {
    return (
      typeof sent['text'] === 'string' &&
      typeof stored['text'] === 'string' &&
      stored['text'].startsWith(sent['text'])
    );
  }
  if (!isToolPart(stored) || sent['toolCallId'] !== stored['toolCallId']) return false;
  if (sent['toolName'] !== stored['toolName']) return false;
  const complete = sent['state'] !== 'input-streaming';
  for (const key of ['input', 'output', 'errorText', 'approval'] as const) {
    if (key === 'input' && !complete) continue;
    if (sent[key] !== undefined && !same(plain(stored[key]), plain(sent[key]))) return false;
  }
  return true;
}

/** The client's copy of a stored message agrees with it (by role and content). */
function agrees(stored: Message, sent: Message): boolean {
  if (!isObject(sent) || stored.role !== sent.role) return false;
  if (!Array.isArray(stored.parts)) {
    // The plain form: clients show it as one text part (its text when it was a string).
    return typeof stored.content !== 'string' || textOf(sent) === stored.content;
  }
  if (!Array.isArray(sent.parts)) return false;
  if (same(plain(stored.parts), plain(sent.parts))) return true;
  // An answer the client stopped: its copy ends earlier than the server's.
  const storedParts = stored.parts as Part[];
  const sentParts = sent.parts as Part[];
  return (
    stored.role === 'assistant' &&
    sentParts.length <= storedParts.length &&
    sentParts.every((part, i) => beginsPart(storedParts[i]!, part))
  );
}

/**
 * The client's copy of the stored last message with tool approvals answered: the stored
 * message with those answers taken, or null when it differs in anything else.
 */
function withApprovals(stored: Message, sent: Message): Message | null {
  if (stored.role !== 'assistant' || !isObject(sent) || sent.role !== 'assistant') return null;
  if (!Array.isArray(stored.parts) || !Array.isArray(sent.parts)) return null;
  const storedParts = stored.parts as Part[];
  const sentParts = sent.parts as Part[];
  if (storedParts.length !== sentParts.length) return null;
  let answered = false;
  const parts: Part[] = [];
  for (const [i, part] of storedParts.entries()) {
    const answer = approvalAnswer(part, sentParts[i]);
    if (answer === 'differs') return null;
    if (answer !== 'same') answered = true;
    parts.push(answer === 'same' ? part : answer);
  }
  return answered ? { ...stored, parts } : null;
}

/** One stored part against the client's: the same, the stored part answered, or different. */
function approvalAnswer(stored: Part, sent: Part | undefined): 'same' | 'differs' | Part {
  if (!isObject(sent)) return 'differs';
  if (same(plain(stored), plain(sent))) return 'same';
  if (stored['state'] !== 'approval-requested' || sent['state'] !== 'approval-responded') {
    return 'differs';
  }
  const approval = sent.approval;
  if (!isObject(approval) || typeof approval['approved'] !== 'boolean') return 'differs';
  if (approval['reason'] !== undefined && typeof approval['reason'] !== 'string') return 'differs';
  // Nothing but the state and the decision may differ from the stored part.
  const { state: _s, approval: _a, ...restSent } = sent;
  const { state: _t, approval: storedApproval, ...restStored } = stored;
  const { approved: _b, reason: _r, ...approvalRest } = approval;
  if (!same(plain(restStored), plain(restSent))) return 'differs';
  if (!same(plain(storedApproval), plain(approvalRest))) return 'differs';
  return {
    ...stored,
    state: 'approval-responded',
    approval: {
      ...storedApproval,
      approved: approval['approved'],
      ...(typeof approval['reason'] === 'string' ? { reason: approval['reason'] } : {}),
    },
  };
}

export function historyConflict(conversationId: string, why: string): AppError {
  return new AppError(
    ErrorCodes.CONVERSATION_HISTORY_CONFLICT,
    `The messages sent for conversation ${conversationId} disagree with the stored conversation: ${why}. The server keeps the conversation's history; send the stored messages as they are, plus the new user message (or the answered approvals), or only the new user message. Open the conversation again to continue it.`,
    { category: 'conflict', details: { conversationId } },
  );
}

const ordinal = (n: number): string => `message ${n + 1}`;

/**
 * The history a turn of a stored conversation runs on: the stored messages (plain ones as UI
 * messages), the stored last one with the client's approval answers taken, and the new user
 * message. Throws CONVERSATION_HISTORY_CONFLICT when the client's messages disagree.
 */
export function storedHistory(
  conversationId: string,
  storedMessages: readonly unknown[],
  sentMessages: readonly unknown[],
): unknown[] {
  const stored = storedMessages.map((m, i) =>
    isObject(m) ? asUiMessage(m as Message, i) : (m as Message),
  );
  const raw = storedMessages as readonly Message[];
  const sent = sentMessages as readonly Message[];
  const n = stored.length;
  if (n === 0) return [...sent];

  // Only the new user message.
  if (sent.length === 1 && sent[0]!.role === 'user' && !(n === 1 && agrees(raw[0]!, sent[0]!))) {
    return [...stored, sent[0]];
  }

  for (let i = 0; i < Math.min(n - 1, sent.length); i++) {
    if (!agrees(raw[i]!, sent[i]!)) {
      throw historyConflict(conversationId, `${ordinal(i)} (${String(raw[i]!.role)}) differs`);
    }
  }
  if (sent.length < n) {
    throw historyConflict(
      conversationId,
      `${sent.length} messages were sent, the conversation holds ${n}`,
    );
  }
  const history: unknown[] = stored.slice(0, n - 1);
  const last = raw[n - 1]!;
  const sentLast = sent[n - 1]!;
  const answered = withApprovals(last, sentLast);
  if (answered) history.push(answered);
  else if (agrees(last, sentLast)) history.push(stored[n - 1]);
  else throw historyConflict(conversationId, `${ordinal(n - 1)} (${String(last.role)}) differs`);
  const tail = sent.slice(n);
  if (tail.length > 1 || (tail.length === 1 && tail[0]!.role !== 'user')) {
    throw historyConflict(
      conversationId,
      'after the stored messages only one new message, from the user, may follow',
    );
  }
  return [...history, ...tail];
}
