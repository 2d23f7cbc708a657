// The state database unavailable, for authentication: a token checked a moment before keeps
// working for auth.cacheTtlMs; a sign-in fails clearly (503 with Retry-After, not a 500 or a
// wrong-password answer); once the cache lapses, a token that cannot be checked gets 503, not
// 401 (it may be valid); when the state database is back, both work again. On a throwaway
// cluster as state.url, with the server in this process.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startChatServer, type ChatServer } from '../helpers/chat-server.js';
import { serverBinDir, startCluster, type Cluster } from '../helpers/pg-cluster.js';
import { realPostgres, reportSkipped } from '../helpers/postgres.js';

const binaries = serverBinDir();
if (!binaries) reportSkipped('faults-state-auth', 'no local PostgreSQL server binaries (initdb)');
const pg = await realPostgres('test/integration/faults-state-auth.test.ts (state down)');
const CACHE_TTL_MS = 1_500;

describe.skipIf(!binaries || !pg)('the state database down, for authentication', () => {
  let cluster: Cluster;
  let server: ChatServer;
  let token: string;

  beforeAll(async () => {
    cluster = await startCluster();
    server = await startChatServer({
      database: pg!.url,
      requireAuth: true,
      config: { state: { url: cluster.url() }, auth: { cacheTtlMs: CACHE_TTL_MS } },
    });
    token = await server.token('alice', ['analyst']);
    await server.auth.users.add({ username: 'bob', password: 'correct horse battery', roles: [] });
  });
  afterAll(async () => {
    await server?.close();
    cluster?.destroy();
  });

  const tools = () =>
    fetch(`${server.origin}/api/user/info`, { headers: { authorization: `Bearer ${token}` } });
  const login = () =>
    fetch(`${server.origin}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bob', password: 'correct horse battery' }),
    });

  it('cached tokens work, sign-ins get 503; past the cache 503, never 401; all back once it is', async () => {
    expect((await tools()).status).toBe(200); // checked now: cached for CACHE_TTL_MS
    cluster.stop('immediate');
    const stoppedAt = Date.now();
    expect((await tools()).status).toBe(200);
    const signIn = await login();
    expect(signIn.status).toBe(503);
    expect(signIn.headers.get('retry-after')).toBe('5');
    expect(await signIn.json()).toMatchObject({ error: expect.stringMatching(/unavailable/) });

    await vi.waitFor(
      async () => {
        const late = await tools();
        expect(late.status).toBe(503);
        expect(late.headers.get('retry-after')).toBe('5');
      },
      { timeout: 10_000, interval: 200 },
    );
    const refusedAfter = Date.now() - stoppedAt;

    cluster.start();
    await vi.waitFor(async () => expect((await tools()).status).toBe(200), { timeout: 10_000 });
    expect((await login()).status).toBe(200);
    process.stdout.write(
      `[faults] state database down: cached token served for ${refusedAfter} ms (cacheTtlMs ${CACHE_TTL_MS})\n`,
    );
  });
});
