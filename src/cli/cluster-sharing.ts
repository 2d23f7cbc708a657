// Where legacy MCP sessions and the messages between instances go when instances share a
// PostgreSQL state database: that database (LISTEN/NOTIFY) by default, or Redis when
// cluster.redis is set. With cluster.redis, Redis must answer at start: a server that quietly
// fell back to the state database would keep its sessions apart from the instances using
// Redis, so it refuses to start instead (PGMCP629).
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import { redactUrl } from '../config/redact.js';
import { SHARED_EVENTS_MS } from '../http/session-sharing.js';
import { openClusterBus, type ClusterBus } from '../state/cluster-bus.js';
import { createSessionShare, type SessionShare } from '../state/mcp-session-share.js';
import { openRedisClusterBus } from '../state/redis-cluster-bus.js';
import { createRedisSessionShare } from '../state/redis-session-share.js';

/** How often at most a session in use is marked alive (session-sharing.ts's ceiling). */
const TOUCH_CEILING_MS = 10_000;
const REDIS_CONNECT_MS = 2_000;
const REDIS_COMMAND_MS = 2_000;

export interface ClusterSharing {
  share: SessionShare;
  bus: ClusterBus;
}

/** Null when this server's state is the embedded database (one instance only). */
export async function openClusterSharing(
  config: Config,
  auth: Authenticator,
  logger: Logger,
): Promise<ClusterSharing | null> {
  const shared = config.state.url !== null && auth.db.mode === 'postgres';
  const url = config.cluster.redis;
  if (url !== null) {
    if (!shared) {
      throw new AppError(
        ErrorCodes.CLUSTER_REDIS_UNAVAILABLE,
        'cluster.redis is set but the state database is the embedded one: several instances need a PostgreSQL state.url too (tokens, users and nonces live there).',
        { category: 'config' },
      );
    }
    return openRedisSharing(config, url, logger);
  }
  if (!shared) return null;
  const bus = await openClusterBus({ url: config.state.url!, db: auth.db, logger });
  return { share: createSessionShare(auth.db), bus };
}

async function openRedisSharing(
  config: Config,
  url: string,
  logger: Logger,
): Promise<ClusterSharing> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: REDIS_CONNECT_MS,
    commandTimeout: REDIS_COMMAND_MS,
    // A request fails at once while Redis is away (503 for a session it cannot look up)
    // instead of queueing behind a reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  let reported = false;
  let lastError: Error | null = null;
  redis.on('error', (error: Error) => {
    lastError = error;
    if (reported) return;
    reported = true;
    logger.warn({ err: { message: error.message } }, 'cluster: Redis error');
  });
  redis.on('ready', () => {
    reported = false;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    const why =
      (lastError ?? error) instanceof Error
        ? (lastError ?? (error as Error)).message
        : String(error);
    throw new AppError(
      ErrorCodes.CLUSTER_REDIS_UNAVAILABLE,
      `cluster.redis (${redactUrl(url)}) cannot be reached (${why.replace(/\.$/, '')}). Start Redis or fix the URL: pgmcp does not start with its sessions kept apart from the other instances'.`,
      { category: 'unavailable', cause: error },
    );
  }
  const prefix = config.cluster.redisKeyPrefix;
  try {
    const bus = await openRedisClusterBus({ redis, channel: `${prefix}bus`, logger });
    logger.info('cluster: sessions and messages between instances in Redis');
    return {
      share: createRedisSessionShare(redis, {
        prefix,
        ttlMs: config.http.sessionIdleTimeoutMs + TOUCH_CEILING_MS,
        eventsMs: SHARED_EVENTS_MS,
      }),
      bus: {
        ...bus,
        instance: bus.instance,
        async close() {
          await bus.close();
          redis.disconnect();
        },
      },
    };
  } catch (error) {
    redis.disconnect();
    throw error;
  }
}
