// Every tool answer conforms to the tool's declared outputSchema, on every path: the SDK v1
// Client (legacy era) and the v2 Client (2026-07-28), both validating structuredContent against
// the listed outputSchema, call every listed tool over Streamable HTTP on a real PostgreSQL with
// two configured databases (built-ins, @mcp routines, a registry handler) — inline forms,
// database selection, write previews (a nonce, the user's yes or no), empty results, paging —
// and on the embedded database (vector search). Each answer is also checked here with ajv.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyRegistryScripts, pgRunner } from '../../src/tools/handlers/index.js';
import { CLIENT_INFO, MODERN } from '../helpers/connectors.js';
import {
  REPO_ROOT,
  realPostgres,
  TEST_ROLE,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';
import {
  serverEnv,
  spawnPgmcp,
  startHttpServer,
  tail,
  type HttpServer,
} from '../helpers/server.js';

const require = createRequire(import.meta.url);
const addFormats = require('ajv-formats') as (ajv: Ajv2020) => void;

const info = await realPostgres('test/e2e/output-schemas.test.ts (output schemas on every path)');
const FIXTURE = readFileSync(join(REPO_ROOT, 'test/fixtures/annotated_functions.sql'), 'utf8');

const HANDLER_SQL = `SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"greet","description":"Greets someone","requiresAuth":false,
    "inputSchema":{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]},
    "outputSchema":{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]}}',
  $b$ BEGIN
    RETURN mcp.tool_result(jsonb_build_array(mcp.text('Hello, ' || ((request).arguments->>'who'))),
      (request).request_id, false,
      jsonb_build_object('greeting', 'Hello, ' || ((request).arguments->>'who')));
  END $b$);`;

const MAIN_SQL = `
  CREATE TABLE items (id int PRIMARY KEY, label text NOT NULL, price numeric, seen timestamptz);
  INSERT INTO items SELECT g, 'item ' || g, g * 1.5, '2024-01-01'::timestamptz + g * interval '1 day'
    FROM generate_series(1, 30) g;
  CREATE TABLE notes (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text);
  ANALYZE items;
  -- Values RFC 3339 has no form for, as to_json writes them: infinity, BC, years past 9999.
  CREATE FUNCTION public.far_dates(OUT d date, OUT ts timestamp, OUT tstz timestamptz,
    OUT f float8, OUT n numeric) LANGUAGE sql STABLE AS $$
    SELECT 'infinity'::date, '-infinity'::timestamp, '0044-03-15 10:00 BC'::timestamptz,
      'NaN'::float8, 'NaN'::numeric $$;
  COMMENT ON FUNCTION public.far_dates IS '@mcp Dates and numbers at the edges.';
  CREATE FUNCTION public.far_days() RETURNS SETOF date LANGUAGE sql STABLE AS $$
    VALUES ('-infinity'::date), ('12000-01-01'), ('0001-01-01 BC'), ('2024-02-29') $$;
  COMMENT ON FUNCTION public.far_days IS '@mcp Days at the edges.';
  CREATE FUNCTION public.far_moments() RETURNS SETOF timestamptz LANGUAGE sql STABLE AS $$
    VALUES ('infinity'::timestamptz), ('12000-01-01 00:00Z'), ('0044-03-15 10:00Z BC'),
      ('1900-01-01 00:00 Europe/Amsterdam'), ('2024-02-29 12:00Z') $$;
  COMMENT ON FUNCTION public.far_moments IS '@mcp Moments at the edges.';
  -- Times as PostgreSQL writes them: 24:00:00 (the end of a day), offsets with seconds (local
  -- mean time) or without minutes; intervals and money in their text forms.
  CREATE FUNCTION public.edge_times(OUT t time, OUT tz timetz, OUT lmt timetz, OUT i interval,
    OUT m money) LANGUAGE sql STABLE AS $$
    SELECT '24:00:00'::time, '24:00:00+00'::timetz, '12:00:00+00:53:28'::timetz,
      '-1 year 2 days 03:04:05.5'::interval, '-1234.5'::money $$;
  COMMENT ON FUNCTION public.edge_times IS '@mcp Times, intervals and money at the edges.';
  CREATE FUNCTION public.edge_clock() RETURNS SETOF timetz LANGUAGE sql STABLE AS $$
    VALUES ('24:00:00+00'::timetz), ('00:00:00-15:59'), ('12:00:00.5+05:30'), ('08:00:00+00:19:32') $$;
  COMMENT ON FUNCTION public.edge_clock IS '@mcp Times of day at the edges.';
  -- Numbers at the edges: non-finite numeric and float (strings), int8 past 2^53, in arrays too.
  CREATE FUNCTION public.edge_numbers(OUT n numeric, OUT nn numeric, OUT f float8, OUT f4 float4,
    OUT big int8, OUT small int8, OUT ns numeric[], OUT fs float8[], OUT bigs int8[])
    LANGUAGE sql STABLE AS $$
    SELECT 'Infinity'::numeric, '-Infinity'::numeric, 'Infinity'::float8, '-Infinity'::float4,
      '9223372036854775807'::int8, '-9223372036854775808'::int8, '{NaN,Infinity,1.5}'::numeric[],
      '{NaN,-Infinity,2.5}'::float8[], '{1,9007199254740993}'::int8[] $$;
  COMMENT ON FUNCTION public.edge_numbers IS '@mcp Numbers at the edges.';
  -- Types of the database with a cast to json, which to_json writes through: a range, an enum.
  CREATE TYPE public.edge_span AS RANGE (subtype = int4);
  CREATE FUNCTION public.edge_span_json(public.edge_span) RETURNS json LANGUAGE sql IMMUTABLE
    AS $$ SELECT json_build_object('from', lower($1), 'to', upper($1)) $$;
  CREATE CAST (public.edge_span AS json) WITH FUNCTION public.edge_span_json(public.edge_span);
  CREATE TYPE public.edge_mood AS ENUM ('calm', 'stormy');
  CREATE FUNCTION public.edge_mood_json(public.edge_mood) RETURNS json LANGUAGE sql IMMUTABLE
    AS $$ SELECT json_build_object('mood', $1::text) $$;
  CREATE CAST (public.edge_mood AS json) WITH FUNCTION public.edge_mood_json(public.edge_mood);
  CREATE FUNCTION public.edge_casts(OUT s public.edge_span, OUT ss public.edge_span[],
    OUT mood public.edge_mood, OUT moods public.edge_mood[]) LANGUAGE sql STABLE AS $$
    SELECT '[1,5)'::public.edge_span, '{"[2,3)"}'::public.edge_span[], 'calm'::public.edge_mood,
      '{stormy}'::public.edge_mood[] $$;
  COMMENT ON FUNCTION public.edge_casts IS '@mcp Values of types with a cast to json.';`;

// ---------------------------------------------------------------------------------------------
// The two official clients, each validating structuredContent against the listed outputSchema.

interface Tool {
  name: string;
  outputSchema?: Record<string, unknown>;
}

interface Result {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

interface Driver {
  readonly label: string;
  readonly elicits: boolean;
  listTools(): Promise<Tool[]>;
  call(name: string, args: Record<string, unknown>): Promise<Result>;
  close(): Promise<void>;
}

/** The user's answer to a write's confirmation: yes only for statements marked so. */
const confirms = (message: unknown): boolean => String(message).includes('/* yes */');

async function legacyDriver(url: string, elicits: boolean): Promise<Driver> {
  const client = new LegacyClient(CLIENT_INFO, {
    capabilities: elicits ? { elicitation: {} } : {},
  });
  if (elicits) {
    client.setRequestHandler(ElicitRequestSchema, async (request) =>
      confirms(request.params.message)
        ? { action: 'accept', content: { run: true } }
        : { action: 'decline' },
    );
  }
  await client.connect(new LegacyHttpTransport(new URL(url)));
  return {
    label: `SDK v1 Client${elicits ? ' with elicitation' : ''}`,
    elicits,
    async listTools() {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? undefined : { cursor });
        tools.push(...(page.tools as Tool[]));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
    },
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as Result,
    close: () => client.close(),
  };
}

async function modernDriver(url: string, elicits: boolean): Promise<Driver> {
  const client = new ModernClient(CLIENT_INFO, {
    versionNegotiation: { mode: { pin: MODERN } },
    capabilities: elicits ? { elicitation: {} } : {},
  });
  if (elicits) {
    client.setRequestHandler('elicitation/create', async (request: any) =>
      confirms(request.params?.message)
        ? { action: 'accept', content: { run: true } }
        : { action: 'decline' },
    );
  }
  await client.connect(new ModernHttpTransport(new URL(url)));
  return {
    label: `SDK v2 Client${elicits ? ' with elicitation' : ''}`,
    elicits,
    listTools: async () => (await client.listTools(undefined, { cacheMode: 'refresh' })).tools,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as Result,
    close: () => client.close(),
  };
}

const DRIVERS: { label: string; make: (url: string) => Promise<Driver> }[] = [
  { label: 'SDK v1 Client', make: (url) => legacyDriver(url, false) },
  { label: 'SDK v1 Client with elicitation', make: (url) => legacyDriver(url, true) },
  { label: 'SDK v2 Client', make: (url) => modernDriver(url, false) },
  { label: 'SDK v2 Client with elicitation', make: (url) => modernDriver(url, true) },
];

// ---------------------------------------------------------------------------------------------
// Calls, each checked: the SDK client validated it (or threw), and ajv agrees here.

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

const text = (result: Result): string => result.content.map((c) => c.text ?? '').join('\n');

class Session {
  readonly called = new Set<string>();
  private schemas = new Map<string, Record<string, unknown> | undefined>();

  constructor(readonly driver: Driver) {}

  async list(): Promise<Tool[]> {
    const tools = await this.driver.listTools();
    this.schemas = new Map(tools.map((t) => [t.name, t.outputSchema]));
    return tools;
  }

  /** A call that must succeed: an answer, and structuredContent valid against the schema. */
  async ok(name: string, args: Record<string, unknown> = {}): Promise<Result> {
    const result = await this.any(name, args);
    expect(result.isError, `${name} ${JSON.stringify(args)}: ${text(result)}`).toBeFalsy();
    return result;
  }

  /** A call whose answer may be a tool error (an error is never held to the schema). */
  async any(name: string, args: Record<string, unknown> = {}): Promise<Result> {
    this.called.add(name);
    const where = `${this.driver.label}: ${name} ${JSON.stringify(args)}`;
    const result = await this.driver.call(name, args).catch((error: unknown) => {
      throw new Error(`${where} threw: ${(error as Error).message}`);
    });
    const schema = this.schemas.get(name);
    if (schema !== undefined && result.isError !== true) {
      expect(result.structuredContent, `${where}: no structuredContent`).toBeDefined();
      const validate = ajv.compile(schema);
      const valid = validate(result.structuredContent);
      expect(valid, `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    return result;
  }

  /** A write, through its confirmation: the nonce of a preview, or the user's yes. */
  async write(query: string, extra: Record<string, unknown> = {}): Promise<Result> {
    const first = await this.ok('query_database', { query, ...extra });
    const confirmation = first.structuredContent?.['confirmation'] as { nonce: string } | undefined;
    if (!confirmation) return first;
    expect(this.driver.elicits).toBe(false);
    return this.ok('query_database', { query, ...extra, confirm: confirmation.nonce });
  }
}

// ---------------------------------------------------------------------------------------------

describe.skipIf(!info)('output schemas on every path: PostgreSQL, two databases', () => {
  const pgInfo = info as RealPostgres;
  const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const mainName = `pgmcp_outs_main_${suffix}`;
  const otherName = `pgmcp_outs_other_${suffix}`;
  const stateName = `pgmcp_outs_state_${suffix}`;
  const urlFor = (base: string, db: string): string => {
    const u = new URL(base);
    u.pathname = `/${db}`;
    return u.toString();
  };
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-outschema-'));
  let server: HttpServer | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, async (c) => {
      for (const name of [mainName, otherName, stateName]) await c.query(`CREATE DATABASE ${name}`);
    });
    await withClient(urlFor(pgInfo.adminUrl, mainName), async (c) => {
      await c.query(FIXTURE);
      await c.query(MAIN_SQL);
      await c.query(`GRANT SELECT ON items TO ${pgInfo.role}`);
      await c.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON notes TO ${pgInfo.role}`);
      await c.query(`GRANT CREATE ON SCHEMA public TO ${pgInfo.role}`);
      await applyRegistryScripts(pgRunner(c));
      await c.query(HANDLER_SQL);
      if (pgInfo.role === TEST_ROLE) await c.query('SELECT mcp.grant_runtime($1)', [TEST_ROLE]);
    });
    await withClient(urlFor(pgInfo.adminUrl, otherName), async (c) => {
      await c.query(`CREATE TABLE marker (label text); INSERT INTO marker VALUES ('other')`);
      await c.query(`GRANT SELECT ON marker TO ${pgInfo.role}`);
    });
    const configFile = join(root, 'pgmcp.yaml');
    writeFileSync(
      configFile,
      [
        'server:',
        '  databaseTools: true',
        'databases:',
        '  - name: main',
        `    url: ${urlFor(pgInfo.url, mainName)}`,
        '    allowWrites: true',
        '  - name: other',
        `    url: ${urlFor(pgInfo.url, otherName)}`,
        '',
      ].join('\n'),
    );
    env = serverEnv({
      PGMCP_LOG_LEVEL: 'warn',
      PGMCP_STATE_URL: urlFor(pgInfo.adminUrl, stateName),
      PGMCP_AUTH_CACHE_TTL_MS: '0',
    });
    server = await startHttpServer(['--config', configFile], { env });
    const add = spawnPgmcp(['user', 'add', 'carol', '--role', 'member'], { env, stdin: 'pipe' });
    add.process.stdin!.end('correct horse battery\n');
    const exit = await add.exited;
    expect(exit.code, add.stderr()).toBe(0);
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
    await withClient(pgInfo.adminUrl, async (c) => {
      for (const name of [mainName, otherName, stateName])
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
  });

  for (const { label, make } of DRIVERS) {
    it(`${label}: every tool on every path answers what its outputSchema declares`, async () => {
      const port = new URL(pgInfo.url).port;
      const urls = {
        main: `postgres://127.0.0.1:${port}/${mainName}`,
        other: `postgres://localhost:${port}/${otherName}`,
      };
      const driver = await make(server!.url);
      const s = new Session(driver);
      try {
        const tools = await s.list();
        const names = tools.map((t) => t.name);
        expect(names).toEqual(
          expect.arrayContaining(['query_database', 'count_rows', 'greet', 'type_echo']),
        );
        await driveQueryDatabase(s, urls);
        await driveBuiltins(s);
        await driveRoutines(s);
        expect((await s.ok('greet', { who: 'Ada' })).structuredContent).toEqual({
          greeting: 'Hello, Ada',
        });
        // Every listed tool was called at least once.
        expect(names.filter((n) => !s.called.has(n))).toEqual([]);
      } catch (error) {
        throw new Error(`${(error as Error).message}\nserver stderr:\n${tail(server!.stderr())}`);
      } finally {
        await driver.close();
      }
    }, 120_000);
  }
});

