// Several instances, no sticky sessions: three servers on one PostgreSQL state database and one
// server.stateSecret, behind Debian's HAProxy with the documented round-robin configuration
// (examples/deploy/haproxy.cfg). The official SDK v1 client initializes on one instance and
// lists, calls and reads on the others; the e2e scenario matrix (HTTP connectors, both eras)
// runs through the balancer, with the sessions in the state database and again in Redis
// (cluster.redis); and each step of a legacy session is sent to a different instance directly:
// the session, its caller binding, DELETE, and a cancellation (alone, or inside a 2025-03-26
// batch) that lands on another instance than the running query's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listChangedThroughBalancer,
  queryMarker,
  resumptionThroughBalancer,
  runningQueries,
  sessionThroughBalancer,
} from '../helpers/balanced.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { haproxyInstalled, startBalancer } from '../helpers/haproxy.js';
import {
  createFixtureSchema,
  realPostgres,
  reportSkipped,
  throwawayDatabase,
} from '../helpers/postgres.js';
import { dropKeys, realRedis, uniquePrefix } from '../helpers/redis.js';
import { postgresTarget, runScenarioMatrix } from '../helpers/scenarios.js';
import {
  postRpc,
  rawHttp,
  rawInitialize,
  serverEnv,
  spawnPgmcp,
  startHttpServer,
} from '../helpers/server.js';

const SUITE = 'test/e2e/several-instances.test.ts (three instances behind HAProxy)';
const pg = await realPostgres(SUITE);
const haproxy = haproxyInstalled();
if (pg && !haproxy)
  reportSkipped(SUITE, '/usr/sbin/haproxy is not installed (apt-get install haproxy)');

