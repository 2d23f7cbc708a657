// Tools that live in the database, end to end through the official SDK clients: a spawned server
// on a throwaway database with the annotated fixture functions and an installed registry holding
// a tool handler. Every connector (stdio and HTTP, legacy and 2026-07-28) lists and calls them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRegistryScripts, pgRunner } from '../../src/tools/handlers/index.js';
import { CONNECTORS, type Deployment, type McpConnection } from '../helpers/connectors.js';
import {
  REPO_ROOT,
  realPostgres,
  TEST_ROLE,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const info = await realPostgres('test/e2e/sql-tools.test.ts (SQL tools through the SDK)');
const FIXTURE = readFileSync(join(REPO_ROOT, 'test/fixtures/annotated_functions.sql'), 'utf8');

const HANDLER_SQL = `SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"greet","description":"Greets someone","requiresAuth":false,
    "inputSchema":{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]},
    "outputSchema":{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]}}',
  $b$ BEGIN
    RETURN mcp.tool_result(jsonb_build_array(mcp.text('Hello, ' || ((request).arguments->>'who'))),
      (request).request_id, false,
      jsonb_build_object('greeting', 'Hello, ' || ((request).arguments->>'who')));
  END $b$);
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"members_only","inputSchema":{"type":"object"}}',
  $b$ BEGIN RETURN mcp.tool_result('[]', (request).request_id); END $b$);`;

describe.skipIf(!info)('SQL tools end to end through the SDK client', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_sqlt_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const urlFor = (base: string): string => {
    const u = new URL(base);
    u.pathname = `/${dbName}`;
    return u.toString();
  };
  let http: HttpServer | undefined;
  let deployment: Deployment;

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
    await withClient(urlFor(pgInfo.adminUrl), async (c) => {
      await c.query(FIXTURE);
      await applyRegistryScripts(pgRunner(c));
      await c.query(HANDLER_SQL);
      if (pgInfo.role === TEST_ROLE) await c.query('SELECT mcp.grant_runtime($1)', [TEST_ROLE]);
    });
    const args = ['--database', urlFor(pgInfo.url)];
    const env = serverEnv({ PGMCP_LOG_LEVEL: 'warn' });
    http = await startHttpServer(args, { env });
    deployment = { httpUrl: () => http!.url, stdioArgs: args, env };
  }, 120_000);

  afterAll(async () => {
    await http?.stop();
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  for (const connector of CONNECTORS) {
    describe(connector.name, () => {
      let client: McpConnection;
      beforeAll(async () => {
        client = await connector.connect(deployment);
      }, 60_000);
      afterAll(async () => {
        await client?.close();
      });

      it('lists built-ins, annotated routines and registry handlers as one catalog', async () => {
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        expect(names).toEqual([...names].sort());
        for (const name of ['query_database', 'add_numbers', 'series', 'item_rows', 'greet']) {
          expect(names).toContain(name);
        }
        // Listed to everyone by default (auth.filterToolsByRole off): an agent can find them
        // and be asked to authenticate when it calls them.
        expect(names).toContain('secret_number');
        expect(names).toContain('members_only');
        const series = tools.find((t) => t.name === 'series')!;
        expect(series.annotations).toMatchObject({ readOnlyHint: true });
        expect(series.outputSchema).toMatchObject({ required: ['items'] });
      });

      it('calls an annotated routine (structuredContent checked by the SDK)', async () => {
        const sum = await client.callTool('add_numbers', { a: 1, b: 2 });
        expect(sum.isError).toBeFalsy();
        expect(sum.structuredContent).toEqual({ value: 3 });
        const rows = await client.callTool('item_rows', {});
        expect((rows.structuredContent?.['items'] as unknown[]).length).toBe(2);
        const raised = await client.callTool('find_customer', { customer_id: 3 });
        expect(raised.isError).toBe(true);
        expect(raised.content[0]?.text).toContain('ERROR PM404: No customer 3.');
      });

      it('calls a registry handler', async () => {
        const result = await client.callTool('greet', { who: 'Ada' });
        expect(result.content[0]).toEqual({ type: 'text', text: 'Hello, Ada' });
        expect(result.structuredContent).toEqual({ greeting: 'Hello, Ada' });
      });

      it('refuses a requiresAuth handler to an anonymous caller (-32001; HTTP 401)', async () => {
        const error = await client.callTool('members_only', {}).then(
          () => null,
          (e: unknown) => e as { code?: number; message?: string },
        );
        expect(String(error?.message)).toMatch(/Authentication required/);
        // Over HTTP the refusal is a 401 (the SDK clients report the body's message).
        if (connector.transport === 'stdio') expect(error?.code).toBe(-32001);
      });
    });
  }
});
