// An existing pgmi deployment, served as it is (issue 15, item 3): a database whose schema api
// holds pgmi's own dispatcher. pgmcp lists and calls through api.mcp_handle_request with the
// caller's identity as context, keeps pgmi's "requires auth" rule even where pgmi itself would
// read a pooled connection's '' as a caller, and `pgmcp install --names pgmi` leaves it alone.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../../src/core/errors.js';
import { ANONYMOUS, type Principal } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { loadRegistryHandlers, pgRunner } from '../../src/tools/handlers/index.js';
import { applyPgmiInterface } from '../../src/tools/handlers/install.js';
import { realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';

const info = await realPostgres('pgmi deployment served as it is');

const ALICE: Principal = {
  kind: 'token',
  userId: 'alice',
  tenantId: 'acme',
  roles: [],
  scopes: [],
  claims: {},
};

// A small stand-in for pgmi's dispatcher, with pgmi's rules: context → auth.* settings, and a
// requires-auth handler hidden and refused while auth.user_id IS NULL.
const PGMI_SQL = `
CREATE SCHEMA api;
CREATE TYPE api.mcp_response AS (envelope jsonb);
CREATE FUNCTION api.mcp_handle_request(request jsonb, context jsonb DEFAULT NULL)
RETURNS api.mcp_response LANGUAGE plpgsql AS $$
DECLARE
  rid jsonb := request->'id';
  authed boolean;
  tools jsonb := '[{"name":"echo","description":"Who is asking","inputSchema":{"type":"object"},"_meta":{"tags":["demo"]}}]';
BEGIN
  IF context->>'user_id' IS NOT NULL THEN
    PERFORM set_config('auth.user_id', context->>'user_id', true);
  END IF;
  authed := current_setting('auth.user_id', true) IS NOT NULL;
  IF authed THEN
    tools := tools || '[{"name":"secret","description":"Needs a caller","inputSchema":{}}]';
  END IF;
  RETURN ROW(jsonb_build_object('jsonrpc', '2.0', 'id', rid) || CASE request->>'method'
    WHEN 'tools/list' THEN jsonb_build_object('result', jsonb_build_object('tools', tools))
    WHEN 'resources/list' THEN '{"result":{"resources":[]}}'::jsonb
    WHEN 'prompts/list' THEN '{"result":{"prompts":[]}}'::jsonb
    WHEN 'tools/call' THEN CASE request->'params'->>'name'
      WHEN 'echo' THEN jsonb_build_object('result', jsonb_build_object('content', jsonb_build_array(
        jsonb_build_object('type', 'text', 'text', 'hello ' || coalesce(context->>'user_id', 'stranger')
          || ' of ' || coalesce(context->>'tenant_id', '-')))))
      WHEN 'secret' THEN CASE WHEN authed
        THEN '{"result":{"content":[{"type":"text","text":"the secret"}]}}'::jsonb
        ELSE '{"error":{"code":-32001,"message":"Authentication required"}}'::jsonb END
      ELSE '{"error":{"code":-32602,"message":"Tool not found"}}'::jsonb END
    ELSE '{"error":{"code":-32601,"message":"Method not found"}}'::jsonb
  END);
END $$;
`;

describe.skipIf(!info)('an existing pgmi deployment', () => {
  const target = throwawayDatabase(info!, 'pgmcp_pgmi');
  let db: Database;

  beforeAll(async () => {
    await withClient(target.url, (c) => c.query(PGMI_SQL));
    db = await createDatabase(
      { url: target.url, poolSize: 1, embedded: { dataDir: '/nonexistent', demo: false } },
      pino({ level: 'silent' }),
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  it('is detected, and its handlers listed through its own dispatcher', async () => {
    const loaded = await loadRegistryHandlers(db, { statementTimeoutMs: 5000, allowWrites: false });
    const tools = new Map(loaded.tools.map((t) => [t.name, t]));
    expect([...tools.keys()].sort()).toEqual(['echo', 'secret']);
    expect(tools.get('echo')!.tags).toEqual(['demo']);
    // pgmi registered {} for secret; over MCP a tool always has an object schema.
    expect(tools.get('secret')!.inputSchema).toEqual({ type: 'object' });
    // Listed by pgmi only to a caller: pgmcp keeps that rule.
    expect(tools.get('echo')!.allows).toBeUndefined();
    expect(tools.get('secret')!.allows!(ANONYMOUS)).toBe(false);
    expect(tools.get('secret')!.allows!(ALICE)).toBe(true);
  });

  it("calls pass the caller's identity as context", async () => {
    const loaded = await loadRegistryHandlers(db, { statementTimeoutMs: 5000, allowWrites: false });
    const tools = new Map(loaded.tools.map((t) => [t.name, t]));
    const asAlice = createFakeContext({ principal: ALICE }).ctx;
    expect((await tools.get('echo')!.call({}, asAlice)).content).toEqual([
      { type: 'text', text: 'hello alice of acme' },
    ]);
    expect((await tools.get('secret')!.call({}, asAlice)).content).toEqual([
      { type: 'text', text: 'the secret' },
    ]);
    const anonymous = createFakeContext({ principal: ANONYMOUS }).ctx;
    expect((await tools.get('echo')!.call({}, anonymous)).content).toEqual([
      { type: 'text', text: 'hello stranger of -' },
    ]);
  });

  it('registry.mode: mcp ignores it; `install --names pgmi` refuses to touch it', async () => {
    const mcp = await loadRegistryHandlers(db, {
      statementTimeoutMs: 5000,
      allowWrites: false,
      mode: 'mcp',
    });
    expect(mcp.installed).toBe(false);
    const refused = await withClient(target.url, (c) => applyPgmiInterface(pgRunner(c))).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe(ErrorCodes.PGMI_SCHEMA_FOREIGN);
    const still = await withClient(target.url, (c) =>
      c.query("SELECT to_regtype('api.mcp_request') IS NULL AS untouched"),
    );
    expect(still.rows[0].untouched).toBe(true);
  });

  it('registry.mode: pgmi on a database without pgmi says so', async () => {
    const other = await createDatabase(
      { url: info!.adminUrl, poolSize: 1, embedded: { dataDir: '/nonexistent', demo: false } },
      pino({ level: 'silent' }),
    );
    try {
      const error = await loadRegistryHandlers(other, {
        statementTimeoutMs: 5000,
        allowWrites: false,
        mode: 'pgmi',
      }).catch((e: unknown) => e);
      expect((error as AppError).code).toBe(ErrorCodes.PGMI_NOT_FOUND);
    } finally {
      await other.close();
    }
  });
});
