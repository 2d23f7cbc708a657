// pgmi's SQL interface over the registry (sql/compat/pgmi.sql), beyond what the seeds' own
// examples exercise (test/e2e/seed-examples.test.ts): request ids of every JSON type echoed
// verbatim, notifications, the tag filter, builders with data, and a re-install that keeps
// the handlers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { applyRegistryScripts, pgRunner } from '../../src/tools/handlers/index.js';
import { apiSchemaOwner, applyPgmiInterface } from '../../src/tools/handlers/install.js';
import { realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';

const info = await realPostgres("pgmi's SQL interface");

describe.skipIf(!info)("pgmi's SQL interface over the registry", () => {
  const target = throwawayDatabase(info!, 'pgmcp_pgmi_api');
  let client: pg.Client;
  const one = async (sql: string): Promise<unknown> =>
    (await client.query<{ v: unknown }>(`SELECT ${sql} AS v`)).rows[0]!.v;

  beforeAll(async () => {
    await withClient(target.url, async (c) => {
      expect(await apiSchemaOwner(pgRunner(c))).toBe('absent');
      await applyRegistryScripts(pgRunner(c));
      await applyPgmiInterface(pgRunner(c));
      expect(await apiSchemaOwner(pgRunner(c))).toBe('pgmcp');
      await c.query(`
        SELECT api.create_or_replace_mcp_handler(
          '{"id":"not-a-uuid","type":"tool","name":"tagged","inputSchema":{},"tags":["a","b"],"requiresAuth":false}',
          $b$BEGIN RETURN api.mcp_tool_result(jsonb_build_array(api.mcp_text('t')), (request).request_id); END$b$);
        SELECT api.create_or_replace_mcp_handler(
          '{"type":"tool","name":"plain","inputSchema":{"properties":{"x":{"type":"string"}}},"requiresAuth":false}',
          $b$BEGIN RETURN api.mcp_tool_result(jsonb_build_array(api.mcp_text('p')), (request).request_id); END$b$);`);
      // Installing again refreshes the interface and keeps what was registered.
      await applyPgmiInterface(pgRunner(c));
    });
    client = new pg.Client({ connectionString: target.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end().catch(() => undefined);
  });

  it('echoes jsonb request ids verbatim: string, number, null', async () => {
    expect(await one(`(api.mcp_ping('42'::jsonb)).envelope->'id'`)).toBe(42);
    expect(await one(`(api.mcp_ping('"req-1"'::jsonb)).envelope->'id'`)).toBe('req-1');
    expect(await one(`(api.mcp_ping('null'::jsonb)).envelope ? 'id'`)).toBe(true);
    expect(
      await one(`(api.mcp_call_tool('tagged', '{}'::jsonb, NULL, '7'::jsonb)).envelope`),
    ).toEqual({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 't' }] } });
    expect(
      await one(`(api.mcp_initialize('{"protocolVersion":"2099-01-01"}', '1'::jsonb)).envelope`),
    ).toMatchObject({
      id: 1,
      result: { protocolVersion: '2025-11-25', capabilities: { tools: {} } },
    });
  });

  it('answers notifications with a NULL envelope, and requests with their id', async () => {
    expect(
      await one(
        `(api.mcp_handle_request('{"jsonrpc":"2.0","method":"notifications/initialized"}')).envelope`,
      ),
    ).toBeNull();
    expect(
      await one(`(api.mcp_handle_request('{"jsonrpc":"2.0","id":5,"method":"nope"}')).envelope`),
    ).toMatchObject({ id: 5, error: { code: -32601 } });
  });

  it('lists with _meta.tags, filters by overlap, and gives every tool an object schema', async () => {
    const all = (await one(`api.mcp_list_tools()`)) as { tools: Array<Record<string, unknown>> };
    expect(all.tools.map((t) => [t['name'], t['inputSchema'], t['_meta']])).toEqual([
      ['plain', { type: 'object', properties: { x: { type: 'string' } } }, undefined],
      ['tagged', { type: 'object' }, { tags: ['a', 'b'] }],
    ]);
    const some = (await one(`api.mcp_list_tools(ARRAY['b','z'])`)) as { tools: unknown[] };
    expect(some.tools).toHaveLength(1);
    const none = (await one(`api.mcp_list_tools(ARRAY[]::text[])`)) as { tools: unknown[] };
    expect(none.tools).toHaveLength(2);
  });

  it('builds errors with data, and tool results with isError and structuredContent', async () => {
    expect(await one(`(api.mcp_error(-32602, 'bad', 'r', '{"field":"x"}')).envelope`)).toEqual({
      jsonrpc: '2.0',
      id: 'r',
      error: { code: -32602, message: 'bad', data: { field: 'x' } },
    });
    expect(
      await one(`(api.mcp_tool_result('[]', 'r', true, '{"n":1}')).envelope->'result'`),
    ).toEqual({ content: [], isError: true, structuredContent: { n: 1 } });
    expect(await one(`(api.mcp_tool_error('oops', 'r')).envelope->'error'->'code'`)).toBe(-32603);
  });
});
