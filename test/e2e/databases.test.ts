// Several databases behind one server (issue 10, seed 002): two databases on the local
// PostgreSQL, the embedded PGlite, and one that never answers. The REST selection and its
// error bodies byte for byte, selection per MCP session, token binding, a caller limited to one
// database seeing only it through every route and tool, and seed 001's inline forms refused
// for anything that is not configured.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import { runPgmcp, serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const info = await realPostgres('test/e2e/databases.test.ts (several databases)');

const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

describe.skipIf(!info)('several databases', () => {
  const pgInfo = info as RealPostgres;
  const oneName = `pgmcp_dbs_one_${suffix}`;
  const twoName = `pgmcp_dbs_two_${suffix}`;
  const stateName = `pgmcp_dbs_state_${suffix}`;
  const urlFor = (base: string, db: string): string => {
    const u = new URL(base);
    u.pathname = `/${db}`;
    return u.toString();
  };
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-dbs-'));
  const configFile = join(root, 'pgmcp.yaml');
  let env: Record<string, string>;
  let server: HttpServer;
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];

  const cli = async (args: string[]): Promise<string> => {
    const run = await runPgmcp(args, { env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.trim();
  };
  const api = async (
    path: string,
    token: string,
    body?: string,
  ): Promise<{ status: number; text: string; json: any }> => {
    const res = await fetch(`${server.origin}/api${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) };
  };
  const connect = async (token: string): Promise<Client> => {
    const client = new Client({ name: 'pgmcp-dbs', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  };
  const text = (result: any): string =>
    ((result.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');
  const query = (client: Client, sql: string, database?: string) =>
    client.callTool({
      name: 'query_database',
      arguments: { query: sql, ...(database === undefined ? {} : { database }) },
    });

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, async (c) => {
      await c.query(`CREATE DATABASE ${oneName}`);
      await c.query(`CREATE DATABASE ${twoName}`);
      await c.query(`CREATE DATABASE ${stateName}`);
    });
    for (const [db, label] of [
      [oneName, 'one'],
      [twoName, 'two'],
    ] as const) {
      await withClient(urlFor(pgInfo.adminUrl, db), async (c) => {
        await c.query(`CREATE TABLE marker (label text); INSERT INTO marker VALUES ('${label}')`);
        await c.query(`GRANT SELECT ON marker TO ${pgInfo.role}`);
        // The DDL trigger `pgmcp install` would add: each database's changes arrive by NOTIFY.
        await c.query(readFileSync('sql/watch/001_event_trigger.sql', 'utf8'));
      });
    }
    // A routine of the non-default database two.
    await withClient(urlFor(pgInfo.adminUrl, twoName), async (c) => {
      await c.query(`CREATE FUNCTION public.two_label() RETURNS text LANGUAGE sql STABLE
        AS $$ SELECT label FROM marker $$;
        COMMENT ON FUNCTION public.two_label() IS '@mcp The label of database two'`);
    });
    writeFileSync(
      configFile,
      [
        'server:',
        '  databaseTools: true',
        'databases:',
        '  - name: one',
        `    url: ${urlFor(pgInfo.url, oneName)}`,
        '    availableToUsers: [staff]',
        '  - name: two',
        `    url: ${urlFor(pgInfo.url, twoName)}`,
        '  - name: lite',
        '    embedded: true',
        '    availableToUsers: [staff]',
        '  - name: down',
        '    url: postgres://nobody@127.0.0.1:1/nothing',
        '    availableToUsers: [staff]',
        '',
      ].join('\n'),
    );
    env = serverEnv({
      PGMCP_LOG_LEVEL: 'warn',
      PGMCP_STATE_URL: urlFor(pgInfo.adminUrl, stateName),
      PGMCP_AUTH_CACHE_TTL_MS: '0',
      PGMCP_DATA_DIR: join(root, 'data'),
      PGMCP_DEMO: 'false',
    });
    server = await startHttpServer(['--config', configFile, '--require-auth'], { env });
    tokens['staff'] = await cli(['token', 'create', '--name', 'staff', '--role', 'staff']);
    tokens['staff2'] = await cli(['token', 'create', '--name', 'staff2', '--role', 'staff']);
    tokens['limited'] = await cli(['token', 'create', '--name', 'limited']);
    tokens['onlyOne'] = await cli([
      'token',
      'create',
      '--name',
      'only-one',
      '--role',
      'staff',
      '--bind-database',
      'one',
    ]);
    tokens['bound'] = await cli([
      'token',
      'create',
      '--name',
      'bound',
      '--role',
      'staff',
      '--bind-database',
      'two',
    ]);
  }, 240_000);

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
    await withClient(pgInfo.adminUrl, async (c) => {
      for (const db of [oneName, twoName, stateName]) {
        await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      }
    });
  });

  it('refuses a token bound to a database no configuration has', async () => {
    const run = await runPgmcp(
      ['token', 'create', '--name', 'nowhere', '--bind-database', 'nosuch', '--config', configFile],
      { env, timeoutMs: 60_000 },
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      'pgmcp: --bind-database nosuch: no configured database has that name (configured: one, two, lite, down)',
    ]);
  });

  it('starts with one database down and reports each in /health', async () => {
    const res = await fetch(`${server.origin}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.databases).toEqual([
      { name: 'one', status: 'up' },
      { name: 'two', status: 'up' },
      { name: 'lite', status: 'up' },
      { name: 'down', status: 'unavailable' },
    ]);
  });

  it('lists the databases each caller may use (seed 002 shape)', async () => {
    const staff = await api('/databases', tokens['staff']!);
    expect(staff.status).toBe(200);
    expect(staff.json.current).toBe('one');
    expect(staff.json.databases.map((d: any) => d.name)).toEqual(['one', 'two', 'lite', 'down']);
    expect(Object.keys(staff.json.databases[0]).sort()).toEqual(
      ['database', 'host', 'name', 'port', 'sslmode', 'user'].sort(),
    );
    expect(staff.json.databases[0].database).toBe(oneName);
    expect(staff.text).not.toMatch(/password/i);
    const limited = await api('/databases', tokens['limited']!);
    expect(limited.json.databases.map((d: any) => d.name)).toEqual(['two']);
    expect(limited.json.current).toBe('two');
    const bound = await api('/databases', tokens['bound']!);
    expect(bound.json.databases.map((d: any) => d.name)).toEqual(['two']);
    expect(bound.json.current).toBe('two');
  });

  it('answers POST /api/databases/select with the seed bodies, byte for byte', async () => {
    const cases: [string, string, number, string][] = [
      ['staff', '{}', 400, '{"success":false,"error":"Database name is required"}'],
      ['staff', '{"name":""}', 400, '{"success":false,"error":"Database name is required"}'],
      ['staff', '{"name":"nope"}', 404, '{"success":false,"error":"Database not found"}'],
      // Not JSON: the answer of every other /api route.
      ['staff', 'notjson', 400, '{"error":"the body is not valid JSON"}'],
      [
        'limited',
        '{"name":"one"}',
        403,
        '{"success":false,"error":"Access denied to this database"}',
      ],
      [
        'bound',
        '{"name":"one"}',
        403,
        '{"success":false,"error":"API token is bound to a different database"}',
      ],
      [
        'staff',
        '{"name":"two"}',
        200,
        '{"success":true,"current":"two","message":"Database selected successfully"}',
      ],
    ];
    for (const [who, body, status, expected] of cases) {
      const res = await api('/databases/select', tokens[who]!, body);
      expect([who, body, res.status, res.text]).toEqual([who, body, status, expected]);
    }
    expect((await api('/databases', tokens['staff']!)).json.current).toBe('two');
    // Another token's selection is its own.
    expect((await api('/databases', tokens['staff2']!)).json.current).toBe('one');
    // The REST selection is what the token's tool calls use by default.
    const client = await connect(tokens['staff']!);
    expect(text(await query(client, 'SELECT label FROM marker'))).toContain('two');
    await api('/databases/select', tokens['staff']!, '{"name":"one"}');
  });

  it('says a sessionless request has no session to keep a selection in', async () => {
    // A legacy POST without Mcp-Session-Id (the seeds' curl), served statelessly.
    const sessionless = async (name: string, args: Record<string, unknown>) => {
      const res = await fetch(server.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens['staff2']!}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as any).result;
    };
    const selected = await sessionless('select_database_connection', { name: 'two' });
    expect(selected.isError).toBe(true);
    expect(text(selected)).toMatch(/no session to remember the choice/);
    expect(text(selected)).toMatch(/database argument/);
    expect(text(selected)).not.toMatch(/now uses/);
    // Seed 001's form says the same.
    const setDefault = await sessionless('query_database', {
      query: 'set default database to two',
    });
    expect(setDefault.isError).toBe(true);
    expect(text(setDefault)).toMatch(/no session to remember the choice/);
    // The database argument works without a session.
    expect(
      text(
        await sessionless('query_database', { query: 'SELECT label FROM marker', database: 'two' }),
      ),
    ).toMatch(/Database: two/);
  });

  it('runs each call on the database it names, the session selection otherwise', async () => {
    const a = await connect(tokens['staff2']!);
    const b = await connect(tokens['staff2']!);
    const first = await query(a, 'SELECT label FROM marker');
    expect(text(first)).toMatch(/Database: one[\s\S]*one/);
    expect(text(await query(a, 'SELECT label FROM marker', 'two'))).toMatch(/Database: two/);
    const lite = await query(a, 'SELECT 42 AS answer', 'lite');
    expect(lite.isError).toBeFalsy();
    expect(text(lite)).toContain('Database: lite');
    // Seed 001's form, for a configured database only; the session keeps it.
    const set = await query(
      a,
      `set default database to ${urlFor('postgres://127.0.0.1:' + new URL(pgInfo.url).port, twoName)}`,
    );
    expect(set.isError, text(set)).toBeFalsy();
    expect(text(await query(a, 'SELECT label FROM marker'))).toMatch(/Database: two[\s\S]*two/);
    // The other session of the same token is unaffected.
    expect(text(await query(b, 'SELECT label FROM marker'))).toMatch(/Database: one/);
    // select_database_connection does the same by name.
    const selected = await b.callTool({
      name: 'select_database_connection',
      arguments: { name: 'lite' },
    });
    expect(selected.isError, text(selected)).toBeFalsy();
    expect(text(await query(b, 'SELECT 1 AS one'))).toContain('Database: lite');
    // Inline "… at <url>" for this call only.
    const oneUrl = urlFor('postgres://localhost:' + new URL(pgInfo.url).port, oneName);
    expect(text(await query(b, `SELECT label FROM marker at ${oneUrl}`))).toMatch(/Database: one/);
  });

  it('refuses inline URLs and names that are not configured', async () => {
    const client = await connect(tokens['staff']!);
    for (const sql of [
      'SELECT 1 at postgres://evil.example.com/otherdb',
      'set default database to postgres://attacker:secret@10.0.0.1:5432/x',
    ]) {
      const result = await query(client, sql);
      expect(result.isError, sql).toBe(true);
      expect(text(result)).toMatch(/not one of the configured databases/);
      expect(text(result)).not.toContain('secret');
    }
    const unknown = await query(client, 'SELECT 1', 'nope');
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/Database not found/);
  });

  it('describes every /api route in /api/openapi.json, from the validating schemas', async () => {
    const res = await api('/openapi.json', tokens['staff']!);
    expect(res.status).toBe(200);
    const paths = Object.keys(res.json.paths);
    for (const path of [
      '/api/databases',
      '/api/databases/select',
      '/api/login',
      '/api/user/info',
      '/api/chat',
      '/api/llm/providers',
      '/api/llm/models',
      '/api/llm/chat',
    ]) {
      expect(paths).toContain(path);
    }
    expect(res.json.paths['/api/login'].post.requestBody).toBeDefined();
    expect(res.json.paths['/api/chat'].post.requestBody).toBeDefined();
    expect(res.json.paths['/api/llm/chat'].post.requestBody).toBeDefined();
    expect(res.json.paths['/api/llm/models'].get.parameters).toBeDefined();
    expect(paths.every((p: string) => p.startsWith('/api/'))).toBe(true);
    // The error answers are described too, with the error body.
    for (const [path, method] of [
      ['/api/databases', 'get'],
      ['/api/schema', 'get'],
      ['/api/databases/select', 'post'],
    ] as const) {
      const responses = res.json.paths[path][method].responses;
      for (const status of ['401', '403', '404', '503']) {
        expect(responses[status], `${method} ${path} ${status}`).toBeDefined();
      }
      expect(responses['503'].content['application/json'].schema.properties.error.type).toBe(
        'string',
      );
    }
    // A route's own refusal body stays its own (seed 002).
    expect(
      res.json.paths['/api/databases/select'].post.responses['404'].content['application/json']
        .schema.properties.success,
    ).toBeDefined();
  });

  it('names a database that is down', async () => {
    const client = await connect(tokens['staff']!);
    const result = await query(client, 'SELECT 1', 'down');
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Database unavailable: down/);
    // A resource takes no database argument: the advice is to select another database.
    const selected = await client.callTool({
      name: 'select_database_connection',
      arguments: { name: 'down' },
    });
    expect(selected.isError).toBeFalsy();
    const read = await client.readResource({ uri: 'pg://settings' }).catch((e: Error) => e);
    expect(read).toBeInstanceOf(Error);
    expect((read as Error).message).toMatch(/Database unavailable: down/);
    expect((read as Error).message).toMatch(/select another database/);
    expect((read as Error).message).not.toMatch(/the database argument\)/);
    // REST names the database too, and nothing of its URL.
    const schema = await api('/schema?database=down', tokens['staff']!);
    expect(schema.status).toBe(503);
    expect(schema.json.error).toMatch(
      /^database down is unavailable; try again later \(ref \w+\)$/,
    );
  });

  it('keeps a limited caller and a bound token to their database through every tool', async () => {
    const limited = await connect(tokens['limited']!);
    // The tool schemas name no database: a limited caller learns no other database's name.
    const { tools } = await limited.listTools();
    const described = tools
      .map((t) => JSON.stringify((t.inputSchema.properties ?? {})['database'] ?? {}))
      .join(' ');
    expect(described).toContain('configured database');
    expect(described).not.toMatch(/\b(one|lite|down)\b/);
    const listed = await limited.callTool({ name: 'list_database_connections', arguments: {} });
    expect(text(listed)).toContain('two');
    expect(text(listed)).not.toMatch(/\bone\b|lite|down|127\.0\.0\.1|localhost/);
    for (const name of ['query_database', 'get_schema_info', 'count_rows']) {
      const args: Record<string, unknown> =
        name === 'query_database'
          ? { query: 'SELECT 1', database: 'one' }
          : name === 'count_rows'
            ? { table: 'marker', database: 'one' }
            : { database: 'one' };
      const refused = await limited.callTool({ name, arguments: args });
      expect(refused.isError, name).toBe(true);
      expect(text(refused), name).toMatch(/Access denied to database one/);
    }
    const refusedSelect = await limited.callTool({
      name: 'select_database_connection',
      arguments: { name: 'lite' },
    });
    expect(refusedSelect.isError).toBe(true);
    expect(text(await query(limited, 'SELECT label FROM marker'))).toMatch(/Database: two/);
    const info = await limited.readResource({ uri: 'pg://system_info' });
    expect(JSON.stringify(info)).toContain(twoName);

    const bound = await connect(tokens['bound']!);
    const refused = await query(bound, 'SELECT 1', 'one');
    expect(text(refused)).toMatch(/bound to a different database/);
    expect(text(await query(bound, 'SELECT label FROM marker'))).toMatch(/Database: two/);
  });

  it('serves the routines of a non-default database to its users only, and tells only them of changes', async () => {
    const staff = await connect(tokens['staff']!);
    const limited = await connect(tokens['limited']!);
    const onlyOne = await connect(tokens['onlyOne']!);
    const names = async (client: Client): Promise<string[]> =>
      (await client.listTools()).tools.map((t) => t.name);
    expect(await names(limited)).toContain('two_label');
    expect(await names(staff)).toContain('two_label');
    expect(await names(onlyOne)).not.toContain('two_label');
    // Routed like the built-ins: the call's database, which must have it.
    const called = await limited.callTool({ name: 'two_label', arguments: {} });
    expect(called.isError, text(called)).toBeFalsy();
    expect(text(called)).toContain('two');
    // staff's session uses one by default, which has no two_label: the one that has it serves.
    const fromStaff = await staff.callTool({ name: 'two_label', arguments: {} });
    expect(fromStaff.isError, text(fromStaff)).toBeFalsy();
    const named = await staff.callTool({ name: 'two_label', arguments: { database: 'two' } });
    expect(text(named)).toContain('two');
    const wrong = await staff.callTool({ name: 'two_label', arguments: { database: 'one' } });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toMatch(/not defined in database one; it is in: two/);
    const denied = await limited.callTool({ name: 'two_label', arguments: { database: 'one' } });
    expect(text(denied)).toMatch(/Access denied to database one/);
    // For a caller who may not use two, it does not exist.
    await expect(onlyOne.callTool({ name: 'two_label', arguments: {} })).rejects.toThrow(
      /Unknown tool: two_label/,
    );

    const seen = { limited: 0, onlyOne: 0 };
    limited.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      seen.limited += 1;
    });
    onlyOne.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      seen.onlyOne += 1;
    });
    await withClient(urlFor(pgInfo.adminUrl, twoName), (c) =>
      c.query(`CREATE FUNCTION public.two_more() RETURNS int LANGUAGE sql STABLE AS 'SELECT 2';
        COMMENT ON FUNCTION public.two_more() IS '@mcp Two more'`),
    );
    await vi.waitFor(() => expect(seen.limited).toBe(1), { timeout: 15_000 });
    expect(await names(limited)).toContain('two_more');
    // A change in one next: onlyOne hears of it, and of nothing before it (its stream is ordered).
    await withClient(urlFor(pgInfo.adminUrl, oneName), (c) =>
      c.query(`CREATE FUNCTION public.one_more() RETURNS int LANGUAGE sql STABLE AS 'SELECT 1';
        COMMENT ON FUNCTION public.one_more() IS '@mcp One more'`),
    );
    await vi.waitFor(() => expect(seen.onlyOne).toBe(1), { timeout: 15_000 });
    const onlyOneTools = await names(onlyOne);
    expect(onlyOneTools).toContain('one_more');
    expect(onlyOneTools).not.toContain('two_more');
    expect(seen).toEqual({ limited: 1, onlyOne: 1 });
    expect(await names(limited)).not.toContain('one_more');
  });
});
