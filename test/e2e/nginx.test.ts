// Three instances on one PostgreSQL state database behind Debian's nginx, with the configuration
// docs/deploy.md gives (examples/deploy/nginx.conf, only its ports changed; test/helpers/nginx.ts
// runs it in the foreground with its own prefix). A legacy session is initialized on one
// instance and used on the others through round-robin; the session's GET stream carries what
// the server sends while it stays open; a response stream the server drops is resumed with
// Last-Event-ID on another instance; a 2026-07-28 call whose client closes the request is
// cancelled; and a call whose query outlasts nginx's default proxy timeout (60 s) is answered,
// not cut.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startCluster, type Cluster } from '../helpers/cluster.js';
import { nginxInstalled, startNginx } from '../helpers/nginx.js';
import { realPostgres, reportSkipped, throwawayDatabase, withClient } from '../helpers/postgres.js';
import { modernRequest, POST_HEADERS, postRpc, rawHttp, rawInitialize } from '../helpers/server.js';

const SUITE = 'test/e2e/nginx.test.ts (three instances behind nginx)';
const pg = await realPostgres(SUITE);
const nginx = nginxInstalled();
if (pg && !nginx) reportSkipped(SUITE, '/usr/sbin/nginx is not installed (apt-get install nginx)');

/** nginx's default proxy_read_timeout: a quiet upstream is cut after it unless raised. */
const NGINX_DEFAULT_READ_TIMEOUT_S = 60;

const text = (result: any): string =>
  (result.content as { type: string; text?: string }[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

// Concurrent: the long call takes more than a minute; the other cases run beside it.
describe.skipIf(!pg || !nginx)('several instances behind nginx', { concurrent: true }, () => {
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

  /** A fetch that notes which instance answered each request (x-served-by) and how. */
  const recordingFetch = (
    note: (servedBy: string, init: RequestInit | undefined, res: Response) => void,
  ): typeof fetch => {
    return async (input, init) => {
      const res = await fetch(input, init);
      note(res.headers.get('x-served-by') ?? '?', init, res);
      return res;
    };
  };

  it(
    'a legacy session initialized on one instance lists, calls and reads on the others',
    { timeout: 60_000 },
    async ({ expect }) => {
      const servedBy: string[] = [];
      const client = new Client({ name: 'pgmcp-e2e-nginx', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(cluster.url), {
        fetch: recordingFetch((by, init) => {
          if ((init?.method ?? 'GET') === 'POST') servedBy.push(by);
        }),
      });
      await client.connect(transport);
      expect(transport.sessionId).toBeTruthy();
      try {
        for (let round = 0; round < 2; round++) {
          expect((await client.listTools()).tools.map((t) => t.name)).toContain('query_database');
          const result = await client.callTool({
            name: 'query_database',
            arguments: { query: 'select 41 + 1 as answer' },
          });
          expect(result.isError, text(result)).toBeFalsy();
          expect(text(result)).toContain('42');
          const resources = await client.listResources();
          const read = await client.readResource({ uri: resources.resources[0]!.uri });
          expect(read.contents.length).toBeGreaterThan(0);
          await client.setLoggingLevel('warning');
          await client.ping();
        }
        expect(new Set(servedBy)).toEqual(new Set(hosts));
        expect(servedBy.length).toBeGreaterThanOrEqual(12);
        // DELETE through nginx ends the session on every instance: three pings, three 404s.
        const named = {
          'mcp-session-id': transport.sessionId!,
          'mcp-protocol-version': transport.protocolVersion!,
        };
        await transport.terminateSession();
        for (let i = 0; i < hosts.length; i++) {
          const ping = await postRpc(cluster.url, { jsonrpc: '2.0', id: i, method: 'ping' }, named);
          expect(ping.status, ping.text).toBe(404);
        }
      } finally {
        await client.close();
      }
    },
  );

  it(
    'the session’s GET stream carries a notification while it stays open (nothing buffered)',
    { timeout: 60_000 },
    async ({ expect }) => {
      const schema = `nginx_tools_${Math.random().toString(36).slice(2, 8)}`;
      let getStreams = 0;
      const client = new Client({ name: 'pgmcp-e2e-nginx', version: '1.0.0' });
      let changed = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed++;
      });
      const transport = new StreamableHTTPClientTransport(new URL(cluster.url), {
        fetch: recordingFetch((_by, init, res) => {
          if ((init?.method ?? 'GET') === 'GET' && res.status === 200) getStreams++;
        }),
      });
      await client.connect(transport);
      try {
        await expect.poll(() => getStreams, { timeout: 10_000 }).toBeGreaterThan(0);
        await withClient(pg!.adminUrl, async (admin) => {
          await admin.query(`CREATE SCHEMA ${schema}`);
          await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${pg!.role}`);
          await admin.query(
            `CREATE FUNCTION ${schema}.nginx_answer() RETURNS int LANGUAGE sql STABLE AS 'SELECT 42'`,
          );
          await admin.query(`COMMENT ON FUNCTION ${schema}.nginx_answer IS '@mcp The answer.'`);
          await admin.query('NOTIFY pgmcp_catalog');
        });
        // The stream is still open: the notification came through nginx as it was sent.
        await expect.poll(() => changed, { timeout: 20_000, interval: 100 }).toBeGreaterThan(0);
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('nginx_answer');
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await client.close();
        await withClient(pg!.adminUrl, (admin) =>
          admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
        );
      }
    },
  );

  it(
    'a response stream the server drops mid-call is resumed with Last-Event-ID on another instance',
    { timeout: 60_000 },
    async ({ expect }) => {
      const reconnects: [string, string][] = [];
      let calledOn = '?';
      const client = new Client({ name: 'pgmcp-e2e-nginx', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(new URL(cluster.url), {
        fetch: recordingFetch((by, init) => {
          if (typeof init?.body === 'string' && init.body.includes('test_reconnection')) {
            calledOn = by;
          } else if (
            (init?.method ?? 'GET') === 'GET' &&
            new Headers(init?.headers).get('last-event-id')
          ) {
            reconnects.push([calledOn, by]);
          }
        }),
        reconnectionOptions: {
          initialReconnectionDelay: 100,
          maxReconnectionDelay: 1_000,
          reconnectionDelayGrowFactor: 1.5,
          maxRetries: 3,
        },
      });
      await client.connect(transport);
      try {
        for (let round = 0; round < 3; round++) {
          const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
          expect(text(result)).toContain(
            'the stream was closed mid-call and this result was replayed',
          );
        }
        expect(reconnects.length).toBeGreaterThanOrEqual(3);
        expect(
          reconnects.some(([call, resumed]) => call !== resumed),
          String(reconnects),
        ).toBe(true);
      } finally {
        await transport.terminateSession().catch(() => undefined);
        await client.close();
      }
    },
  );

  it(
    'a 2026-07-28 call whose client closes the request is cancelled on the instance (the close passes through)',
    { timeout: 60_000 },
    async ({ expect }) => {
      const marker = `nginx_close_${Math.random().toString(36).slice(2, 8)}`;
      const { message, headers } = modernRequest('closed', 'tools/call', {
        name: 'query_database',
        arguments: { query: `select pg_sleep(30), '${marker}' as marker` },
      });
      const running = (): Promise<number> =>
        withClient(pg!.adminUrl, async (client) => {
          const { rows } = await client.query(
            `select count(*)::int as n from pg_stat_activity
              where state = 'active' and query like '%' || $1 || '%' and pid <> pg_backend_pid()`,
            [marker],
          );
          return rows[0].n as number;
        });
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
    async ({ expect }) => {
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