async function driveQueryDatabase(
  s: Session,
  urls: { main: string; other: string },
): Promise<void> {
  // Database selection: the inline forms by name and by URL, the argument, the tools.
  const set = await s.ok('query_database', { query: 'set default database to other' });
  expect(set.structuredContent).toMatchObject({ rowCount: 0, database: 'other' });
  expect(text(await s.ok('query_database', { query: 'SELECT label FROM marker' }))).toMatch(
    /Database: other/,
  );
  const byUrl = await s.ok('query_database', { query: `set default database to ${urls.main}` });
  expect(byUrl.structuredContent).toMatchObject({ database: 'main' });
  const at = await s.ok('query_database', { query: `SELECT label FROM marker at ${urls.other}` });
  expect(at.structuredContent).toMatchObject({ rows: [['other']] });
  await s.ok('query_database', { query: 'SELECT label FROM marker', database: 'other' });
  await s.ok('select_database_connection', { name: 'main' });
  await s.ok('list_database_connections');

  // Paging: full pages, the last one, one past the end (empty).
  const page = (offset: number) =>
    s.ok('query_database', {
      query: 'SELECT id, label, price, seen FROM items ORDER BY id',
      limit: 10,
      offset,
    });
  expect((await page(0)).structuredContent).toMatchObject({ nextOffset: 10, truncated: true });
  expect((await page(20)).structuredContent).toMatchObject({ rowCount: 10, nextOffset: null });
  expect((await page(30)).structuredContent).toMatchObject({ rowCount: 0, truncated: false });
  // A lone row over the 1 MiB byte cap: kept with its long values cut, and the structure says so.
  const cut = await s.ok('query_database', { query: "SELECT repeat('x', 2000000) AS big" });
  expect(cut.structuredContent).toMatchObject({ rowCount: 1, truncated: false, valuesCut: true });
  // Empty results, no columns, values of many types, params.
  await s.ok('query_database', { query: 'SELECT * FROM items WHERE false' });
  await s.ok('query_database', { query: 'SELECT FROM items LIMIT 1' });
  await s.ok('query_database', {
    query: `SELECT 1::int8 AS a, 'NaN'::float8 AS b, 'infinity'::date AS c, '\\x00ff'::bytea AS d,
      '{1,NULL}'::int[] AS e, '{"k":[1]}'::jsonb AS f, NULL AS g, $1::text AS h`,
    params: ['p'],
  });
  await s.ok('query_database', { query: 'EXPLAIN SELECT * FROM items' });

  // Writes: a preview (nonce, or the user's no), then the write that ran.
  const inserted = await s.write(`/* yes */ INSERT INTO notes (body) VALUES ('a')`);
  expect(inserted.structuredContent).toMatchObject({ rowsAffected: 1, command: 'INSERT' });
  const returning = await s.write(
    `/* yes */ INSERT INTO notes (body) SELECT 'r' || g FROM generate_series(1, 3) g RETURNING id`,
    { limit: 1 },
  );
  expect(returning.structuredContent).toMatchObject({ nextOffset: null, rowCount: 1 });
  // Never confirmed: a preview with a nonce, or the user's no (no elicitation: preview only).
  const ddl = await s.ok('query_database', { query: 'CREATE TABLE never_made (a int)' });
  expect(ddl.structuredContent).toMatchObject({ rowCount: 0, nextOffset: null });
  if (s.driver.elicits) expect(text(ddl)).toMatch(/Not run/);
  else expect(ddl.structuredContent?.['confirmation']).toMatchObject({ estimatedRows: null });
  const declined = await s.ok('query_database', { query: `DELETE FROM notes WHERE body = 'a'` });
  expect(declined.structuredContent).toMatchObject({ rowCount: 0 });
  // Errors are tool errors, never malformed answers.
  expect((await s.any('query_database', { query: 'SELECT * FROM nowhere' })).isError).toBe(true);
}

