// Many tool calls in flight at once on one server: every one is answered, and the server warns
// of nothing. Each call listens on the server's shared stop signal until it ends; Node's
// default limit of 10 listeners made a busy server print a "possible memory leak" warning that
// an operator would chase.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { activeStatements, realPostgres } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/concurrent-calls.test.ts (calls in flight)');

describe.skipIf(!pg)('a server with many calls in flight', () => {
  let server: HttpServer;
  const CALLS = 24;

  beforeAll(async () => {
    server = await startHttpServer(['--database', pg!.url], {
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn', PGMCP_POOL_SIZE: String(CALLS) }),
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(`answers ${CALLS} concurrent tools/call and prints no listener-leak warning`, async () => {
    const client = new Client({ name: 'concurrent', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const results = await Promise.all(
      Array.from({ length: CALLS }, (_, i) =>
        client.callTool({
          name: 'query_database',
          arguments: { query: `select ${i} as n, pg_sleep(0.3) is null as slept` },
        }),
      ),
    );
    await client.close();
    results.forEach((r, i) => {
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      expect(JSON.stringify(r.structuredContent)).toContain(`[${i},`);
    });
    expect(server.stderr()).not.toMatch(/MaxListenersExceeded|memory leak/);
  });

  it('a sessionless call whose client goes away stops its query in PostgreSQL', async () => {
    const marker = `gone_${Date.now()}`;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'query_database',
        arguments: { query: `select pg_sleep(30) as ${marker}` },
      },
    });
    const req = request(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    req.on('error', () => undefined);
    req.end(body);
    const running = async (): Promise<number> => activeStatements(pg!.adminUrl, marker);
    for (let i = 0; i < 200 && (await running()) === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await running()).toBe(1);
    req.destroy();
    // Nothing keeps the answer of a request without a session: the query is cancelled.
    for (let i = 0; i < 200 && (await running()) > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await running()).toBe(0);
  });
});
