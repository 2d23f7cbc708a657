// Small pieces the conformance fixtures share: pacing and readers for the answers a client gives to input requests.
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { JsonSchema } from '../../core/json-schema.js';
import type { InputRequest } from '../../core/specs.js';

/** Wait `ms`, or less if the call is cancelled: fixtures pace notifications, never block a cancel. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A form elicitation over a flat object of primitives. */
export function elicit(message: string, requestedSchema: JsonSchema): InputRequest {
  return { method: 'elicitation/create', params: { message, requestedSchema } };
}

/** A single-field form: `{ <field>: string }`, required. */
export function askForText(message: string, field: string): InputRequest {
  return elicit(message, {
    type: 'object',
    properties: { [field]: { type: 'string' } },
    required: [field],
  });
}

/** A sampling request with one user text message. */
export function sample(text: string, maxTokens: number): InputRequest {
  return {
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text } }], maxTokens },
  };
}

export const LIST_ROOTS: InputRequest = { method: 'roots/list', params: {} };

export interface ElicitAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content: Record<string, unknown> | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// The protocol layer should reject malformed inputResponses before a handler runs; these
// checks keep a fixture from reporting success on garbage if one slips through.
function malformed(key: string, expected: string): AppError {
  return new AppError(
    ErrorCodes.PROTOCOL_INVALID_PARAMS,
    `The input response "${key}" is not ${expected}.`,
    { category: 'input', details: { key } },
  );
}

export function readElicitation(key: string, answer: unknown): ElicitAnswer {
  if (!isRecord(answer)) throw malformed(key, 'an elicitation result');
  const { action, content } = answer;
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel') {
    throw malformed(key, 'an elicitation result (action must be accept, decline or cancel)');
  }
  if (content !== undefined && !isRecord(content)) throw malformed(key, 'an elicitation result');
  return { action, content };
}

/** The text of a sampling result (a single content block or a list of them). */
export function readSampledText(key: string, answer: unknown): string {
  if (!isRecord(answer)) throw malformed(key, 'a sampling result');
  const blocks = Array.isArray(answer.content) ? answer.content : [answer.content];
  const texts = blocks
    .filter(
      (b): b is { type: 'text'; text: string } =>
        isRecord(b) && b.type === 'text' && typeof b.text === 'string',
    )
    .map((b) => b.text);
  if (texts.length === 0) throw malformed(key, 'a sampling result with text content');
  return texts.join('\n');
}

export function readRootUris(key: string, answer: unknown): string[] {
  if (!isRecord(answer) || !Array.isArray(answer.roots)) throw malformed(key, 'a roots list');
  return answer.roots.map((root) => {
    if (!isRecord(root) || typeof root.uri !== 'string') throw malformed(key, 'a roots list');
    return root.uri;
  });
}

/** "action=accept, content={…}" — the summary format the elicitation fixtures report. */
export function describeElicitation(answer: ElicitAnswer): string {
  return `action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
}

/** A string field of accepted elicitation content, or undefined. */
export function acceptedText(answer: ElicitAnswer, field: string): string | undefined {
  if (answer.action !== 'accept') return undefined;
  const value = answer.content?.[field];
  return typeof value === 'string' ? value : undefined;
}

/** Keep only values starting with `prefix` (case-insensitive), capped at the MCP limit of 100. */
export function completeFrom(
  candidates: readonly string[],
  prefix: string,
): {
  values: string[];
  total: number;
  hasMore: boolean;
} {
  const needle = prefix.toLowerCase();
  const matches = candidates.filter((c) => c.toLowerCase().startsWith(needle));
  return { values: matches.slice(0, 100), total: matches.length, hasMore: matches.length > 100 };
}