async function driveBuiltins(s: Session): Promise<void> {
  // The DBA tools: neither HypoPG nor pg_stat_statements here (tool errors that say so).
  await s.ok('analyze_db_health', {});
  await s.ok('explain_query', { sql: 'SELECT * FROM items WHERE id = 1' });
  await s.any('explain_query', {
    sql: 'SELECT * FROM items WHERE id = 1',
    hypothetical_indexes: [{ table: 'items', columns: ['id'] }],
  });
  await s.any('get_top_queries', {});
  await s.any('analyze_query_indexes', { queries: ['SELECT * FROM items WHERE id = 1'] });
  await s.any('analyze_workload_indexes', {});
  // A preview (or the user's no) on the database that allows writes, refused on the other.
  const apply = await s.ok('apply_index_recommendation', { table: 'items', columns: ['id'] });
  expect(apply.structuredContent).toMatchObject({ applied: false });
  await s.any('apply_index_recommendation', {
    table: 'marker',
    columns: ['label'],
    database: 'other',
  });
  await s.ok('get_schema_info', { table_name: 'items' });
  await s.ok('get_schema_info', { table_name: 'marker', database: 'other' });
  expect((await s.ok('count_rows', { table: 'items' })).structuredContent).toMatchObject({
    count: 30,
  });
  await s.ok('count_rows', { table: 'items', where: 'false' });
  await s.ok('count_rows', { table: 'marker', database: 'other' });
  await s.ok('execute_explain', { query: 'SELECT * FROM items WHERE id = 1' });
  await s.ok('execute_explain', {
    query: 'SELECT count(*) FROM items',
    analyze: true,
    format: 'json',
  });
  await s.ok('generate_embedding', { text: 'fog over the river' });
  // No pgvector here: a tool error (the embedded deployment below searches).
  await s.any('similarity_search', { table_name: 'items', query_text: 'item' });
  await s.ok('read_resource', { uri: 'pg://system_info' });
  await s.ok('read_resource', { list: true, uri: 'pg://system_info' });
  const login = await s.ok('authenticate_user', {
    username: 'carol',
    password: 'correct horse battery',
  });
  expect(login.structuredContent?.['session_token']).toEqual(expect.any(String));
  expect((await s.any('authenticate_user', { username: 'carol', password: 'no' })).isError).toBe(
    true,
  );
}

