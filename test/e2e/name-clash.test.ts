// A name claimed twice in the one catalog (built-in, annotated routine, registry handler) stops
// the server at start with exit status 2 and a message naming both places.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRegistryScripts, pgRunner } from '../../src/tools/handlers/index.js';
import { realPostgres, TEST_ROLE, withClient, type RealPostgres } from '../helpers/postgres.js';
import { runPgmcp, serverEnv, spawnStdio } from '../helpers/server.js';

const info = await realPostgres('test/e2e/name-clash.test.ts (startup name clashes)');

describe.skipIf(!info)('a name claimed twice is a startup error', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_clash_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const urlFor = (base: string): string => {
    const u = new URL(base);
    u.pathname = `/${dbName}`;
    return u.toString();
  };
  const admin = <T>(sql: string): Promise<T> =>
    withClient(urlFor(pgInfo.adminUrl), async (c) => (await c.query(sql)) as T);
  const serve = () =>
    runPgmcp(['serve', '--stdio', '--database', urlFor(pgInfo.url)], {
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
    });

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  });
  afterAll(async () => {
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  it('built-in vs annotated function', async () => {
    await admin(`CREATE FUNCTION public.query_database(q text) RETURNS int LANGUAGE sql STABLE
      AS 'SELECT 1';
      COMMENT ON FUNCTION public.query_database(text) IS '@mcp clashes with the built-in'`);
    const run = await serve();
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(
      /^pgmcp: A name is claimed twice: tool query_database: built-in, and function public\.query_database\(text\)\./m,
    );
    expect(run.stdout).toBe('');
    await admin('DROP FUNCTION public.query_database(text)');
  });

  it('annotated function vs registry handler, both named', async () => {
    await withClient(urlFor(pgInfo.adminUrl), (c) => applyRegistryScripts(pgRunner(c)));
    await admin(`CREATE FUNCTION public.lookup_order(id integer) RETURNS int LANGUAGE sql STABLE
        AS 'SELECT $1';
      COMMENT ON FUNCTION public.lookup_order(integer) IS '@mcp Look up an order';
      SELECT mcp.create_or_replace_handler('{"type":"tool","name":"lookup_order","inputSchema":{"type":"object"}}',
        $b$ BEGIN RETURN mcp.tool_result('[]', (request).request_id); END $b$);`);
    if (pgInfo.role === TEST_ROLE) await admin(`SELECT mcp.grant_runtime('${TEST_ROLE}')`);
    const run = await serve();
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      'tool lookup_order: function public.lookup_order(integer), and registry handler tool lookup_order',
    );
  });

  it('overloads without distinct @mcp_name stay a warning', async () => {
    await admin(`DROP FUNCTION public.lookup_order(integer);
      CREATE FUNCTION public.area(r float8) RETURNS float8 LANGUAGE sql IMMUTABLE AS 'SELECT $1';
      CREATE FUNCTION public.area(w float8, h float8) RETURNS float8 LANGUAGE sql IMMUTABLE
        AS 'SELECT $1 * $2';
      COMMENT ON FUNCTION public.area(float8) IS '@mcp';
      COMMENT ON FUNCTION public.area(float8, float8) IS '@mcp';`);
    const peer = spawnStdio(['--database', urlFor(pgInfo.url)], {
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
    });
    try {
      const init = await peer.request(1, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      });
      expect(init.result.protocolVersion).toBe('2025-11-25');
      // initialize is answered while the routines load; tools/list waits for them.
      peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      const list = await peer.request(2, 'tools/list', {});
      expect(list.result.tools.map((t: { name: string }) => t.name)).not.toContain('area');
      expect(peer.stderr()).toMatch(/area\\?" is claimed by 2 routines/);
    } finally {
      await peer.stop();
    }
  });
});