describe.skipIf(!pg || !haproxy)('several instances behind HAProxy', () => {
  const state = throwawayDatabase(pg!, 'pgmcp_scale_state');
  let cluster: Cluster;

  beforeAll(async () => {
    cluster = await startCluster(pg!, state.url, startBalancer);
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it(
    'the SDK v1 client initializes on one instance and lists, calls and reads on the others',
    { timeout: 60_000 },
    async () => {
      const { servedBy } = await sessionThroughBalancer(cluster.url);
      // Every message of the session was a POST; round-robin spread them over all three.
      expect(new Set(servedBy)).toEqual(new Set(['pgmcp1', 'pgmcp2', 'pgmcp3']));
      expect(servedBy.length).toBeGreaterThanOrEqual(12);
    },
  );

  it(
    'a tool added in the database reaches the client as list_changed, whichever instance holds its stream',
    { timeout: 60_000 },
    () => listChangedThroughBalancer(pg!, cluster.url),
  );

  it(
    'a stream the server drops mid-call is resumed with Last-Event-ID on another instance',
    { timeout: 60_000 },
    () => resumptionThroughBalancer(cluster.url),
  );

  it(
    'each step of a session on another instance: initialize on A, list on B, call on C, DELETE on B ends it on A and C',
    { timeout: 60_000 },
    async () => {
      const [a, b, c] = cluster.instances.map((i) => i.url) as [string, string, string];
      const { sessionId, headers } = await rawInitialize(a, '2025-11-25');
      const listed = await postRpc(b, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers);
      expect(listed.status, listed.text).toBe(200);
      expect(listed.json.result.tools.map((t: { name: string }) => t.name)).toContain(
        'query_database',
      );
      const called = await postRpc(
        c,
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'query_database', arguments: { query: 'select 7 * 6 as answer' } },
        },
        headers,
      );
      expect(called.status, called.text).toBe(200);
      expect(JSON.stringify(called.json.result)).toContain('42');
      expect(called.headers['mcp-session-id']).toBe(sessionId);

      const ended = await rawHttp(b, { method: 'DELETE', headers });
      expect(ended.status, ended.text).toBe(200);
      // A and C held the session in memory; DELETE on B ends it there too.
      for (const url of [a, c]) {
        await expect
          .poll(
            async () =>
              (await postRpc(url, { jsonrpc: '2.0', id: 3, method: 'ping' }, headers)).status,
            { timeout: 10_000, interval: 100 },
          )
          .toBe(404);
      }
    },
  );

  it('a session stays bound to its caller on every instance', { timeout: 30_000 }, async () => {
    const [a, b, c] = cluster.instances.map((i) => i.url) as [string, string, string];
    const alice = { 'x-user-id': 'alice' };
    const { headers } = await rawInitialize(a, '2025-11-25', {}, alice);
    const asBob = { ...headers, 'x-user-id': 'bob' };
    // Bob on an instance that never held the session, and on one that holds it now.
    const mallory = await postRpc(b, { jsonrpc: '2.0', id: 1, method: 'ping' }, asBob);
    expect(mallory.status).toBe(404);
    const anonymous = { ...headers };
    delete (anonymous as Record<string, string>)['x-user-id'];
    expect((await postRpc(c, { jsonrpc: '2.0', id: 2, method: 'ping' }, anonymous)).status).toBe(
      404,
    );
    const own = await postRpc(b, { jsonrpc: '2.0', id: 3, method: 'ping' }, headers);
    expect(own.status, own.text).toBe(200);
    expect((await postRpc(b, { jsonrpc: '2.0', id: 4, method: 'ping' }, asBob)).status).toBe(404);
  });

  /** A tools/call that runs `select pg_sleep(seconds)`, its text marked to find it running. */
  const sleepCall = (id: string, marker: string, seconds: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'query_database',
      arguments: { query: `select pg_sleep(${seconds}), '${marker}' as marker` },
    },
  });
  const cancelOf = (requestId: string) => ({
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId, reason: 'the user gave up' },
  });
  const running = (marker: string): Promise<number> => runningQueries(pg!, marker);
  const newMarker = (): string => queryMarker('scale_cancel');
  /**
   * A session initialized on instance A (the first), and a call (id "slow") whose query runs
   * for 25 s on B, running once this resolves; C is the third instance.
   */
  const slowOnB = async (version: string) => {
    const [a, b, c] = cluster.instances.map((i) => i.url) as [string, string, string];
    const { headers } = await rawInitialize(a, version);
    const marker = newMarker();
    const slow = postRpc(b, sleepCall('slow', marker, 25), headers);
    await expect.poll(() => running(marker), { timeout: 15_000, interval: 100 }).toBe(1);
    return { headers, marker, slow, c };
  };

  it(
    'notifications/cancelled sent to another instance cancels the running query there',
    { timeout: 60_000 },
    async () => {
      const { headers, marker, slow, c } = await slowOnB('2025-11-25');
      const cancel = await postRpc(c, cancelOf('slow'), headers);
      expect(cancel.status, cancel.text).toBe(202);
      // Well before pg_sleep(25) would end by itself.
      await expect.poll(() => running(marker), { timeout: 10_000, interval: 100 }).toBe(0);
      expect((await slow).status).toBe(200);
    },
  );

  it(
    'a cancellation inside a 2025-03-26 batch sent to another instance cancels the query there within a second',
    { timeout: 60_000 },
    async () => {
      const { headers, marker, slow, c } = await slowOnB('2025-03-26');
      const batch = await postRpc(c, [cancelOf('slow')], headers);
      // A batch of notifications only: nothing to answer.
      expect(batch.status, batch.text).toBe(202);
      await expect.poll(() => running(marker), { timeout: 1_000, interval: 50 }).toBe(0);
      const answered = await slow;
      expect(answered.status).toBe(200);
      expect(JSON.stringify(answered.json)).toMatch(/cancel/i);
    },
  );

  it(
    'a batch mixing a cancellation with requests: the query on another instance stops at once, the batch is answered',
    { timeout: 60_000 },
    async () => {
      const { headers, marker, slow, c } = await slowOnB('2025-03-26');
      const ownMarker = newMarker();
      // The batch runs a query of its own for three seconds: the cancellation does not wait
      // for the batch's answers.
      const batch = postRpc(
        c,
        [
          { jsonrpc: '2.0', id: 'ping', method: 'ping' },
          cancelOf('slow'),
          sleepCall('own', ownMarker, 3),
          {
            jsonrpc: '2.0',
            id: 'answer',
            method: 'tools/call',
            params: { name: 'query_database', arguments: { query: 'select 6 * 7 as answer' } },
          },
        ],
        headers,
      );
      await expect.poll(() => running(marker), { timeout: 1_000, interval: 50 }).toBe(0);
      expect(await running(ownMarker)).toBe(1);
      const answers = await batch;
      expect(answers.status, answers.text).toBe(200);
      const byId = new Map(
        (answers.json as { id: string; result?: unknown }[]).map((r) => [r.id, r]),
      );
      expect([...byId.keys()].sort()).toEqual(['answer', 'own', 'ping']);
      expect(byId.get('ping')).toHaveProperty('result');
      expect(JSON.stringify(byId.get('answer'))).toContain('42');
      expect(JSON.stringify(byId.get('own'))).toContain(ownMarker);
      expect((await slow).status).toBe(200);
    },
  );
});

