// What one pgmcp instance tells the others sharing its state database, through PostgreSQL
// LISTEN/NOTIFY on that database: a session that changed or ended, a cancellation or a client's
// answer that landed on an instance other than the one the request runs on. One connection of
// its own listens (reconnecting when it is lost); a message is JSON, and one longer than a
// notification may carry is kept in pgmcp.cluster_messages and named by its row.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { driverUrl } from '../db/driver-url.js';
import type { StateDb } from './state-db.js';

export const CLUSTER_CHANNEL = 'pgmcp_cluster';
/** NOTIFY's payload limit is 8000 bytes; the envelope needs a few. */
const MAX_INLINE_BYTES = 7_000;
/** How long a large message's body is kept for the instances to read it. */
const KEEP_BODIES_MS = 5 * 60_000;
/** A message that does not come back to its sender within this is not waited for longer. */
const DELIVERY_WAIT_MS = 1_000;

export interface ClusterBus {
  /** This instance's id: messages carry it, and an instance ignores its own. */
  readonly instance: string;
  /**
   * Tell every other instance; resolves once the state database took the message, or with
   * `delivered` once it came back to this instance's own listener (or a second passed): by
   * then the database has sent it to every listener, so a client's next request, wherever it
   * lands, finds it there before it.
   */
  publish(message: Record<string, unknown>, options?: { delivered?: boolean }): Promise<void>;
  /** Called with every other instance's messages. Returns the unsubscribe. */
  subscribe(handler: (message: Record<string, unknown>, from: string) => void): () => void;
  close(): Promise<void>;
}

export interface ClusterBusOptions {
  /** state.url: the listening connection is opened there. */
  url: string;
  db: Pick<StateDb, 'query'>;
  logger: Logger;
  channel?: string;
}

export async function openClusterBus(options: ClusterBusOptions): Promise<ClusterBus> {
  const { db, logger } = options;
  const channel = options.channel ?? CLUSTER_CHANNEL;
  const instance = randomBytes(8).toString('hex');
  const handlers = new Set<(message: Record<string, unknown>, from: string) => void>();
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  // Messages of ours waiting to come back (publish with `delivered`), by their number.
  const echoes = new Map<number, () => void>();
  let sent = 0;

  const dispatch = async (payload: string): Promise<void> => {
    let envelope = JSON.parse(payload) as {
      i?: string;
      n?: number;
      m?: Record<string, unknown>;
      r?: string;
    };
    if (envelope.i === instance) {
      if (envelope.n !== undefined) echoes.get(envelope.n)?.();
      return;
    }
    if (envelope.r !== undefined) {
      const { rows } = await db.query<{ body: string }>(
        'SELECT body FROM pgmcp.cluster_messages WHERE id = $1',
        [envelope.r],
      );
      if (!rows[0]) return;
      envelope = JSON.parse(rows[0].body) as typeof envelope;
    }
    if (!envelope.m) return;
    for (const handler of handlers) handler(envelope.m, envelope.i ?? '');
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: driverUrl(options.url) });
    next.on('notification', (note) => {
      if (note.channel !== channel || note.payload === undefined) return;
      dispatch(note.payload).catch((error: unknown) =>
        logger.warn({ err: { message: String(error) } }, 'a message from another instance failed'),
      );
    });
    next.on('error', (error) => {
      logger.warn({ err: { message: error.message } }, 'the cluster listener lost its connection');
      lost(next);
    });
    next.on('end', () => lost(next));
    await next.connect();
    await next.query(`LISTEN ${channel}`);
    client = next;
  };

  const lost = (which: pg.Client): void => {
    if (client !== which || closed) return;
    client = null;
    which.end().catch(() => undefined);
    const again = (): void => {
      retry = null;
      if (closed) return;
      connect().catch((error: unknown) => {
        logger.warn({ err: { message: String(error) } }, 'the cluster listener cannot reconnect');
        retry = setTimeout(again, 2_000);
        retry.unref();
      });
    };
    retry = setTimeout(again, 500);
    retry.unref();
  };

  const send = async (n: number, message: Record<string, unknown>): Promise<void> => {
    const body = JSON.stringify({ i: instance, n, m: message });
    if (Buffer.byteLength(body) <= MAX_INLINE_BYTES) {
      await db.query('SELECT pg_notify($1, $2)', [channel, body]);
      return;
    }
    const { rows } = await db.query<{ id: string }>(
      'INSERT INTO pgmcp.cluster_messages (body) VALUES ($1) RETURNING id::text AS id',
      [body],
    );
    await db.query('SELECT pg_notify($1, $2)', [
      channel,
      JSON.stringify({ i: instance, n, r: rows[0]!.id }),
    ]);
    await db.query(
      'DELETE FROM pgmcp.cluster_messages WHERE created_at < now() - make_interval(secs => $1)',
      [KEEP_BODIES_MS / 1000],
    );
  };

  await connect();
  return {
    instance,
    async publish(message, options = {}) {
      const n = ++sent;
      let delivered: Promise<void> = Promise.resolve();
      if (options.delivered && client) {
        delivered = new Promise<void>((resolve) => {
          const timer = setTimeout(done, DELIVERY_WAIT_MS);
          function done(): void {
            clearTimeout(timer);
            echoes.delete(n);
            resolve();
          }
          echoes.set(n, done);
        });
      }
      await send(n, message);
      await delivered;
    },
    subscribe(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      for (const done of [...echoes.values()]) done();
      handlers.clear();
      const last = client;
      client = null;
      await last?.end().catch(() => undefined);
    },
  };
}
