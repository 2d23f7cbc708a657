// The part of the session store that keeps legacy sessions shared between instances: the record
// in the state database (state/mcp-session-share.ts) and the messages on the cluster bus
// (state/cluster-bus.ts). What a session negotiated or chose is written when it changes; its
// last use at most every few seconds; an instance holding a session hears when another one
// changed or ended it, and runs the cancellations and client answers meant for its requests.
import type { Logger } from 'pino';
import type { LogLevel } from '../core/specs.js';
import type { ClusterBus } from '../state/cluster-bus.js';
import {
  sessionKey,
  type SessionRecord,
  type SessionShare,
  type SharedEvent,
} from '../state/mcp-session-share.js';
import type { HttpSession } from './sessions.js';
import type { EventMirror, StoredEvent } from './sse.js';

/** How long a response stream's events stay resumable on another instance. */
export const SHARED_EVENTS_MS = 5 * 60_000;
/** A holder that has not applied a change by then is taken off the session's holders. */
const ACK_WAIT_MS = 1_000;

export interface SharingOptions {
  share: SessionShare;
  /** Absent: the record is shared, but nothing tells the instances holding a session. */
  bus: ClusterBus | null;
  idleTimeoutMs: number;
  logger: Logger;
  /** The sessions this instance holds. */
  local: {
    get(id: string): HttpSession | undefined;
    end(session: HttpSession, reason: string): void;
  };
}

export interface Sharing {
  /** A few characters of the instance id (server→client request ids carry them). */
  readonly tag: string;
  load(id: string): Promise<SessionRecord | null>;
  apply(session: HttpSession, record: SessionRecord): void;
  held(session: HttpSession): void;
  forget(session: HttpSession): void;
  /** A new session: written before its initialize is answered. */
  saved(session: HttpSession): Promise<void>;
  /** Written (and announced) when what is kept of it changed; a no-op otherwise. */
  changed(session: HttpSession): Promise<void>;
  /** Used now: the record's last use moves forward, at most every few seconds. */
  alive(session: HttpSession): void;
  ended(id: string): Promise<void>;
  publish(session: HttpSession, message: Record<string, unknown>): Promise<void>;
  sweep(): void;
  /** Where the events of session `id`'s response streams are also written. */
  mirror(id: string): EventMirror;
  /** A stream's events after `seq` as another instance kept them, and whether it ended. */
  eventsAfter(
    id: string,
    streamId: string,
    seq: number,
  ): Promise<{ events: StoredEvent[]; finished: boolean }>;
  close(): Promise<void>;
}

/** What is kept of a session, in a form two snapshots compare by. */
function recordOf(session: HttpSession): SessionRecord {
  return {
    owner: session.owner,
    protocolVersion: session.protocolVersion,
    clientCapabilities: session.clientCapabilities,
    clientInfo: session.clientInfo,
    logLevel: session.logLevel,
    database: session.database,
    subscriptions: [...session.subscriptions].sort(),
  };
}

