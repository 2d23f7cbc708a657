// What every stage of the MCP endpoint may need: the parts registerMcpRoutes was given.
import type { Logger } from 'pino';
import type { Dispatcher } from '../../mcp/dispatcher.js';
import type { OAuthDiscovery } from '../oauth-discovery.js';
import type { SessionStore } from '../sessions.js';
import type { StreamWatch } from '../stream-watch.js';

export interface McpEndpoint {
  readonly dispatcher: Dispatcher;
  readonly sessions: SessionStore;
  readonly logger: Logger;
  /** How often an open SSE stream sends a keep-alive comment. */
  readonly keepAliveMs: number;
  /** With OAuth: challenges name the protected resource metadata and the scope to ask for. */
  readonly discovery: OAuthDiscovery | null;
  /** Closes the SSE streams of a credential that is revoked, expired or ended. */
  readonly streamWatch: StreamWatch | null;
}

/** The retry a resumable stream tells the client to wait before it reconnects. */
export const RETRY_MS = 1000;
