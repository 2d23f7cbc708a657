// The SQL handler registry end to end on real PostgreSQL: install (twice), register a tool, a
// resource template, a concrete resource and a prompt, load them as specs, call them as the
// non-superuser serving role, and check identity, auth refusal and the exchange log.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/core/errors.js';
import { ANONYMOUS, type Principal } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import {
  addRegistryHandlers,
  applyRegistryScripts,
  createExchangeLog,
  loadRegistryHandlers,
  pgRunner,
  type ExchangeLog,
  type LoadedHandlers,
} from '../../src/tools/handlers/index.js';
import { createSigner } from '../../src/core/signed.js';
import { createDispatcher } from '../../src/mcp/dispatcher.js';
import { createRegistry } from '../../src/tools/registry.js';
import { realPostgres, TEST_ROLE, withClient, type RealPostgres } from '../helpers/postgres.js';

const info = await realPostgres('registry handlers');

const ALICE: Principal = {
  kind: 'token',
  userId: 'alice',
  tenantId: 'acme',
  roles: [],
  scopes: [],
  claims: { plan: 'gold' },
};

const HANDLERS_SQL = `
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"whoami","description":"Who is calling","tags":["identity"],
    "inputSchema":{"type":"object","properties":{"greeting":{"type":"string"}}},
    "outputSchema":{"type":"object","properties":{"user":{"type":"string"}}}}',
  $body$
DECLARE s jsonb;
BEGIN
  s := jsonb_build_object('user', current_setting('auth.user_id', true),
    'tenant', current_setting('auth.tenant_id', true),
    'ctx_user', (request).context->>'user_id',
    'plan', (request).context->'claims'->>'plan',
    'readonly', current_setting('transaction_read_only'));
  RETURN mcp.tool_result(jsonb_build_array(mcp.text(coalesce((request).arguments->>'greeting', 'hi') || ' ' || (s->>'user'))),
    (request).request_id, false, s);
END $body$);
SELECT mcp.create_or_replace_handler('{"type":"tool","name":"public_fail","requiresAuth":false,"inputSchema":{"type":"object"}}',
  $body$ BEGIN RAISE EXCEPTION 'nothing here' USING HINT = 'try again'; END $body$);
SELECT mcp.create_or_replace_handler('{"type":"tool","name":"soft_error","requiresAuth":false,"inputSchema":{"type":"object"}}',
  $body$ BEGIN RETURN mcp.tool_error('soft failure', (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"resource","name":"doc","uriTemplate":"doc://{schema}/{table}","mimeType":"text/plain","requiresAuth":false}',
  $body$ BEGIN RETURN mcp.resource_result(jsonb_build_array(jsonb_build_object('uri', (request).uri,
    'mimeType', 'text/plain', 'text', ((request).arguments->>'schema') || '.' || ((request).arguments->>'table'))), (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler('{"type":"resource","name":"about","uriTemplate":"doc://about","requiresAuth":false}',
  $body$ BEGIN RETURN mcp.resource_result(jsonb_build_array(jsonb_build_object('text', 'about us')), (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"prompt","name":"review","description":"Review a topic","arguments":[{"name":"topic","required":true}]}',
  $body$ BEGIN RETURN mcp.prompt_result(jsonb_build_array(jsonb_build_object('role','user','content',
    mcp.text('Review ' || ((request).arguments->>'topic') || ' for ' || current_setting('auth.user_id')))), (request).request_id, 'a review'); END $body$);
`;