async function driveRoutines(s: Session): Promise<void> {
  await s.ok('type_echo', {
    v_int2: 1,
    v_int4: 2,
    v_int8: 3,
    v_numeric: '4.5',
    v_float4: 1.5,
    v_float8: 2.5,
    v_bool: true,
    v_text: 't',
    v_varchar: 'v',
    v_char: 'c',
    v_name: 'n',
    v_uuid: '123e4567-e89b-12d3-a456-426614174000',
    v_date: '2024-01-02',
    v_time: '12:00:00',
    v_timetz: '12:00:00+02:00',
    v_timestamp: '2024-01-02T03:04:05',
    v_timestamptz: '2024-01-02T03:04:05Z',
    v_interval: '1 day',
    v_json: { a: 1 },
    v_jsonb: [1],
    v_bytea: 'AAE=',
    v_inet: '10.0.0.1',
  });
  await s.ok('add_numbers', { a: 1 });
  await s.ok('sum_all', { nums: [1, 2, 3] });
  await s.ok('split_name', { full_name: 'Ada Lovelace' });
  await s.ok('series', { n: 3 });
  await s.ok('series', { n: 0 }); // an empty set
  await s.ok('random_draws', { n: 2 });
  await s.ok('item_rows');
  await s.ok('top_items');
  await s.ok('reprice', { item: { id: 1, label: 'x', price: '2', tags: ['a'] } });
  await s.ok('next_mood', { m: 'sad' });
  await s.ok('normalize_code', { code: 'ABC' });
  await s.ok('reverse_array', { vals: ['a', null, 'b'] });
  await s.ok('concat_pair', { arg1: 'a' });
  await s.ok('scale_int', { x: 2 });
  await s.ok('scale', { x: '2.5' });
  await s.ok('whoami');
  await s.ok('record_event', { note: 'n' });
  await s.ok('log_event', { note: 'n' });
  expect((await s.ok('far_dates')).structuredContent).toMatchObject({
    d: 'infinity',
    ts: '-infinity',
  });
  expect((await s.ok('far_days')).structuredContent?.['items']).toHaveLength(4);
  expect((await s.ok('far_moments')).structuredContent?.['items']).toHaveLength(5);
  expect((await s.ok('edge_times')).structuredContent).toMatchObject({
    t: '24:00:00',
    tz: '24:00:00+00',
    lmt: '12:00:00+00:53:28',
    i: expect.any(String),
    m: expect.any(String),
  });
  expect((await s.ok('edge_clock')).structuredContent?.['items']).toEqual([
    '24:00:00+00',
    '00:00:00-15:59',
    '12:00:00.5+05:30',
    '08:00:00+00:19:32',
  ]);
  expect((await s.ok('edge_numbers')).structuredContent).toMatchObject({
    n: 'Infinity',
    nn: '-Infinity',
    f: 'Infinity',
    f4: '-Infinity',
    big: '9223372036854775807',
    small: '-9223372036854775808',
    ns: ['NaN', 'Infinity', '1.5'],
    fs: ['NaN', '-Infinity', 2.5],
    bigs: [1, '9007199254740993'],
  });
  expect((await s.ok('edge_casts')).structuredContent).toEqual({
    s: { from: 1, to: 5 },
    ss: [{ from: 2, to: 3 }],
    mood: { mood: 'calm' },
    moods: [{ mood: 'stormy' }],
  });
  await s.any('sneaky_write');
  await s.any('find_customer', { customer_id: 3 });
  await s.any('secret_number').catch(() => undefined);
}

