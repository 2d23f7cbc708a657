// What a transport hands the dispatcher with each incoming request.
import type { Principal } from '../core/principal.js';
import type { InFlight, Session } from './session.js';

export interface Exchange {
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
   * The era the transport already knows (HTTP: a modern MCP-Protocol-Version header), so a
   * modern request with a broken _meta is judged by modern rules. Otherwise from _meta.
   */
  era?: 'legacy' | 'modern';
  /**
   * Close the connection carrying this request's stream without ending the stream (legacy
   * SSE polling); the client resumes it. Absent where impossible.
   */
  disconnect?(retryMs?: number): boolean;
  /** Aborted by the transport (modern era: the client closed the response stream). */
  signal?: AbortSignal;
}