export function createSharing(options: SharingOptions): Sharing {
  const { share, bus, logger, local } = options;
  // A session's record is written when it changed; `kept` is what was written (or read) last.
  const kept = new WeakMap<HttpSession, string>();
  const touched = new WeakMap<HttpSession, number>();
  const byKey = new Map<string, string>();
  const keyOf = new WeakMap<HttpSession, string>();
  // The record's last use lags the real one by at most this; expiry allows for it.
  const touchEveryMs = Math.max(1, Math.min(10_000, Math.floor(options.idleTimeoutMs / 4)));

  const failed = (what: string) => (error: unknown) =>
    logger.warn({ err: { message: String(error) } }, `shared session: ${what} failed`);

  const announce = (session: HttpSession, message: Record<string, unknown>): Promise<void> =>
    bus
      ? bus.publish({ ...message, s: keyOf.get(session) ?? sessionKey(session.id) })
      : Promise.resolve();

  const apply = (session: HttpSession, record: SessionRecord): void => {
    session.protocolVersion = record.protocolVersion;
    session.clientCapabilities = record.clientCapabilities;
    session.clientInfo = record.clientInfo;
    session.logLevel = record.logLevel as LogLevel | null;
    session.database = record.database;
    session.subscriptions.clear();
    for (const uri of record.subscriptions) session.subscriptions.add(uri);
    kept.set(session, JSON.stringify(recordOf(session)));
  };

  const heldBy = (key: unknown): HttpSession | undefined => {
    const id = typeof key === 'string' ? byKey.get(key) : undefined;
    return id === undefined ? undefined : local.get(id);
  };

  const me = bus?.instance ?? 'local';
  // Changes of ours waiting for the other holders to apply them, by change number.
  const changes = new Map<number, { waiting: Set<string>; done(): void }>();
  let changeCount = 0;

  /** Tell the other holders of `session` its new record; resolves once each applied it. */
  const spread = async (
    session: HttpSession,
    record: SessionRecord,
    holders: string[],
  ): Promise<void> => {
    const others = holders.filter((h) => h !== me);
    if (!bus || others.length === 0) return;
    const change = ++changeCount;
    const applied = new Promise<void>((resolve) => {
      const waiting = new Set(others);
      const timer = setTimeout(() => {
        // Gone, or dropped its copy without saying so: no longer waited for.
        share.release(session.id, [...waiting]).catch(failed('release'));
        finish();
      }, ACK_WAIT_MS);
      function finish(): void {
        clearTimeout(timer);
        changes.delete(change);
        resolve();
      }
      changes.set(change, { waiting, done: finish });
    });
    await announce(session, { t: 'changed', r: record, c: change });
    await applied;
  };

  const onMessage = (message: Record<string, unknown>, from: string): void => {
    if (message['t'] === 'applied') {
      const change = changes.get(message['c'] as number);
      if (message['to'] !== me || !change) return;
      change.waiting.delete(from);
      if (change.waiting.size === 0) change.done();
      return;
    }
    const session = heldBy(message['s']);
    if (!session) return;
    switch (message['t']) {
      case 'changed': {
        // The record travels with the message: applying it costs no round trip. The sender
        // answers its client once every holder said it applied the change.
        const record = message['r'] as SessionRecord | undefined;
        if (record && record.owner === session.owner) apply(session, record);
        bus
          ?.publish({ t: 'applied', s: message['s'], c: message['c'], to: from })
          .catch(failed('acknowledge'));
        return;
      }
      case 'ended':
        local.end(session, 'session deleted');
        return;
      case 'cancel': {
        const id = message['id'];
        if (typeof id === 'string' || typeof id === 'number') {
          const reason = String(message['reason'] || 'cancelled by the client');
          session.inFlight.get(id)?.abort(new Error(reason));
        }
        return;
      }
      case 'answer': {
        const answer = message['m'];
        if (answer && typeof answer === 'object') {
          session.outbound.settle(answer as Record<string, unknown>);
        }
        return;
      }
    }
  };
  const unsubscribe = bus?.subscribe(onMessage) ?? null;
  let closing = false;

  // Events are written in batches, after the turn that sent them: a stream costs no round trip
  // per event, and a client reconnecting elsewhere waits for them (get-stream.ts follows).
  const pendingEvents = new Map<string, SharedEvent[]>();
  let flushing: NodeJS.Immediate | null = null;
  const flush = (): void => {
    flushing = null;
    for (const [id, events] of pendingEvents) {
      share.appendEvents(id, events).catch(failed('keeping stream events'));
    }
    pendingEvents.clear();
  };
  const queue = (id: string, event: SharedEvent): void => {
    const list = pendingEvents.get(id);
    if (list) list.push(event);
    else pendingEvents.set(id, [event]);
    flushing ??= setImmediate(flush);
  };

  return {
    tag: bus?.instance.slice(0, 6) ?? '',
    load: (id) => share.load(id, options.idleTimeoutMs + touchEveryMs, me),
    apply,
    held(session) {
      const key = sessionKey(session.id);
      byKey.set(key, session.id);
      keyOf.set(session, key);
      touched.set(session, Date.now());
    },
    forget(session) {
      const key = keyOf.get(session);
      if (key !== undefined && byKey.get(key) === session.id) byKey.delete(key);
      if (!closing) share.release(session.id, [me]).catch(failed('release'));
    },
    async saved(session) {
      const record = recordOf(session);
      await share.save(session.id, record, me);
      kept.set(session, JSON.stringify(record));
    },
    async changed(session) {
      const record = recordOf(session);
      const text = JSON.stringify(record);
      if (kept.get(session) === text) return;
      kept.set(session, text);
      const holders = await share.save(session.id, record, me);
      touched.set(session, Date.now());
      // Answered once every instance holding a copy applied the change: the client's next
      // request, wherever it lands, finds it there.
      await spread(session, record, holders);
    },
    alive(session) {
      const now = Date.now();
      if (now - (touched.get(session) ?? 0) < touchEveryMs) return;
      touched.set(session, now);
      share.touch(session.id).catch(failed('touch'));
    },
    async ended(id) {
      await share.remove(id);
      if (bus) await bus.publish({ t: 'ended', s: sessionKey(id) }, { delivered: true });
    },
    publish: (session, message) => announce(session, message),
    sweep() {
      share.sweep(options.idleTimeoutMs + touchEveryMs, SHARED_EVENTS_MS).catch(failed('expiry'));
    },
    mirror: (id) => ({
      add: (event) => queue(id, event),
      finish: (streamId) => queue(id, { streamId, seq: 0, data: '', finished: true }),
    }),
    eventsAfter: (id, streamId, seq) => share.eventsAfter(id, streamId, seq),
    async close() {
      closing = true;
      for (const change of [...changes.values()]) change.done();
      if (flushing) clearImmediate(flushing);
      flush();
      unsubscribe?.();
      await bus?.close();
    },
  };
}