describe('output schemas on every path: the embedded database (vector search)', () => {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-outschema-embedded-'));
  let server: HttpServer | undefined;

  beforeAll(async () => {
    // The demo dataset (the default) has the vector table similarity_search reads.
    server = await startHttpServer(['--data-dir', join(root, 'data')], {
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
    });
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  for (const { label, make } of DRIVERS.filter((d) => !d.label.includes('elicitation'))) {
    it(`${label}: every tool answers what its outputSchema declares`, async () => {
      const driver = await make(server!.url);
      const s = new Session(driver);
      try {
        const names = (await s.list()).map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining(['similarity_search', 'generate_embedding']));
        const found = await s.ok('similarity_search', {
          table_name: 'demo.logbook_entries',
          query_text: 'fog from the river',
          top_n: 3,
        });
        expect(found.structuredContent).toMatchObject({ vector_column: 'embedding' });
        await s.ok('similarity_search', {
          table_name: 'demo.logbook_entries',
          query_text: 'zzzz qqqq',
          top_n: 1,
        });
        await s.ok('generate_embedding', { text: 'fog from the river' });
        const sites = (offset: number) =>
          s.ok('query_database', {
            query: 'SELECT * FROM demo.sites ORDER BY id',
            limit: 5,
            offset,
          });
        expect((await sites(0)).structuredContent).toMatchObject({ nextOffset: 5 });
        expect((await sites(5)).structuredContent).toMatchObject({ nextOffset: null });
        await s.ok('query_database', { query: 'SELECT * FROM demo.sites WHERE false' });
        await s.ok('count_rows', { table: 'sites', schema: 'demo' });
        await s.ok('execute_explain', { query: 'SELECT * FROM demo.sites', analyze: true });
        await s.ok('explain_query', { sql: 'SELECT * FROM demo.sites' });
        await s.ok('analyze_db_health', { health_type: 'index,constraint' });
        await s.any('get_top_queries', {});
        await s.any('analyze_query_indexes', { queries: ['SELECT * FROM demo.sites'] });
        await s.any('analyze_workload_indexes', {});
        await s.any('apply_index_recommendation', { table: 'demo.sites', columns: ['id'] });
        await s.ok('get_schema_info', { schema_name: 'demo', compact: true });
        await s.ok('read_resource', { uri: 'pg://system_info' });
        await s.any('authenticate_user', { username: 'nobody', password: 'nothing' });
        expect(names.filter((n) => !s.called.has(n))).toEqual([]);
      } catch (error) {
        throw new Error(`${(error as Error).message}\nserver stderr:\n${tail(server!.stderr())}`);
      } finally {
        await driver.close();
      }
    }, 120_000);
  }
});
