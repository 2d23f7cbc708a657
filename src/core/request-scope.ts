// The request an async call chain serves: the HTTP layer opens the scope when a request
// arrives, and whatever runs for it (a log line, an audit record) can read the request id
// without the id being passed through every layer.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestScope {
  readonly requestId: string;
}

const storage = new AsyncLocalStorage<RequestScope>();

export function runInRequestScope<T>(scope: RequestScope, work: () => T): T {
  return storage.run(scope, work);
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
