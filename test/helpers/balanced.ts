// The cases the load-balancer suites (HAProxy, nginx) run alike through a balancer over three
// instances, with the official SDK v1 client: each balancer names the instance that answered in
// an x-served-by header (test/helpers/haproxy.ts, test/helpers/nginx.ts).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  type StreamableHTTPClientTransportOptions,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { withClient, type RealPostgres } from './postgres.js';

export const textOf = (result: any): string =>
  (result.content as { type: string; text?: string }[])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

/** A fetch that tells `note` which instance answered each request (x-served-by) and how. */
function servedByFetch(
  note: (servedBy: string, init: RequestInit | undefined, res: Response) => void,
): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    note(res.headers.get('x-served-by') ?? '?', init, res);
    return res;
  };
}

/** Runs `use` with an SDK v1 client connected through `url`; the session ends after it. */
async function withSdkClient<T>(
  url: string,
  options: StreamableHTTPClientTransportOptions,
  use: (client: Client, transport: StreamableHTTPClientTransport) => Promise<T>,
  prepare: (client: Client) => void = () => undefined,
): Promise<T> {
  const client = new Client({ name: 'pgmcp-e2e-balanced', version: '1.0.0' });
  prepare(client);
  const transport = new StreamableHTTPClientTransport(new URL(url), options);
  await client.connect(transport);
  try {
    return await use(client, transport);
  } finally {
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }
}

/**
 * Initializes through the balancer, then lists, calls, reads, sets the log level and pings,
 * twice, and ends the session with DELETE. Returns the instances the POSTs went to, in order,
 * and the headers that named the session.
 */
export async function sessionThroughBalancer(
  url: string,
): Promise<{ servedBy: string[]; named: Record<string, string> }> {
  const servedBy: string[] = [];
  const fetchNoting = servedByFetch((by, init) => {
    if ((init?.method ?? 'GET') === 'POST') servedBy.push(by);
  });
  return withSdkClient(url, { fetch: fetchNoting }, async (client, transport) => {
    expect(transport.sessionId).toBeTruthy();
    for (let round = 0; round < 2; round++) {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('query_database');
      const result = await client.callTool({
        name: 'query_database',
        arguments: { query: 'select 41 + 1 as answer' },
      });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(textOf(result)).toContain('42');
      const resources = await client.listResources();
      expect(resources.resources.length).toBeGreaterThan(0);
      const read = await client.readResource({ uri: resources.resources[0]!.uri });
      expect(read.contents.length).toBeGreaterThan(0);
      await client.setLoggingLevel('warning');
      await client.ping();
    }
    const named = {
      'mcp-session-id': transport.sessionId!,
      'mcp-protocol-version': transport.protocolVersion!,
    };
    await transport.terminateSession();
    return { servedBy, named };
  });
}

/**
 * With the session's GET stream open, a function is added in the database: the client hears
 * list_changed on that stream, and three lists in a row (one per instance) name the new tool.
 */
export async function listChangedThroughBalancer(info: RealPostgres, url: string): Promise<void> {
  // Names of their own: another suite may add one at the same time in the same database.
  const schema = queryMarker('balanced_tools');
  const tool = queryMarker('balanced_answer');
  let getStreams = 0;
  let changed = 0;
  const fetchNoting = servedByFetch((_by, init, res) => {
    if ((init?.method ?? 'GET') === 'GET' && res.status === 200) getStreams++;
  });
  try {
    await withSdkClient(
      url,
      { fetch: fetchNoting },
      async (client) => {
        expect((await client.listTools()).tools.map((t) => t.name)).not.toContain(tool);
        await expect.poll(() => getStreams, { timeout: 10_000 }).toBeGreaterThan(0);
        await withClient(info.adminUrl, async (admin) => {
          await admin.query(`CREATE SCHEMA ${schema}`);
          await admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${info.role}`);
          await admin.query(
            `CREATE FUNCTION ${schema}.${tool}() RETURNS int LANGUAGE sql STABLE AS 'SELECT 42'`,
          );
          await admin.query(`COMMENT ON FUNCTION ${schema}.${tool} IS '@mcp The answer.'`);
          // What the event trigger sends on DDL where it is installed: every instance reloads.
          await admin.query('NOTIFY pgmcp_catalog');
        });
        // Through the open stream, as it was sent (a balancer that buffered would hold it).
        await expect.poll(() => changed, { timeout: 20_000, interval: 100 }).toBeGreaterThan(0);
        // Every instance reloads on the same NOTIFY, each in its own time: the ones that have
        // not yet are given a few seconds.
        const names = async (): Promise<string[]> =>
          (await client.listTools()).tools.map((t) => t.name);
        for (let i = 0; i < 3; i++) {
          await expect.poll(names, { timeout: 10_000, interval: 100 }).toContain(tool);
        }
      },
      (client) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          changed++;
        }),
    );
  } finally {
    await withClient(info.adminUrl, (admin) =>
      admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
    );
  }
}

/**
 * Three calls of the fixture tool that drops its response stream mid-call: the client resumes
 * each with GET and Last-Event-ID, at least once on another instance than the call's.
 */
export async function resumptionThroughBalancer(url: string): Promise<void> {
  // [the instance that ran the call, the one its stream was resumed on]
  const reconnects: [string, string][] = [];
  let calledOn = '?';
  const fetchNoting = servedByFetch((by, init) => {
    if (typeof init?.body === 'string' && init.body.includes('test_reconnection')) {
      calledOn = by;
    } else if (
      (init?.method ?? 'GET') === 'GET' &&
      new Headers(init?.headers).get('last-event-id')
    ) {
      reconnects.push([calledOn, by]);
    }
  });
  const reconnectionOptions = {
    initialReconnectionDelay: 100,
    maxReconnectionDelay: 1_000,
    reconnectionDelayGrowFactor: 1.5,
    maxRetries: 3,
  };
  await withSdkClient(url, { fetch: fetchNoting, reconnectionOptions }, async (client) => {
    for (let round = 0; round < 3; round++) {
      const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
      expect(textOf(result)).toContain(
        'the stream was closed mid-call and this result was replayed',
      );
    }
  });
  expect(reconnects.length).toBeGreaterThanOrEqual(3);
  // Round-robin sends a reconnection to another instance than the call's.
  expect(
    reconnects.some(([call, resumed]) => call !== resumed),
    String(reconnects),
  ).toBe(true);
}

/** How many statements with `marker` in their text PostgreSQL is running now. */
export function runningQueries(info: RealPostgres, marker: string): Promise<number> {
  return withClient(info.adminUrl, async (client) => {
    const { rows } = await client.query(
      `select count(*)::int as n from pg_stat_activity
        where state = 'active' and query like '%' || $1 || '%' and pid <> pg_backend_pid()`,
      [marker],
    );
    return rows[0].n as number;
  });
}

/** A text to find one statement by in pg_stat_activity. */
export const queryMarker = (label: string): string =>
  `${label}_${Math.random().toString(36).slice(2, 8)}`;
