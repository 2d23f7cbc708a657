// Legacy MCP sessions kept in Redis (cluster.redis) instead of the state database: the same
// record and rules as mcp-session-share.ts. A session is a hash under the SHA-256 of its id
// (`record`: the JSON record, `seen`: its last use in Redis's clock, ms), its holders a set;
// both expire on their own `ttlMs` after their last use, and a load refuses one idle past the
// idle timeout. Each response stream's events are a sorted set by sequence number that expires
// with the resumption window. Each step is one Lua script, so the checks and the writes
// cannot interleave with another instance's.
import type { Redis } from 'ioredis';
import { sessionKey, type SessionRecord, type SessionShare } from './mcp-session-share.js';

const NOW_MS = `local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)`;

// KEYS: session, holders. ARGV: idleMs, holder, ttlMs.
const LOAD = `${NOW_MS}
local seen = tonumber(redis.call('HGET', KEYS[1], 'seen'))
if not seen or seen < now - tonumber(ARGV[1]) then return false end
redis.call('HSET', KEYS[1], 'seen', now)
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3]) redis.call('PEXPIRE', KEYS[2], ARGV[3])
return redis.call('HGET', KEYS[1], 'record')`;

// KEYS: session, holders. ARGV: owner, record, holder, ttlMs. Another owner's session is left
// alone (as the state database's conditional upsert does): no holders come back.
const SAVE = `${NOW_MS}
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner and owner ~= ARGV[1] then return {} end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'record', ARGV[2], 'seen', now)
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4]) redis.call('PEXPIRE', KEYS[2], ARGV[4])
return redis.call('SMEMBERS', KEYS[2])`;

// KEYS: session, holders. ARGV: ttlMs.
const TOUCH = `${NOW_MS}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'seen', now)
redis.call('PEXPIRE', KEYS[1], ARGV[1]) redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1`;

export interface RedisSessionShareOptions {
  /** Key prefix (cluster.redisKeyPrefix). */
  prefix: string;
  /** How long an unused session's keys live (at least the idle timeout, plus the touch period). */
  ttlMs: number;
  /** How long a stream's events are kept for a resumption. */
  eventsMs: number;
}

export function createRedisSessionShare(
  redis: Redis,
  options: RedisSessionShareOptions,
): SessionShare {
  const { prefix, ttlMs, eventsMs } = options;
  const keys = (id: string) => {
    const key = sessionKey(id);
    return {
      session: `${prefix}session:${key}`,
      holders: `${prefix}holders:${key}`,
      streams: `${prefix}streams:${key}`,
      events: (streamId: string) => `${prefix}events:${key}:${streamId}`,
      finished: (streamId: string) => `${prefix}finished:${key}:${streamId}`,
    };
  };
  return {
    async load(id, idleMs, holder) {
      const k = keys(id);
      const record = (await redis.eval(LOAD, 2, k.session, k.holders, idleMs, holder, ttlMs)) as
        string | null;
      return record ? (JSON.parse(record) as SessionRecord) : null;
    },
    async save(id, record, holder) {
      const k = keys(id);
      return (await redis.eval(
        SAVE,
        2,
        k.session,
        k.holders,
        record.owner,
        JSON.stringify(record),
        holder,
        ttlMs,
      )) as string[];
    },
    async release(id, holders) {
      if (holders.length === 0) return;
      await redis.srem(keys(id).holders, ...holders);
    },
    async touch(id) {
      const k = keys(id);
      await redis.eval(TOUCH, 2, k.session, k.holders, ttlMs);
    },
    async remove(id) {
      const k = keys(id);
      const streams = await redis.smembers(k.streams);
      await redis.del(
        k.session,
        k.holders,
        k.streams,
        ...streams.flatMap((s) => [k.events(s), k.finished(s)]),
      );
    },
    // Keys expire on their own: nothing to sweep.
    sweep: () => Promise.resolve(0),
    async appendEvents(id, events) {
      if (events.length === 0) return;
      const k = keys(id);
      const batch = redis.multi();
      for (const streamId of new Set(events.map((e) => e.streamId))) {
        batch.sadd(k.streams, streamId).pexpire(k.streams, eventsMs);
      }
      for (const e of events) {
        if (e.finished) batch.set(k.finished(e.streamId), '1', 'PX', eventsMs);
        else batch.zadd(k.events(e.streamId), 'NX', e.seq, `${e.seq}:${e.data}`);
        batch.pexpire(k.events(e.streamId), eventsMs);
      }
      await batch.exec();
    },
    async eventsAfter(id, streamId, seq) {
      const k = keys(id);
      const [members, finished] = await Promise.all([
        redis.zrangebyscore(k.events(streamId), `(${seq}`, '+inf'),
        redis.exists(k.finished(streamId)),
      ]);
      return {
        events: members.map((m) => {
          const colon = m.indexOf(':');
          return { streamId, seq: Number(m.slice(0, colon)), data: m.slice(colon + 1) };
        }),
        finished: finished === 1,
      };
    },
  };
}
