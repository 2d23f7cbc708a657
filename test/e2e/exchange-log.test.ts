// mcp.exchange records every request a spawned server answers — built-ins, lists and registry
// handlers alike — once each, where the registry schema is installed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRegistryScripts, pgRunner } from '../../src/tools/handlers/index.js';
import { realPostgres, TEST_ROLE, withClient, type RealPostgres } from '../helpers/postgres.js';
import {
  modernRequest,
  postRpc,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const info = await realPostgres('test/e2e/exchange-log.test.ts (exchange log)');

interface Row {
  method: string;
  name: string | null;
  outcome: string;
  error_code: string | null;
  arguments: unknown;
}

describe.skipIf(!info)('the exchange log', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_xlog_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const urlFor = (base: string): string => {
    const u = new URL(base);
    u.pathname = `/${dbName}`;
    return u.toString();
  };
  const rows = (): Promise<Row[]> =>
    withClient(
      urlFor(pgInfo.adminUrl),
      async (c) =>
        (
          await c.query<Row>(
            'SELECT method, name, outcome, error_code, arguments FROM mcp.exchange ORDER BY id',
          )
        ).rows,
    );
  const waitFor = async (count: number): Promise<Row[]> => {
    for (let i = 0; i < 100; i++) {
      const found = await rows();
      if (found.length >= count) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    return rows();
  };
  let server: HttpServer | undefined;

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
    await withClient(urlFor(pgInfo.adminUrl), async (c) => {
      await applyRegistryScripts(pgRunner(c));
      await c.query(`SELECT mcp.create_or_replace_handler(
        '{"type":"tool","name":"hello","requiresAuth":false,"inputSchema":{"type":"object"}}',
        $b$ BEGIN RETURN mcp.tool_result(jsonb_build_array(mcp.text('hi')), (request).request_id); END $b$)`);
      if (pgInfo.role === TEST_ROLE) await c.query('SELECT mcp.grant_runtime($1)', [TEST_ROLE]);
    });
  });
  afterAll(async () => {
    await server?.stop();
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  it('records tools/list and tools/call, with outcome and error code', async () => {
    server = await startHttpServer(['--database', urlFor(pgInfo.url)], {
      env: serverEnv({ PGMCP_EXCHANGE_LOG_ARGUMENTS: 'true' }),
    });
    const send = async (id: number, method: string, params: Record<string, unknown> = {}) => {
      const { message, headers } = modernRequest(id, method, params);
      return (await postRpc(server!.url, message, headers)).json;
    };
    expect((await send(1, 'tools/list')).result.tools.length).toBeGreaterThan(0);
    expect(
      (
        await send(2, 'tools/call', {
          name: 'query_database',
          arguments: { query: 'SELECT 1 AS one' },
        })
      ).result.isError,
    ).toBeUndefined();
    expect(
      (await send(3, 'tools/call', { name: 'hello', arguments: {} })).result.content[0].text,
    ).toBe('hi');
    const failed = await send(4, 'tools/call', {
      name: 'query_database',
      arguments: { query: 'SELECT * FROM no_such_table' },
    });
    expect(failed.result.isError).toBe(true);
    expect((await send(5, 'tools/call', { name: 'nope' })).error.code).toBe(-32602);

    const logged = await waitFor(5);
    expect(logged).toEqual([
      { method: 'tools/list', name: null, outcome: 'ok', error_code: null, arguments: null },
      {
        method: 'tools/call',
        name: 'query_database',
        outcome: 'ok',
        error_code: null,
        arguments: { query: 'SELECT 1 AS one' },
      },
      // A registry handler's call is logged once, by the dispatcher.
      { method: 'tools/call', name: 'hello', outcome: 'ok', error_code: null, arguments: {} },
      {
        method: 'tools/call',
        name: 'query_database',
        outcome: 'error',
        error_code: '42P01',
        arguments: { query: 'SELECT * FROM no_such_table' },
      },
      {
        method: 'tools/call',
        name: 'nope',
        outcome: 'error',
        error_code: '-32602',
        arguments: null,
      },
    ]);
    await server.stop();
    server = undefined;
  });

  it('logs nothing when turned off', async () => {
    const before = (await rows()).length;
    server = await startHttpServer(['--database', urlFor(pgInfo.url)], {
      env: serverEnv({ PGMCP_EXCHANGE_LOG: 'false' }),
    });
    const { message, headers } = modernRequest(1, 'tools/list');
    expect((await postRpc(server.url, message, headers)).status).toBe(200);
    await server.stop();
    server = undefined;
    expect((await rows()).length).toBe(before);
  });
});
