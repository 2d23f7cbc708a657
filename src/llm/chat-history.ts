// A stored conversation is the server's truth. /api/chat with the id of a conversation the
// caller has stored runs on the stored history; the request contributes only what is new:
//
// - the client's messages, as useChat sends them, begin with the stored ones, equal by role and
//   content (every part: text, reasoning, tool calls with their input, output and state);
// - after them come the new messages, all from the user: usually one, but a client keeps a
//   message the server refused before it stored anything (a 429, a missing key, a 409) and sends
//   it again with the next one; they are stored as the user sent them;
// - the stored last assistant message may come back with tool approvals answered (a part the
//   server left `approval-requested`, now `approval-responded` with `approved` and an optional
//   `reason`, nothing else changed): that decision is taken, the rest is the stored part;
// - a client may also send the new user message alone (one whose id the store does not hold);
// - `trigger: 'regenerate-message'` (the AI SDK's regenerate()) answers again: the stored history
//   is cut back to before the regenerated assistant message (`messageId`, else the first stored
//   message the client's copy does not reach), and the new answer replaces what followed.
//
// Anything else (an earlier message rewritten, removed or added, an assistant message after the
// stored ones, an answered message sent again) disagrees with the store and is refused
// (CONVERSATION_HISTORY_CONFLICT, HTTP 409): it is never used. Three leniencies, harmless because
// the client's copy of a stored message is never used: an answer the client stopped may be cut
// short in the client's copy (each of its parts the stored one or the beginning of it: a text
// that begins the stored text, a tool call without the result the server went on to store); an
// assistant message the server stored empty (stopped before the model said anything) may be
// missing from it; and a message stored in the plain `{role, content}` form is compared by its
// text, the form clients show it in.
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
 * An assistant message that holds nothing a client could show: what the server stores for an
 * answer stopped before the model said anything. A client that stopped before the stream's
 * first chunk reached it never had it.
 */
function isEmptyAnswer(message: Message): boolean {
  if (message.role !== 'assistant') return false;
  if (!Array.isArray(message.parts)) return message.content === '' || message.content === undefined;
  return message.parts.every((p) => isObject(p) && p['type'] === 'step-start');
}

/** What the request says about the turn (the AI SDK's `trigger` and `messageId`). */
export interface TurnRequest {
  trigger?: unknown;
  messageId?: unknown;
}

/**
 * The history a turn of a stored conversation runs on: the stored messages (plain ones as UI
 * messages), the stored last one with the client's approval answers taken, and the new user
 * messages; for a regeneration, the stored messages before the regenerated answer. Throws
 * CONVERSATION_HISTORY_CONFLICT when the client's messages disagree.
 */
export function storedHistory(
  conversationId: string,
  storedMessages: readonly unknown[],
  sentMessages: readonly unknown[],
  request: TurnRequest = {},
): unknown[] {
  const all = storedMessages.map((m, i) =>
    isObject(m) ? asUiMessage(m as Message, i) : (m as Message),
  );
  const sent = sentMessages as readonly Message[];
  if (all.length === 0) return [...sent];
  const ids = new Set<unknown>(all.map((m) => m.id).filter((id) => typeof id === 'string'));
  const regenerate = request.trigger === 'regenerate-message';

  // Only the new user message (one the store does not hold: a resend is compared below).
  if (
    !regenerate &&
    sent.length === 1 &&
    sent[0]!.role === 'user' &&
    !ids.has(sent[0]!.id) &&
    !(all.length === 1 && agrees(storedMessages[0] as Message, sent[0]!))
  ) {
    return [...all, sent[0]];
  }

  // A regeneration of a stored message: the history ends before that answer.
  let n = all.length;
  if (regenerate && typeof request.messageId === 'string' && ids.has(request.messageId)) {
    const k = all.findIndex((m) => m.id === request.messageId);
    n = all[k]!.role === 'assistant' ? k : k + 1;
  }
  const raw = storedMessages as readonly Message[];
  const history: unknown[] = [];
  let j = 0;
  for (let i = 0; i < n; i++) {
    const stored = raw[i]!;
    const copy = sent[j];
    if (copy !== undefined) {
      const answered = i === all.length - 1 ? withApprovals(stored, copy) : null;
      if (answered || agrees(stored, copy)) {
        history.push(answered ?? all[i]);
        j++;
        continue;
      }
    }
    // An empty answer the client never received, or (regenerating) the answer to regenerate.
    if (isEmptyAnswer(stored)) {
      history.push(all[i]);
      continue;
    }
    if (regenerate && copy === undefined && stored.role === 'assistant') break;
    if (copy !== undefined) {
      throw historyConflict(conversationId, `${ordinal(i)} (${String(stored.role)}) differs`);
    }
    const last = sent.at(-1);
    if (last?.role === 'user' && typeof last.id === 'string' && all[i - 1]?.id === last.id) {
      throw historyConflict(
        conversationId,
        `${ordinal(i - 1)} (user) was answered already; send a new message, or regenerate the answer (trigger regenerate-message)`,
      );
    }
    throw historyConflict(
      conversationId,
      `${sent.length} messages were sent, the conversation holds ${all.length}`,
    );
  }
  const tail = sent.slice(j);
  if (tail.some((m) => !isObject(m) || m.role !== 'user')) {
    throw historyConflict(
      conversationId,
      'after the stored messages only new messages from the user may follow',
    );
  }
  return [...history, ...tail];
}
