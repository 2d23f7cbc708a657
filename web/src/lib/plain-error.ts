// Server failures in words a person can act on. The server's own message is kept when it says
// more than the status does (a refused statement, a database that is down).

/** A failed /api call: the HTTP status (0: no answer at all) and the message to show. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

const BY_STATUS: Record<number, string> = {
  401: 'You are not signed in, or your session has ended. Sign in again.',
  403: 'You are not allowed to do that.',
  404: 'That was not found on the server.',
  408: 'The server took too long to answer. Try again.',
  413: 'The request is too large for the server.',
  429: 'Too many requests in a short time. Wait a moment, then try again.',
  500: 'The server hit an unexpected problem. Try again; if it persists, check the server log.',
  502: 'The server could not reach a service it needs. Try again shortly.',
  503: 'The database or a service it needs is unavailable right now. Try again shortly.',
  504: 'The query took too long and was stopped (statement timeout). Narrow it down and try again.',
};

/** Pulls `{error}` (or `{message}`) out of a JSON body; otherwise the trimmed text. */
export function messageOfBody(body: string): string | null {
  const text = body.trim();
  if (text === '') return null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') {
      const record = parsed as Record<string, unknown>;
      for (const key of ['error', 'message', 'errorText']) {
        const value = record[key];
        if (typeof value === 'string' && value !== '') return value;
        if (
          value &&
          typeof value === 'object' &&
          typeof (value as { message?: unknown }).message === 'string'
        ) {
          return (value as { message: string }).message;
        }
      }
    }
    return null;
  } catch {
    // An HTML error page from a proxy is not worth showing.
    return text.startsWith('<') ? null : text.slice(0, 500);
  }
}

export function plainMessage(status: number, serverMessage: string | null): string {
  if (status === 0)
    return 'Cannot reach the pgmcp server. Check that it is running and your network.';
  const general = BY_STATUS[status] ?? `The server answered with an error (HTTP ${status}).`;
  if (status === 401 || status === 429 || !serverMessage) return general;
  return serverMessage;
}

export async function failureOf(response: Response): Promise<ApiFailure> {
  const body = await response.text().catch(() => '');
  return new ApiFailure(response.status, plainMessage(response.status, messageOfBody(body)));
}

/** Any thrown value as a sentence; stream errors arrive as plain Errors with the server's words. */
export function describeError(error: unknown): string {
  if (error instanceof ApiFailure) return error.message;
  if (error instanceof TypeError) return plainMessage(0, null);
  if (error instanceof Error) return messageOfBody(error.message) ?? error.message;
  return String(error);
}
