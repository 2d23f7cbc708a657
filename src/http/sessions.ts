// Legacy-era HTTP sessions: created by initialize, named by Mcp-Session-Id, ended by
// DELETE or after an idle period (clients often never DELETE). With a PostgreSQL state
// database they are shared (session-sharing.ts): any instance serves a session another one
// created, loading it on first use; a session this instance holds costs no state round trip.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Principal } from '../core/principal.js';
import { createOutbound, type Outbound } from '../mcp/outbound.js';
import { createSession, type InFlight, type Session } from '../mcp/session.js';
import { createSharing, type Sharing, type SharingOptions } from './session-sharing.js';
import { EventStore, SseStream, type StoredEvent } from './sse.js';

export const GET_STREAM_ID = 'g';
/** The bound of the sessions held in memory (the local cache, when they are shared). */
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
  /** Make a session visible by id (after a successful initialize), on every instance. */
  register(session: HttpSession): Promise<void>;
  /**
   * The session `id` of the caller `owner`: held here, else (shared) loaded from the state
   * database and held from then on. Undefined when it is unknown, expired or someone else's.
   * Throws when the state database cannot be asked.
   */
  find(id: string, owner: string, principal: Principal): Promise<HttpSession | undefined>;
  /** After a message was handled: what changed in the session reaches the other instances. */
  keep(session: HttpSession): Promise<void>;
  /** A notifications/cancelled for a request this instance does not run. */
  forwardCancel(session: HttpSession, requestId: string | number, reason: unknown): Promise<void>;
  /** A client's answer to a server→client request this instance is not waiting for. */
  forwardAnswer(session: HttpSession, message: Record<string, unknown>): Promise<void>;
  /** Ends the session, on every instance. */
  delete(id: string): Promise<boolean>;
  /**
   * A response stream this instance never held, as the instance that sent it kept it: its
   * events after `seq` and whether it ended; null when sessions are not shared.
   */
  sharedEvents(
    session: HttpSession,
    streamId: string,
    seq: number,
  ): Promise<{ events: StoredEvent[]; finished: boolean }> | null;
  /** Whether the session is still held here (not ended or expired meanwhile). */
  holds(session: HttpSession): boolean;
  all(): Iterable<HttpSession>;
  readonly size: number;
  close(): Promise<void>;
}

export interface SessionStoreOptions {
  idleTimeoutMs: number;
  eventStoreSize: number;
  keepAliveMs: number;
  logger: Logger;
  /** Sessions shared with the other instances on the state database; absent: this process only. */
  sharing?: Omit<SharingOptions, 'idleTimeoutMs' | 'logger' | 'local'> | null;
}

export function createSessionStore(options: SessionStoreOptions): SessionStore {
  const sessions = new Map<string, HttpSession>();

  /** Ends what this instance holds of a session: its requests, streams and waiting calls. */
  const end = (session: HttpSession, reason: string): void => {
    sessions.delete(session.id);
    sharing?.forget(session);
    for (const controller of session.inFlight.values()) controller.abort(new Error(reason));
    session.outbound.closeAll(reason);
    for (const stream of session.streams.values()) stream.end(true);
    session.getStream.end(true);
  };

  /** Holds a session here; past the cap, the one idle longest goes first. */
  const hold = (session: HttpSession): void => {
    if (sessions.size >= MAX_SESSIONS) {
      let oldest: HttpSession | undefined;
      for (const s of sessions.values()) if (!oldest || s.lastSeen < oldest.lastSeen) oldest = s;
      if (oldest) end(oldest, 'session evicted');
    }
    sessions.set(session.id, session);
    sharing?.held(session);
  };

  const create = (id: string, owner: string, principal: Principal): HttpSession => {
    // A response stream's events are kept for other instances too; the GET stream's are not
    // (each instance has its own, and a GET resumed elsewhere simply opens that one's).
    const mirror = sharing?.mirror(id);
    const store = new EventStore(
      options.eventStoreSize,
      undefined,
      mirror
        ? {
            add: (event) => event.streamId !== GET_STREAM_ID && mirror.add(event),
            finish: (streamId) => streamId !== GET_STREAM_ID && mirror.finish(streamId),
          }
        : null,
    );
    const getStream = new SseStream(GET_STREAM_ID, store, options.keepAliveMs);
    const base = createSession(
      id,
      (method, params) => getStream.send({ jsonrpc: '2.0', method, params }),
      principal,
    );
    return Object.assign(base, {
      inFlight: new Map(),
      // Ids of server→client requests name the instance too: an answer may land on another.
      outbound: createOutbound(`s${id.slice(0, 8)}${sharing?.tag ?? ''}`),
      store,
      streams: new Map<string, SseStream>(),
      getStream,
      owner,
    });
  };

  const sharing: Sharing | null = options.sharing
    ? createSharing({
        ...options.sharing,
        idleTimeoutMs: options.idleTimeoutMs,
        logger: options.logger,
        local: {
          get: (id) => sessions.get(id),
          end: (session, reason) => end(session, reason),
        },
      })
    : null;

  const sweep = setInterval(
    () => {
      const cutoff = Date.now() - options.idleTimeoutMs;
      for (const session of [...sessions.values()]) {
        const busy = session.inFlight.size > 0 || session.getStream.connected;
        // A session busy here is alive for the other instances too.
        if (busy) sharing?.alive(session);
        else if (session.lastSeen < cutoff) {
          end(session, 'session expired');
          options.logger.debug({ session: session.id }, 'idle session expired');
        }
      }
      sharing?.sweep();
    },
    Math.min(60_000, Math.max(1_000, Math.floor(options.idleTimeoutMs / 2))),
  );
  sweep.unref();

  return {
    create: (owner, principal) => create(randomUUID(), owner, principal),
    async register(session) {
      hold(session);
      await sharing?.saved(session);
    },
    async find(id, owner, principal) {
      const held = sessions.get(id);
      if (held) {
        if (held.owner !== owner) return undefined;
        held.lastSeen = Date.now();
        sharing?.alive(held);
        return held;
      }
      if (!sharing) return undefined;
      const record = await sharing.load(id);
      if (!record || record.owner !== owner) return undefined;
      // Another request may have loaded it meanwhile: one copy per instance.
      const raced = sessions.get(id);
      if (raced) return raced;
      const session = create(id, owner, principal);
      sharing.apply(session, record);
      hold(session);
      return session;
    },
    keep: async (session) => sharing?.changed(session),
    forwardCancel: async (session, requestId, reason) =>
      sharing?.publish(session, { t: 'cancel', id: requestId, reason: String(reason ?? '') }),
    forwardAnswer: async (session, message) =>
      sharing?.publish(session, { t: 'answer', m: message }),
    async delete(id) {
      const session = sessions.get(id);
      if (session) end(session, 'session deleted');
      await sharing?.ended(id);
      return session !== undefined || sharing !== null;
    },
    sharedEvents: (session, streamId, seq) =>
      sharing ? sharing.eventsAfter(session.id, streamId, seq) : null,
    holds: (session) => sessions.get(session.id) === session,
    all: () => sessions.values(),
    get size() {
      return sessions.size;
    },
    async close() {
      clearInterval(sweep);
      for (const session of [...sessions.values()]) end(session, 'server shutting down');
      await sharing?.close();
    },
  };
}
