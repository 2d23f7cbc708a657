// What goes wrong talking to a model, in plain words and without secrets. A provider's own
// message may quote part of a key ("Incorrect API key provided: sk-…abcd"); every message that
// leaves this layer is cleaned of the configured keys and of anything shaped like a key.
import { APICallError, RetryError } from 'ai';
import { AppError, ErrorCodes, isAppError } from '../core/errors.js';

// Shapes of provider keys (OpenAI, Anthropic, Google), masked or not.
const KEY_SHAPES = [
  /\bsk-[A-Za-z0-9_*.-]{6,}/g,
  /\bAIza[A-Za-z0-9_*-]{10,}/g,
  /\b(?:bearer|x-api-key|api[_-]?key|key)[=: ]+[A-Za-z0-9_*.-]{12,}/gi,
];

/** `text` without the given secrets and anything shaped like an API key. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  for (const shape of KEY_SHAPES) out = out.replace(shape, '[redacted]');
  return out;
}

/** The provider's own reason, from its error body when it sent one. */
function providerReason(error: APICallError): string {
  const data = error.data as
    { error?: { message?: unknown } | string; message?: unknown } | undefined;
  const nested = typeof data?.error === 'object' ? data.error?.message : data?.error;
  const reason =
    typeof nested === 'string'
      ? nested
      : typeof data?.message === 'string'
        ? data.message
        : error.message;
  return reason.length > 500 ? `${reason.slice(0, 500)}…` : reason;
}

/**
 * Any failure of a model call as an AppError with a message a person can act on: the
 * provider's status and reason (LLM_PROVIDER_FAILED), or the AppError it already was.
 */
export function providerFailure(
  error: unknown,
  provider: string,
  secrets: readonly string[],
): AppError {
  if (isAppError(error)) return error;
  const last = RetryError.isInstance(error) ? error.lastError : error;
  if (APICallError.isInstance(last)) {
    const status = last.statusCode;
    const what =
      status === 401 || status === 403
        ? 'refused the API key'
        : status === 404
          ? 'does not know that model or endpoint'
          : status === 429
            ? 'is rate limiting this server'
            : status === undefined
              ? 'could not be reached'
              : `answered ${status}`;
    return new AppError(
      ErrorCodes.LLM_PROVIDER_FAILED,
      scrubSecrets(`The model provider ${provider} ${what}: ${providerReason(last)}`, secrets),
      { category: 'unavailable', details: { provider, status: status ?? null } },
    );
  }
  const message = last instanceof Error ? last.message : String(last);
  return new AppError(
    ErrorCodes.LLM_PROVIDER_FAILED,
    scrubSecrets(`The model call to ${provider} failed: ${message}`, secrets),
    { category: 'unavailable', details: { provider } },
  );
}

export const chatInvalid = (message: string): AppError =>
  new AppError(ErrorCodes.CHAT_INVALID, message, { category: 'input' });