describe.skipIf(!info)('SQL handler registry', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_reg_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let adminUrl: string;
  let serveUrl: string;
  let db: Database;
  let log: ExchangeLog;
  let loaded: LoadedHandlers;
  const logErrors: Error[] = [];
  const urlFor = (base: string): string => {
    const u = new URL(base);
    u.pathname = `/${dbName}`;
    return u.toString();
  };

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
    adminUrl = urlFor(pgInfo.adminUrl);
    serveUrl = urlFor(pgInfo.url);
  });

  afterAll(async () => {
    await log?.close();
    await db?.close();
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  it.skipIf(pgInfo.role !== TEST_ROLE)(
    'says clearly when the role may not create the schema',
    async () => {
      const error = await withClient(serveUrl, (c) => applyRegistryScripts(pgRunner(c))).catch(
        (e: unknown) => e,
      );
      expect(isAppError(error) && error.category).toBe('config');
      expect((error as Error).message).toMatch(/may not create the registry schema "mcp"/);
    },
  );

  it('installs, and installing again is a no-op', async () => {
    const first = await withClient(adminUrl, (c) => applyRegistryScripts(pgRunner(c)));
    expect(first).toEqual({
      before: null,
      after: 2,
      applied: ['001_init.sql', '002_caller.sql'],
    });
    const second = await withClient(adminUrl, (c) => applyRegistryScripts(pgRunner(c)));
    expect(second).toEqual({ before: 2, after: 2, applied: [] });
    await withClient(adminUrl, async (c) => {
      await c.query(HANDLERS_SQL);
      if (pgInfo.role === TEST_ROLE) await c.query('SELECT mcp.grant_runtime($1)', [TEST_ROLE]);
    });
  });

  it('loads the handlers as specs', async () => {
    db = await createDatabase(
      {
        url: serveUrl,
        poolSize: 2,
        embedded: { dataDir: '/nonexistent', demo: false },
      },
      pino({ level: 'silent' }),
    );
    log = createExchangeLog(db, {
      logArguments: true,
      flushIntervalMs: 10,
      onError: (e) => logErrors.push(e),
    });
    loaded = await loadRegistryHandlers(db, {
      statementTimeoutMs: 5_000,
      allowWrites: false,
      exchangeLog: log,
    });
    expect(loaded.installed).toBe(true);
    expect(loaded.version).toBe(2);
    expect(loaded.tools.map((t) => t.name)).toEqual(['public_fail', 'soft_error', 'whoami']);
    expect(loaded.templates.map((t) => t.uriTemplate)).toEqual(['doc://{schema}/{table}']);
    expect(loaded.resources.map((r) => r.uri)).toEqual(['doc://about']);
    expect(loaded.prompts[0]).toMatchObject({
      name: 'review',
      description: 'Review a topic',
      arguments: [{ name: 'topic', required: true }],
    });
    const whoami = loaded.tools.find((t) => t.name === 'whoami')!;
    expect(whoami.outputSchema).toEqual({
      type: 'object',
      properties: { user: { type: 'string' } },
    });
    const registry = createRegistry();
    expect(addRegistryHandlers(registry, loaded)).toBe(6);
    expect(registry.matchTemplate('doc://public/users')?.vars).toEqual({
      schema: 'public',
      table: 'users',
    });
  });

  it('passes the identity to the body, read-only', async () => {
    const whoami = loaded.tools.find((t) => t.name === 'whoami')!;
    const result = await whoami.call(
      { greeting: 'hello' },
      createFakeContext({ principal: ALICE }).ctx,
    );
    expect(result).toEqual({
      content: [{ type: 'text', text: 'hello alice' }],
      structuredContent: {
        user: 'alice',
        tenant: 'acme',
        ctx_user: 'alice',
        plan: 'gold',
        readonly: 'on',
      },
    });
  });

  it('refuses requiresAuth handlers to anonymous callers', async () => {
    const whoami = loaded.tools.find((t) => t.name === 'whoami')!;
    const error = await whoami
      .call({}, createFakeContext({ principal: ANONYMOUS }).ctx)
      .catch((e: unknown) => e);
    expect(isAppError(error) && error.category).toBe('auth');
    const prompt = loaded.prompts[0]!;
    await expect(
      prompt.get({ topic: 'x' }, createFakeContext({ principal: ANONYMOUS }).ctx),
    ).rejects.toMatchObject({ category: 'auth' });
  });

  it('hides requiresAuth handlers from anonymous callers and refuses them with -32001', async () => {
    const registry = createRegistry();
    addRegistryHandlers(registry, loaded);
    const dispatcher = createDispatcher({
      registry,
      logger: pino({ level: 'silent' }),
      serverInfo: { name: 'test', version: '1' },
      signer: createSigner('k'),
      filterByAccess: true,
    });
    const ask = async (principal: Principal, method: string, params: object = {}) => {
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const channel = {
        session: null,
        principal,
        inFlight: new Map(),
        notify: () => undefined,
        request: () => Promise.reject(new Error('no client')),
      };
      const { response } = await dispatcher.handleRequest(
        { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } },
        'modern',
        channel,
      );
      return response as any;
    };
    const anon = await ask(ANONYMOUS, 'tools/list');
    expect(anon.result.tools.map((t: { name: string }) => t.name)).toEqual([
      'public_fail',
      'soft_error',
    ]);
    expect(anon.result.cacheScope).toBe('private');
    const alice = await ask(ALICE, 'tools/list');
    expect(alice.result.tools.map((t: { name: string }) => t.name)).toEqual([
      'public_fail',
      'soft_error',
      'whoami',
    ]);
    expect((await ask(ANONYMOUS, 'prompts/list')).result.prompts).toEqual([]);
    expect((await ask(ALICE, 'prompts/list')).result.prompts).toHaveLength(1);
    expect((await ask(ANONYMOUS, 'tools/call', { name: 'whoami' })).error.code).toBe(-32001);
    expect((await ask(ANONYMOUS, 'prompts/get', { name: 'review' })).error.code).toBe(-32001);
    expect(
      (await ask(ALICE, 'tools/call', { name: 'whoami', arguments: {} })).result.structuredContent
        .user,
    ).toBe('alice');
  });

  it('turns failures into tool errors', async () => {
    const ctx = createFakeContext().ctx;
    const soft = await loaded.tools.find((t) => t.name === 'soft_error')!.call({}, ctx);
    expect(soft).toEqual({ content: [{ type: 'text', text: 'soft failure' }], isError: true });
    const hard = await loaded.tools
      .find((t) => t.name === 'public_fail')!
      .call({}, ctx)
      .catch((e: unknown) => e);
    expect(isAppError(hard) && hard.category).toBe('database');
    expect((hard as Error).message).toMatch(/nothing here[\s\S]*HINT: try again/);
  });

  it('holds structuredContent to the outputSchema, compiled once per handler', async () => {
    const shaped = `SELECT mcp.create_or_replace_handler(
        '{"type":"tool","name":"NAME","requiresAuth":false,"inputSchema":{"type":"object"},
          "outputSchema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}',
        $b$ BEGIN RETURN mcp.tool_result('[]', (request).request_id, false,
          ((request).arguments->'out')); END $b$)`;
    await withClient(adminUrl, async (c) => {
      await c.query(shaped.replace('NAME', 'shaped'));
      await c.query(`SELECT mcp.create_or_replace_handler(
        '{"type":"tool","name":"unshapely","requiresAuth":false,"inputSchema":{"type":"object"},
          "outputSchema":{"type":"object","properties":{"n":{"type":"no such type"}}}}',
        $b$ BEGIN RETURN mcp.tool_result('[]', (request).request_id); END $b$)`);
      if (pgInfo.role === TEST_ROLE) await c.query('SELECT mcp.grant_runtime($1)', [TEST_ROLE]);
    });
    try {
      await checkShaped();
    } finally {
      await withClient(adminUrl, (c) =>
        c.query("SELECT mcp.drop_handler('tool', 'shaped'), mcp.drop_handler('tool', 'unshapely')"),
      );
    }
  });

  async function checkShaped(): Promise<void> {
    const again = await loadRegistryHandlers(db, { statementTimeoutMs: 5_000, allowWrites: false });
    // A schema that does not compile cannot be held to: that handler is skipped, not served.
    expect(again.tools.map((t) => t.name)).not.toContain('unshapely');
    expect(again.skipped?.map((s) => s.what)).toContain('tool unshapely');
    const shapedTool = again.tools.find((t) => t.name === 'shaped')!;
    const ctx = createFakeContext().ctx;
    expect((await shapedTool.call({ out: { n: 3 } }, ctx)).structuredContent).toEqual({ n: 3 });
    for (const [out, issue] of [
      [{ n: 'notint' }, 'structuredContent.n must be integer (got a string)'],
      [{}, "structuredContent must have required property 'n'"],
      [null, 'structuredContent is missing'],
    ] as const) {
      const error = await shapedTool.call({ out }, ctx).catch((e: unknown) => e);
      expect(isAppError(error) && error.category).toBe('database');
      expect((error as Error).message).toBe(
        `The tool handler shaped returned an invalid response: its structuredContent does not match its outputSchema (${issue}). Build it with mcp.tool_result(...).`,
      );
    }
  }

  it('reads resources and gets prompts', async () => {
    const ctx = createFakeContext({ principal: ALICE }).ctx;
    const template = loaded.templates[0]!;
    const uri = 'doc://sales/orders';
    expect(await template.read(uri, template.match(uri)!, ctx)).toEqual({
      contents: [{ uri, mimeType: 'text/plain', text: 'sales.orders' }],
    });
    expect(await loaded.resources[0]!.read(ctx)).toEqual({
      contents: [{ uri: 'doc://about', text: 'about us' }],
    });
    expect(await loaded.prompts[0]!.get({ topic: 'indexes' }, ctx)).toEqual({
      description: 'a review',
      messages: [{ role: 'user', content: { type: 'text', text: 'Review indexes for alice' } }],
    });
  });

  it('answers JSON-RPC from SQL (mcp.handle_request)', async () => {
    await withClient(adminUrl, async (c) => {
      const ask = async (request: unknown, context: unknown = null): Promise<any> =>
        (
          await c.query('SELECT mcp.handle_request($1::jsonb, $2::jsonb) AS r', [
            JSON.stringify(request),
            context === null ? null : JSON.stringify(context),
          ])
        ).rows[0].r;
      const rpc = (id: number, method: string, params?: unknown): unknown => ({
        jsonrpc: '2.0',
        id,
        method,
        ...(params ? { params } : {}),
      });
      expect(
        (await ask(rpc(1, 'initialize', { protocolVersion: '2025-06-18' }))).result,
      ).toMatchObject({ protocolVersion: '2025-06-18', capabilities: { tools: {} } });
      expect(await ask(rpc(2, 'ping'))).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
      const anonTools = (await ask(rpc(3, 'tools/list'), {})).result.tools;
      expect(anonTools.map((t: { name: string }) => t.name)).toEqual(['public_fail', 'soft_error']);
      const aliceTools = (await ask(rpc(3, 'tools/list', { tags: ['identity'] }), { user_id: 'a' }))
        .result.tools;
      expect(aliceTools.map((t: { name: string }) => t.name)).toEqual(['whoami']);
      expect(
        (await ask(rpc(4, 'tools/call', { name: 'whoami', arguments: {} }), { user_id: 'bob' }))
          .result.structuredContent.user,
      ).toBe('bob');
      expect((await ask(rpc(4, 'tools/call', { name: 'whoami' }), {})).error.code).toBe(-32001);
      expect((await ask(rpc(5, 'tools/call', { name: 'missing' }))).error.code).toBe(-32602);
      expect((await ask(rpc(6, 'resources/list'))).result.resources).toEqual([
        { uri: 'doc://about', name: 'about' },
      ]);
      expect((await ask(rpc(7, 'resources/templates/list'))).result.resourceTemplates).toHaveLength(
        1,
      );
      expect(
        (await ask(rpc(8, 'resources/read', { uri: 'doc://a/b' }))).result.contents[0].text,
      ).toBe('a.b');
      expect((await ask(rpc(9, 'prompts/list'), { user_id: 'a' })).result.prompts).toHaveLength(1);
      expect(
        (
          await ask(rpc(10, 'prompts/get', { name: 'review', arguments: { topic: 't' } }), {
            user_id: 'carol',
          })
        ).result.messages[0].content.text,
      ).toBe('Review t for carol');
      expect(await ask({ jsonrpc: '2.0', method: 'notifications/initialized' })).toBeNull();
      expect((await ask(rpc(11, 'bogus/method'))).error.code).toBe(-32601);
    });
  });

  it('writes the exchange log', async () => {
    await log.flush();
    expect(logErrors).toEqual([]);
    const rows = await withClient(
      adminUrl,
      async (c) =>
        (
          await c.query(
            'SELECT user_id, tenant_id, database, method, name, outcome, error_code, arguments FROM mcp.exchange ORDER BY id',
          )
        ).rows,
    );
    expect(rows.length).toBeGreaterThanOrEqual(7);
    expect(rows[0]).toEqual({
      user_id: 'alice',
      tenant_id: 'acme',
      database: dbName,
      method: 'tools/call',
      name: 'whoami',
      outcome: 'ok',
      error_code: null,
      arguments: { greeting: 'hello' },
    });
    expect(rows.find((r) => r.name === 'whoami' && r.outcome === 'error')?.error_code).toBe(
      'PGMCP308',
    );
    expect(rows.some((r) => r.method === 'resources/read' && r.name === 'doc://sales/orders')).toBe(
      true,
    );
  });
});
