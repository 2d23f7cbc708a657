// The terminal client's view of a pgmcp's /api: JSON requests with the bearer token, and every
// failure turned into one readable line (ChatClientError), never a stack trace.

export class ChatClientError extends Error {
  override name = 'ChatClientError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface ApiClient {
  /** The server's base URL, without a trailing slash (e.g. http://127.0.0.1:8080). */
  readonly baseUrl: string;
  /** The headers every request carries (the bearer token when there is one). */
  headers(): Record<string, string>;
  setToken(token: string | null): void;
  hasToken(): boolean;
  get<T>(path: string): Promise<T>;
  send<T>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

/** `{"error": "…"}` bodies (and the pgEdge agent's `{success:false,error}`) to their message. */
export function errorMessageOf(body: string, status?: number): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    if (typeof parsed.error === 'string' && parsed.error !== '') return parsed.error;
    if (typeof parsed.message === 'string' && parsed.message !== '') return parsed.message;
  } catch {
    // not JSON: the text itself, on one line
  }
  const text = body.replace(/\s+/g, ' ').trim().slice(0, 300);
  if (text !== '') return text;
  return status ? `the server answered ${status}` : 'the server sent no answer';
}

/** A fetch failure (refused, reset, bad name) as one line naming the server. */
export function networkMessage(baseUrl: string, error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return `cannot reach ${baseUrl}: ${why}`;
}

export function createApiClient(baseUrl: string, token: string | null): ApiClient {
  const base = baseUrl.replace(/\/+$/, '');
  let bearer = token;
  const headers = (): Record<string, string> =>
    bearer ? { authorization: `Bearer ${bearer}` } : {};
  const request = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...headers(),
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new ChatClientError(networkMessage(base, error));
    }
    const text = await response.text();
    if (!response.ok) {
      throw new ChatClientError(errorMessageOf(text, response.status), response.status);
    }
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ChatClientError(`${method} ${path}: the server's answer is not JSON`);
    }
  };
  return {
    baseUrl: base,
    headers,
    setToken(next) {
      bearer = next;
    },
    hasToken: () => bearer !== null,
    get: (path) => request('GET', path),
    send: (method, path, body) => request(method, path, body),
  };
}
