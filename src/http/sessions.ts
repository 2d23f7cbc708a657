// Legacy-era HTTP sessions: created by initialize, named by Mcp-Session-Id, ended by
// DELETE or after an idle period (clients often never DELETE).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Principal } from '../core/principal.js';
import { createOutbound, type Outbound } from '../mcp/outbound.js';
import { createSession, type InFlight, type Session } from '../mcp/session.js';
import { EventStore, SseStream } from './sse.js';

export const GET_STREAM_ID = 'g';
const MAX_SESSIONS = 10_000;

export interface HttpSession extends Session {
  readonly inFlight: InFlight;
  readonly outbound: Outbound;
  readonly store: EventStore;
  /** Logical SSE streams by id: POST responses in progress and the GET stream. */
  readonly streams: Map<string, SseStream>;
  readonly getStream: SseStream;
  /** Who opened it (principalKey): a session is only ever used by the caller who opened it. */
  readonly owner: string;
}

export interface SessionStore {
  create(owner: string, principal: Principal): HttpSession;
  /** Make a session visible by id (after a successful initialize). */
  register(session: HttpSession): void;
  get(id: string): HttpSession | undefined;
  delete(id: string): boolean;
  all(): Iterable<HttpSession>;
  readonly size: number;
  close(): void;
}

export function createSessionStore(options: {
  idleTimeoutMs: number;
  eventStoreSize: number;
  keepAliveMs: number;
  logger: Logger;
}): SessionStore {
  const sessions = new Map<string, HttpSession>();

  const end = (session: HttpSession, reason: string): void => {
    for (const controller of session.inFlight.values()) controller.abort(new Error(reason));
    session.outbound.closeAll(reason);
    for (const stream of session.streams.values()) stream.end(true);
    session.getStream.end(true);
  };

  const sweep = setInterval(
    () => {
      const cutoff = Date.now() - options.idleTimeoutMs;
      for (const [id, session] of sessions) {
        const busy = session.inFlight.size > 0 || session.getStream.connected;
        if (!busy && session.lastSeen < cutoff) {
          sessions.delete(id);
          end(session, 'session expired');
          options.logger.debug({ session: id }, 'idle session expired');
        }
      }
    },
    Math.min(60_000, Math.max(1_000, Math.floor(options.idleTimeoutMs / 2))),
  );
  sweep.unref();

  return {
    create(owner, principal) {
      const id = randomUUID();
      const store = new EventStore(options.eventStoreSize);
      const getStream = new SseStream(GET_STREAM_ID, store, options.keepAliveMs);
      const base = createSession(
        id,
        (method, params) => getStream.send({ jsonrpc: '2.0', method, params }),
        principal,
      );
      return Object.assign(base, {
        inFlight: new Map(),
        outbound: createOutbound(`s${id.slice(0, 8)}`),
        store,
        streams: new Map<string, SseStream>(),
        getStream,
        owner,
      });
    },
    register(session) {
      // Sessions cost memory and initialize needs no credentials yet: past the cap, the one
      // idle longest goes first.
      if (sessions.size >= MAX_SESSIONS) {
        let oldest: HttpSession | undefined;
        for (const s of sessions.values()) if (!oldest || s.lastSeen < oldest.lastSeen) oldest = s;
        if (oldest) {
          sessions.delete(oldest.id);
          end(oldest, 'session evicted');
        }
      }
      sessions.set(session.id, session);
    },
    get(id) {
      const session = sessions.get(id);
      if (session) session.lastSeen = Date.now();
      return session;
    },
    delete(id) {
      const session = sessions.get(id);
      if (!session) return false;
      sessions.delete(id);
      end(session, 'session deleted');
      return true;
    },
    all: () => sessions.values(),
    get size() {
      return sessions.size;
    },
    close() {
      clearInterval(sweep);
      for (const session of sessions.values()) end(session, 'server shutting down');
      sessions.clear();
    },
  };
}
