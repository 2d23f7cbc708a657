// Legacy MCP sessions shared through a PostgreSQL state database, and through Redis
// (cluster.redis; a key prefix of its own per run): session stores, each with its own cluster
// listener, stand for instances. A session one creates is found by
// the others, bound to its caller; what one changes reaches the copies the others hold; the
// state database keeps only the hash of a session id; a session idle past the timeout is gone
// everywhere; DELETE on one ends the copies the others hold.
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS, type Principal } from '../../src/core/principal.js';
import { createSessionStore, type SessionStore } from '../../src/http/sessions.js';
import { openClusterBus, type ClusterBus } from '../../src/state/cluster-bus.js';
import {
  createSessionShare,
  sessionKey,
  type SessionShare,
} from '../../src/state/mcp-session-share.js';
import { openRedisClusterBus } from '../../src/state/redis-cluster-bus.js';
import { createRedisSessionShare } from '../../src/state/redis-session-share.js';
import { openStateDatabase, type StateDb } from '../../src/state/state-db.js';
import { realPostgres, reportSkipped, throwawayDatabase } from '../helpers/postgres.js';

const logger = pino({ level: 'silent' });
const pg = await realPostgres('test/integration/shared-sessions.test.ts (shared MCP sessions)');

const IDLE_MS = 1_500;
const alice: Principal = { ...ANONYMOUS, kind: 'trusted-header', userId: 'alice' };
const ALICE = JSON.stringify(['trusted-header', 'alice', null]);
const BOB = JSON.stringify(['trusted-header', 'bob', null]);

const REDIS_URL = 'redis://127.0.0.1:6379/0';
const redisUp = await (async () => {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
})();
if (pg && !redisUp)
  reportSkipped(
    'test/integration/shared-sessions.test.ts (through Redis)',
    'Redis is not running on 127.0.0.1:6379',
  );

/** Where the sessions and messages go, and what is stored about a session there. */
interface Backend {
  open(): Promise<{ share: SessionShare; bus: ClusterBus }>;
  /** Everything stored about the session, as text, with the hash it is stored under. */
  stored(id: string): Promise<{ key: string; owner: string; text: string }[]>;
  close(): Promise<void>;
}

