// Many tool calls in flight at once on one server: every one is answered, and the server warns
// of nothing. Each call listens on the server's shared stop signal until it ends; Node's
// default limit of 10 listeners made a busy server print a "possible memory leak" warning that
// an operator would chase.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realPostgres } from '../helpers/postgres.js';
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
});
