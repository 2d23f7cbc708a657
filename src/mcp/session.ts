// Per-connection state the legacy era needs: the negotiated version and capabilities,
// the log level, resource subscriptions and the requests in flight (for cancellation).
import type { Principal } from '../core/principal.js';
import type { LogLevel } from '../core/specs.js';
import type { JsonRpcId } from './jsonrpc.js';

export interface Session {
  readonly id: string;
  protocolVersion: string | null;
  clientCapabilities: Record<string, unknown>;
  clientInfo: Record<string, unknown> | null;
  /** null: the client never set a level; messages at 'info' and above are sent. */
  logLevel: LogLevel | null;
  /** The database this session selected (several configured); null: none selected. */
  database: string | null;
  readonly subscriptions: Set<string>;
  /** Who uses it: notifications about a database reach only sessions of its users. */
  readonly principal: Principal;
  /** Deliver a notification that belongs to no request (GET stream on HTTP, stdout on stdio). */
  notify(method: string, params: Record<string, unknown>): void;
  lastSeen: number;
  /** Lives for one request only (a legacy request without Mcp-Session-Id): nothing is kept. */
  readonly oneRequest?: boolean;
}

export function createSession(
  id: string,
  notify: (method: string, params: Record<string, unknown>) => void,
  principal: Principal,
): Session {
  return {
    id,
    protocolVersion: null,
    clientCapabilities: {},
    clientInfo: null,
    logLevel: null,
    database: null,
    subscriptions: new Set(),
    principal,
    notify,
    lastSeen: Date.now(),
  };
}

/** Requests in flight on one connection or session, so notifications/cancelled can stop them. */
export type InFlight = Map<JsonRpcId, AbortController>;
