// The per-request handle a transport gives the dispatcher: who is asking, and how to talk
// back on that request's own stream. (The audit of answered requests is the "exchange log".)
import type { Principal } from '../core/principal.js';
import type { InFlight, Session } from './session.js';

export interface RequestChannel {
  /** The legacy-era session (stdio: the process's; HTTP: from Mcp-Session-Id); null in the modern era. */
  session: Session | null;
  principal: Principal;
  /** Where the request registers so notifications/cancelled can stop it; null where cancellation is by closing the stream. */
  inFlight: InFlight | null;
  /** Send a notification tied to this request (progress, log) on the request's own stream. */
  notify(method: string, params: Record<string, unknown>): void;
  /** Send a server→client request tied to this request and wait for the client's result. */
  request(method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<unknown>;
  /**
   * Close the connection carrying this request's stream without ending the stream (legacy
   * SSE polling); the client resumes it. Absent where impossible.
   */
  disconnect?(retryMs?: number): boolean;
  /** Where the stage timings a handler reports go (HTTP: the Server-Timing header). */
  timing?(stage: string, durationMs: number): void;
  /**
   * Aborted by the transport (modern era: the client closed the response stream, or the
   * credential it was opened with lapsed; then the reason is the RpcError to answer with).
   */
  signal?: AbortSignal;
}
