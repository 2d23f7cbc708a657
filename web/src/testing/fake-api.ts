// For component tests: a fetch that answers /api routes from a table of handlers, recording
// each request. Chat answers are real UI message streams made by the AI SDK itself.
import { createUIMessageStream, createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { vi } from 'vitest';

export interface Recorded {
  method: string;
  path: string;
  headers: Headers;
  body: unknown;
  /** The request's abort signal (useChat's stop). */
  signal?: AbortSignal;
}

export type Handler = (request: Recorded) => Response | Promise<Response>;

export const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** A /api/chat answer streaming these chunks (start and finish added). */
export function streamOf(chunks: UIMessageChunk[], metadata?: Record<string, unknown>): Response {
  const stream = createUIMessageStream({
    execute({ writer }) {
      writer.write({ type: 'start' });
      for (const chunk of chunks) writer.write(chunk);
      writer.write({ type: 'finish', ...(metadata ? { messageMetadata: metadata } : {}) });
    },
  });
  return createUIMessageStreamResponse({ stream });
}

export function installFakeApi(routes: Record<string, Handler>) {
  const requests: Recorded[] = [];
  const fetchImpl = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = new URL(String(input), 'http://pgmcp.test');
    const method = (init.method ?? 'GET').toUpperCase();
    const text = typeof init.body === 'string' ? init.body : null;
    const recorded: Recorded = {
      method,
      path: url.pathname + url.search,
      headers: new Headers(init.headers),
      body: text ? JSON.parse(text) : null,
      ...(init.signal ? { signal: init.signal } : {}),
    };
    requests.push(recorded);
    const handler =
      routes[`${method} ${url.pathname + url.search}`] ?? routes[`${method} ${url.pathname}`];
    if (!handler) return json(404, { error: `no such endpoint: ${method} ${url.pathname}` });
    return handler(recorded);
  });
  vi.stubGlobal('fetch', fetchImpl);
  return { requests, fetch: fetchImpl };
}
