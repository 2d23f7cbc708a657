// Every call to the pgmcp REST API goes through here: the bearer token, JSON in and out, and
// failures as ApiFailure in plain words. A 401 tells the app the session is gone.
import { ApiFailure, failureOf } from './plain-error';
import { authHeaders } from './session';

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

export function onUnauthorized(listener: Listener): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

export function reportUnauthorized(): void {
  for (const listener of unauthorizedListeners) listener();
}

/** fetch with the session's bearer; a non-2xx answer throws an ApiFailure. */
export async function apiFetch(input: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(authHeaders())) {
    if (!headers.has(name)) headers.set(name, value);
  }
  let response: Response;
  try {
    response = await fetch(input, { ...init, headers });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiFailure(
      0,
      'Cannot reach the pgmcp server. Check that it is running and your network.',
    );
  }
  if (!response.ok) {
    const failure = await failureOf(response);
    if (response.status === 401) reportUnauthorized();
    throw failure;
  }
  return response;
}

export async function apiJson<T>(path: string, method = 'GET', body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers = { ...init.headers, 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const response = await apiFetch(path, init);
  const text = await response.text();
  return (text === '' ? {} : JSON.parse(text)) as T;
}