const backends: [string, boolean, (state: { url: string }, db: () => StateDb) => Backend][] = [
  [
    'the state database',
    !!pg,
    (state, db) => ({
      open: async () => ({
        share: createSessionShare(db()),
        bus: await openClusterBus({ url: state.url, db: db(), logger }),
      }),
      async stored() {
        const { rows } = await db().query<{ id_hash: string; owner: string }>(
          'SELECT id_hash, owner FROM pgmcp.mcp_sessions',
        );
        return rows.map((r) => ({ key: r.id_hash, owner: r.owner, text: JSON.stringify(r) }));
      },
      close: () => Promise.resolve(),
    }),
  ],
  [
    'Redis (cluster.redis)',
    !!pg && redisUp,
    () => {
      const prefix = `pgmcp:test:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;
      const clients: Redis[] = [];
      const client = (): Redis => {
        const redis = new Redis(REDIS_URL);
        clients.push(redis);
        return redis;
      };
      return {
        async open() {
          const redis = client();
          return {
            share: createRedisSessionShare(redis, { prefix, ttlMs: IDLE_MS * 4, eventsMs: 60_000 }),
            bus: await openRedisClusterBus({ redis, channel: `${prefix}bus`, logger }),
          };
        },
        async stored() {
          const redis = client();
          const keys = await redis.keys(`${prefix}session:*`);
          return Promise.all(
            keys.map(async (k) => {
              const hash = await redis.hgetall(k);
              const key = k.slice(`${prefix}session:`.length);
              return { key, owner: hash['owner'] ?? '', text: k + JSON.stringify(hash) };
            }),
          );
        },
        async close() {
          const redis = client();
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length > 0) await redis.del(...keys);
          for (const c of clients) c.disconnect();
        },
      };
    },
  ],
];

for (const [name, available, make] of backends)
  describe.skipIf(!available)(`legacy MCP sessions shared through ${name}`, () => {
    const state = throwawayDatabase(pg!, 'pgmcp_shared_sessions');
    let db: StateDb;
    const backend = make(state, () => db);
    const stores: SessionStore[] = [];

    const instance = async (): Promise<SessionStore> => {
      const store = createSessionStore({
        idleTimeoutMs: IDLE_MS,
        eventStoreSize: 10,
        keepAliveMs: 0,
        logger,
        sharing: await backend.open(),
      });
      stores.push(store);
      return store;
    };

    beforeAll(async () => {
      db = await openStateDatabase({ url: state.url, dataDir: '/nonexistent', logger });
    });
    afterAll(async () => {
      await Promise.all(stores.map((s) => s.close()));
      await backend.close();
      await db?.close();
    });

    it('a session made on one instance is found on another by its caller only, with what it negotiated', async () => {
      const [a, b] = [await instance(), await instance()];
      const session = a.create(ALICE, alice);
      session.protocolVersion = '2025-06-18';
      session.clientCapabilities = { elicitation: {} };
      session.clientInfo = { name: 'client', version: '1' };
      await a.register(session);

      expect(await b.find(session.id, BOB, alice)).toBeUndefined();
      const there = await b.find(session.id, ALICE, alice);
      expect(there).toBeDefined();
      expect(there!.protocolVersion).toBe('2025-06-18');
      expect(there!.clientCapabilities).toEqual({ elicitation: {} });
      expect(there!.clientInfo).toEqual({ name: 'client', version: '1' });
      // Held from now on: the same object, no second load.
      expect(await b.find(session.id, ALICE, alice)).toBe(there);

      const stored = await backend.stored(session.id);
      const row = stored.find((r) => r.key === sessionKey(session.id));
      expect(row?.owner).toBe(ALICE);
      expect(JSON.stringify(stored)).not.toContain(session.id);
    });

    it('a change made on one instance reaches the copy another holds', async () => {
      const [a, b] = [await instance(), await instance()];
      const session = a.create(ALICE, alice);
      session.protocolVersion = '2025-11-25';
      await a.register(session);
      const there = (await b.find(session.id, ALICE, alice))!;
      expect(there.logLevel).toBeNull();

      there.logLevel = 'error';
      there.subscriptions.add('pg://system_info');
      there.database = 'reports';
      await b.keep(there);
      await expect.poll(() => session.logLevel, { timeout: 5_000, interval: 20 }).toBe('error');
      expect([...session.subscriptions]).toEqual(['pg://system_info']);
      expect(session.database).toBe('reports');
      // A third instance that never held it loads the change.
      const third = await instance();
      expect((await third.find(session.id, ALICE, alice))!.logLevel).toBe('error');
    });

    it('DELETE on one instance ends the copies the others hold', async () => {
      const [a, b, c] = [await instance(), await instance(), await instance()];
      const session = a.create(ALICE, alice);
      await a.register(session);
      const onB = (await b.find(session.id, ALICE, alice))!;
      const waiting = new AbortController();
      onB.inFlight.set('running', waiting);

      expect(await c.delete(session.id)).toBe(true);
      await expect.poll(() => waiting.signal.aborted, { timeout: 5_000, interval: 20 }).toBe(true);
      await expect
        .poll(async () => a.find(session.id, ALICE, alice), { timeout: 5_000, interval: 20 })
        .toBeUndefined();
      expect(await b.find(session.id, ALICE, alice)).toBeUndefined();
      expect(await (await instance()).find(session.id, ALICE, alice)).toBeUndefined();
    });

    it('a session idle past the timeout is gone for every instance', async () => {
      const a = await instance();
      const idle = a.create(ALICE, alice);
      await a.register(idle);
      const used = a.create(ALICE, alice);
      await a.register(used);
      // Kept in use on A (each find marks it alive) while the other sits idle.
      for (let waited = 0; waited < IDLE_MS * 3; waited += 200) {
        await sleep(200);
        expect(await a.find(used.id, ALICE, alice)).toBeDefined();
      }
      const late = await instance();
      expect(await late.find(idle.id, ALICE, alice)).toBeUndefined();
      expect(await late.find(used.id, ALICE, alice)).toBeDefined();
    });

    it('a cancellation and a client answer sent to another instance reach the one that waits', async () => {
      const [a, b] = [await instance(), await instance()];
      const session = a.create(ALICE, alice);
      await a.register(session);
      const onB = (await b.find(session.id, ALICE, alice))!;

      const running = new AbortController();
      session.inFlight.set(7, running);
      await b.forwardCancel(onB, 7, 'the user gave up');
      await expect.poll(() => running.signal.aborted, { timeout: 5_000, interval: 20 }).toBe(true);
      expect(String(running.signal.reason)).toContain('the user gave up');

      let sent: Record<string, unknown> | undefined;
      const answer = session.outbound.request(
        (message) => (sent = message),
        'elicitation/create',
        { message: 'Go on?' },
        new AbortController().signal,
      );
      // Longer than a notification may carry: through the state database, it travels through
      // pgmcp.cluster_messages.
      const long = 'x'.repeat(20_000);
      await b.forwardAnswer(onB, {
        jsonrpc: '2.0',
        id: sent!['id'],
        result: { action: 'accept', content: { ok: true, long } },
      });
      await expect(answer).resolves.toEqual({ action: 'accept', content: { ok: true, long } });
    });
  });