// The same matrix with the sessions and messages between instances in each place they may be
// kept: the state database (LISTEN/NOTIFY), and Redis (cluster.redis, a key prefix of its own).
const redisUrl = pg && haproxy ? await realRedis(SUITE) : null;
const SHARING = [
  { where: 'sessions in the state database', ready: true, env: () => ({}) },
  {
    where: 'sessions in Redis (cluster.redis)',
    ready: redisUrl !== null,
    env: (prefix: string) => ({
      PGMCP_CLUSTER_REDIS: redisUrl!,
      PGMCP_CLUSTER_REDIS_KEY_PREFIX: prefix,
    }),
  },
];

for (const sharing of SHARING) {
  describe.skipIf(!pg || !haproxy || !sharing.ready)(
    `the e2e scenarios through HAProxy over three instances, ${sharing.where}`,
    () => {
      const state = throwawayDatabase(pg!, 'pgmcp_scale_matrix');
      const prefix = uniquePrefix('scale-matrix');
      runScenarioMatrix(
        async () => {
          const info = pg!;
          const fixture = await createFixtureSchema(info, 'pgmcp_e2e');
          const cluster = await startCluster(
            info,
            state.url,
            startBalancer,
            sharing.env(prefix),
          ).catch(async (error: unknown) => {
            await fixture.drop();
            throw error;
          });
          return {
            deployment: {
              httpUrl: () => cluster.url,
              stdioArgs: ['--database', info.url],
              fixtures: true,
              env: serverEnv(),
            },
            target: postgresTarget(info, fixture),
            httpStderr: () => cluster.instances.map((i) => i.stderr()).join('\n---\n'),
            async teardown() {
              await cluster.stop();
              await fixture.drop();
              if (redisUrl) await dropKeys(redisUrl, prefix);
            },
          };
        },
        { transports: ['http'], severalInstances: true },
      );
    },
  );
}

describe.skipIf(!pg)('an embedded state cannot be one of several instances', () => {
  const dirs: string[] = [];
  const dataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'pgmcp-scale-embedded-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'a second server beyond loopback on the data directory of a running one is refused, not attached to its state',
    { timeout: 120_000 },
    async () => {
      const dir = dataDir();
      const args = ['--database', pg!.url, '--data-dir', dir];
      const first = await startHttpServer(args, { env: serverEnv() });
      try {
        const second = spawnPgmcp(['serve', '--http', '0.0.0.0:0', ...args], {
          env: serverEnv(),
        });
        const timer = setTimeout(() => second.process.kill('SIGKILL'), 60_000);
        const exit = await second.exited;
        clearTimeout(timer);
        expect(exit.code, second.stderr()).not.toBe(0);
        expect(exit.code).not.toBeNull();
        expect(second.stderr()).toContain('two servers cannot share an embedded state');
        expect(second.stderr()).toContain('state.url');
        expect(second.stdout()).not.toContain('serving MCP');
        // The first one goes on serving.
        expect((await rawInitialize(first.url)).sessionId).toBeTruthy();
      } finally {
        await first.stop();
      }
    },
  );

  it(
    'a server reachable beyond loopback on the embedded state says it cannot be one of several',
    { timeout: 120_000 },
    async () => {
      const server = spawnPgmcp(
        ['serve', '--http', '0.0.0.0:0', '--database', pg!.url, '--data-dir', dataDir()],
        { env: serverEnv() },
      );
      try {
        await expect
          .poll(() => server.stdout(), { timeout: 90_000, interval: 200 })
          .toContain('serving MCP');
        expect(server.stderr()).toContain('this instance cannot be one of several');
      } finally {
        await server.stop();
      }
    },
  );
});
