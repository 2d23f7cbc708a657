// The messages between instances over Redis pub/sub (cluster.redis) instead of the state
// database's LISTEN/NOTIFY: the same envelope and rules as cluster-bus.ts. One connection of
// its own subscribes (ioredis resubscribes after a reconnect); the other publishes. A message
// has no size limit here, so none is kept aside.
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ClusterBus } from './cluster-bus.js';

/** A message that does not come back to its sender within this is not waited for longer. */
const DELIVERY_WAIT_MS = 1_000;

export async function openRedisClusterBus(options: {
  /** The connection that publishes; a duplicate of it subscribes. */
  redis: Redis;
  channel: string;
  logger: Logger;
}): Promise<ClusterBus> {
  const { redis, channel, logger } = options;
  const instance = randomBytes(8).toString('hex');
  const handlers = new Set<(message: Record<string, unknown>, from: string) => void>();
  const echoes = new Map<number, () => void>();
  let sent = 0;
  const listener = redis.duplicate();
  listener.on('error', (error: Error) =>
    logger.warn({ err: { message: error.message } }, 'the cluster listener (Redis) failed'),
  );
  listener.on('message', (from: string, payload: string) => {
    if (from !== channel) return;
    try {
      const envelope = JSON.parse(payload) as { i?: string; n?: number; m?: unknown };
      if (envelope.i === instance) {
        if (envelope.n !== undefined) echoes.get(envelope.n)?.();
        return;
      }
      const message = envelope.m;
      if (!message || typeof message !== 'object') return;
      for (const handler of handlers) handler(message as Record<string, unknown>, envelope.i ?? '');
    } catch (error) {
      logger.warn({ err: { message: String(error) } }, 'a message from another instance failed');
    }
  });
  try {
    if (listener.status === 'wait') await listener.connect(); // lazyConnect is copied
    await listener.subscribe(channel);
  } catch (error) {
    listener.disconnect();
    throw error;
  }
  return {
    instance,
    async publish(message, publishOptions = {}) {
      const n = ++sent;
      let delivered: Promise<void> = Promise.resolve();
      if (publishOptions.delivered) {
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
      await redis.publish(channel, JSON.stringify({ i: instance, n, m: message }));
      await delivered;
    },
    subscribe(handler) {
      handlers.add(handler);
      return () => handlers.delete(handler);
    },
    async close() {
      for (const done of [...echoes.values()]) done();
      handlers.clear();
      listener.disconnect();
    },
  };
}
