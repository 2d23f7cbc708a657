// cluster.redis: two servers on one PostgreSQL state database keep their legacy MCP sessions
// and the messages between them in Redis (a key prefix of their own here). A session made on
// one instance is served by the other, with nothing of it in the state database; and a server
// whose cluster.redis cannot be reached does not start (PGMCP629) rather than keep its
// sessions apart from the other instances.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInstances } from '../helpers/cluster.js';
import { realPostgres, reportSkipped, throwawayDatabase, withClient } from '../helpers/postgres.js';
import {
  postRpc,
  rawInitialize,
  serverEnv,
  spawnPgmcp,
  type HttpServer,
} from '../helpers/server.js';

const SUITE = 'test/e2e/cluster-redis.test.ts (sessions in Redis)';
const pg = await realPostgres(SUITE);
const REDIS_URL = 'redis://127.0.0.1:6379/0';
const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0 });
redis.on('error', () => undefined);
const redisUp = await redis
  .connect()
  .then(() => true)
  .catch(() => false);
if (pg && !redisUp) reportSkipped(SUITE, 'Redis is not running on 127.0.0.1:6379');

describe.skipIf(!pg || !redisUp)('cluster.redis', () => {
  const state = throwawayDatabase(pg!, 'pgmcp_cluster_redis');
  const prefix = `pgmcp:e2e:${process.pid}:${Math.random().toString(36).slice(2, 8)}:`;
  const env = (extra: Record<string, string> = {}) =>
    serverEnv({
      PGMCP_STATE_URL: state.url,
      PGMCP_STATE_SECRET: 'cluster-redis-share-this-secret',
      PGMCP_CLUSTER_REDIS: REDIS_URL,
      PGMCP_CLUSTER_REDIS_KEY_PREFIX: prefix,
      ...extra,
    });
  let instances: HttpServer[] = [];

  beforeAll(async () => {
    instances = await startInstances(2, ['--database', pg!.url], { env: env() });
  }, 180_000);
  afterAll(async () => {
    await Promise.all(instances.map((i) => i.stop()));
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }, 60_000);

  it(
    'a session made on one instance is served by the other, kept in Redis',
    { timeout: 60_000 },
    async () => {
      const [a, b] = instances as [HttpServer, HttpServer];
      const { sessionId, headers } = await rawInitialize(a.url, '2025-06-18');
      const res = await postRpc(
        b.url,
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'query_database', arguments: { query: 'select 6 * 7 as answer' } },
        },
        headers,
      );
      expect(res.status, res.text).toBe(200);
      expect(res.text).toContain('42');
      expect(await redis.keys(`${prefix}session:*`)).toHaveLength(1);
      const { rows } = await withClient(state.url, (c) =>
        c.query<{ n: number }>('SELECT count(*)::int AS n FROM pgmcp.mcp_sessions'),
      );
      expect(rows[0]!.n).toBe(0);

      // DELETE on B ends it on A too.
      const ended = await fetch(b.url, { method: 'DELETE', headers });
      expect(ended.status).toBe(200);
      const after = await postRpc(a.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, headers);
      expect(after.status).toBe(404);
      expect(sessionId).toBeTruthy();
    },
  );

  it(
    'with Redis unreachable, the server does not start and says why',
    { timeout: 60_000 },
    async () => {
      const server = spawnPgmcp(['serve', '--http', '127.0.0.1:0', '--database', pg!.url], {
        env: env({ PGMCP_CLUSTER_REDIS: 'redis://:hunter2@127.0.0.1:1/0' }),
        stdin: 'ignore',
      });
      const exit = await server.exited;
      expect(exit.code).not.toBe(0);
      const output = server.stdout() + server.stderr();
      expect(output).toContain(
        'cluster.redis (redis://:****@127.0.0.1:1/0) cannot be reached (connect ECONNREFUSED 127.0.0.1:1)',
      );
      expect(output).not.toContain('hunter2');
      expect(output).not.toMatch(/serving MCP at/);
    },
  );
});
