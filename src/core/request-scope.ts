// The request an async call chain serves: the HTTP layer opens the scope when a request
// arrives, and whatever runs for it (a log line, an audit record) can read the request id
// without the id being passed through every layer.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestScope {
  readonly requestId: string;
}

/** The scope as kept: the request and the database server that answered its last call. */
interface KeptScope {
  /** Null in a scope of noteServersOf opened outside a request. */
  requestId: string | null;
  server: string | null;
}

const storage = new AsyncLocalStorage<KeptScope>();

export function runInRequestScope<T>(scope: RequestScope, work: () => T): T {
  return storage.run({ ...scope, server: null }, work);
}

/** A database call of this request runs on `server` (`host:port`): the last one is reported. */
export function noteServer(server: string | null): void {
  const scope = storage.getStore();
  if (scope && server !== null) scope.server = server;
}

/**
 * Runs `work` noting the server of its database calls apart (a tool call, inside a request or
 * not: the chat agent's run outside one); `server()` says which answered its last call. The
 * enclosing request hears of it too, for its Server-Timing.
 */
export async function noteServersOf<T>(
  work: () => Promise<T>,
): Promise<{ result: T; server: () => string | null }> {
  const outer = storage.getStore();
  const scope: KeptScope = { requestId: outer?.requestId ?? null, server: null };
  const server = (): string | null => scope.server;
  try {
    return { result: await storage.run(scope, work), server };
  } finally {
    if (outer && scope.server !== null) outer.server = scope.server;
  }
}

/** The server (`host:port`) that answered this request's last database call, if any. */
export function answeringServer(): string | null {
  return storage.getStore()?.server ?? null;
}

/** The id of the request being served, or null outside one (start-up, timers, stdio). */
export function currentRequestId(): string | null {
  return storage.getStore()?.requestId ?? null;
}

/** A request id a client or proxy sent may be used as is only when it is short and plain. */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id to serve a request under: the trusted one given, else a new one. */
export function requestIdFrom(given: string | undefined): string {
  return given !== undefined && ACCEPTED_ID.test(given) ? given : randomUUID();
}
