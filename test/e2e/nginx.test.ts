// Three instances on one PostgreSQL state database behind Debian's nginx, with the configuration
// docs/deploy.md gives (examples/deploy/nginx.conf, only its ports changed; test/helpers/nginx.ts
// runs it in the foreground with its own prefix). A legacy session is initialized on one
// instance and used on the others through round-robin; the session's GET stream carries what
// the server sends while it stays open; a response stream the server drops is resumed with
// Last-Event-ID on another instance; a 2026-07-28 call whose client closes the request is
// cancelled; and a call whose query outlasts nginx's default proxy timeout (60 s) is answered,
// not cut.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  listChangedThroughBalancer,
  queryMarker,
  resumptionThroughBalancer,
  runningQueries,
  sessionThroughBalancer,
} from '../helpers/balanced.js';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { nginxInstalled, startNginx } from '../helpers/nginx.js';
import { realPostgres, reportSkipped, throwawayDatabase } from '../helpers/postgres.js';
import { modernRequest, POST_HEADERS, postRpc, rawHttp, rawInitialize } from '../helpers/server.js';

const SUITE = 'test/e2e/nginx.test.ts (three instances behind nginx)';
const pg = await realPostgres(SUITE);
const nginx = nginxInstalled();
if (pg && !nginx) reportSkipped(SUITE, '/usr/sbin/nginx is not installed (apt-get install nginx)');

/** nginx's default proxy_read_timeout: a quiet upstream is cut after it unless raised. */
const NGINX_DEFAULT_READ_TIMEOUT_S = 60;

// One case at a time: round-robin is what the cases look at, and other traffic would shift it.
describe.skipIf(!pg || !nginx)('several instances behind nginx', () => {
  const state = throwawayDatabase(pg!, 'pgmcp_nginx_state');
  let cluster: Cluster;
  /** host:port of each instance, as nginx's $upstream_addr names it. */
  let hosts: string[];

  beforeAll(async () => {
    cluster = await startCluster(pg!, state.url, startNginx, {
      // The long call's query must outlast nginx's default timeout, and pgmcp's own default.
      PGMCP_STATEMENT_TIMEOUT_MS: String((NGINX_DEFAULT_READ_TIMEOUT_S + 60) * 1000),
    });
    hosts = cluster.instances.map((i) => new URL(i.url).host);
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it(
    'a legacy session initialized on one instance lists, calls and reads on the others',
    { timeout: 60_000 },
    async () => {
      const { servedBy, named } = await sessionThroughBalancer(cluster.url);
      expect(new Set(servedBy)).toEqual(new Set(hosts));
      expect(servedBy.length).toBeGreaterThanOrEqual(12);
      // DELETE through nginx ended the session on every instance: three pings, three 404s.
      for (let i = 0; i < hosts.length; i++) {
        const ping = await postRpc(cluster.url, { jsonrpc: '2.0', id: i, method: 'ping' }, named);
        expect(ping.status, ping.text).toBe(404);
      }
    },
  );

  it(
    'the session’s GET stream carries list_changed while it stays open (nothing buffered)',
    { timeout: 60_000 },
    () => listChangedThroughBalancer(pg!, cluster.url),
  );

  it(
    'a response stream the server drops mid-call is resumed with Last-Event-ID on another instance',
    { timeout: 60_000 },
    () => resumptionThroughBalancer(cluster.url),
  );

  it(
    'a 2026-07-28 call whose client closes the request is cancelled on the instance (the close passes through)',
    { timeout: 60_000 },
    async () => {
      const marker = queryMarker('nginx_close');
      const { message, headers } = modernRequest('closed', 'tools/call', {
        name: 'query_database',
        arguments: { query: `select pg_sleep(30), '${marker}' as marker` },
      });
      const running = (): Promise<number> => runningQueries(pg!, marker);
      const abort = new AbortController();
      const call = fetch(cluster.url, {
        method: 'POST',
        headers: { ...POST_HEADERS, ...headers },
        body: JSON.stringify(message),
        signal: abort.signal,
      }).catch((error: unknown) => error);
      await expect.poll(running, { timeout: 15_000, interval: 100 }).toBe(1);
      abort.abort();
      await call;
      // Well before pg_sleep(30) ends by itself.
      await expect.poll(running, { timeout: 5_000, interval: 100 }).toBe(0);
    },
  );

  it(
    `a call whose query runs past nginx's default ${NGINX_DEFAULT_READ_TIMEOUT_S} s timeout is answered, not cut`,
    { timeout: (NGINX_DEFAULT_READ_TIMEOUT_S + 60) * 1000 },
    async () => {
      const { headers } = await rawInitialize(cluster.url, '2025-11-25');
      const seconds = NGINX_DEFAULT_READ_TIMEOUT_S + 5;
      const started = Date.now();
      const res = await rawHttp(cluster.url, {
        method: 'POST',
        headers: { ...POST_HEADERS, ...headers },
        body: {
          jsonrpc: '2.0',
          id: 'long',
          method: 'tools/call',
          params: {
            name: 'query_database',
            arguments: { query: `select pg_sleep(${seconds}), 'still here' as outcome` },
          },
        },
        timeoutMs: (seconds + 30) * 1000,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.text).toContain('still here');
      expect(Date.now() - started).toBeGreaterThanOrEqual(seconds * 1000);
    },
  );
});
