// Annotated routines (test/fixtures/annotated_functions.sql) as tools, on a real PostgreSQL (as
// the non-superuser role pgmcp_test) and, with the same tests, on the embedded PGlite: the
// golden tools/list, every return shape checked against its outputSchema, identity, @authorize,
// RAISE mapping, read-only enforcement and the overload warning.
// UPDATE_GOLDEN=1 rewrites test/fixtures/annotated_functions.tools.golden.json from PostgreSQL.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import type { ToolSpec } from '../../src/core/specs.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createRegistry } from '../../src/tools/registry.js';
import { loadRoutineTools } from '../../src/tools/routines/index.js';
import { REPO_ROOT, realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';

const pgInfo = await realPostgres('test/integration/routines.test.ts (annotated routines)');
const logger = pino({ level: 'silent' });
const FIXTURE = readFileSync(join(REPO_ROOT, 'test/fixtures/annotated_functions.sql'), 'utf8');
const GOLDEN = join(REPO_ROOT, 'test/fixtures/annotated_functions.tools.golden.json');
const TIMEOUT_MS = 10_000;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

const USER: Principal = {
  kind: 'user',
  userId: 'user-17',
  tenantId: 'tenant-3',
  roles: ['auditor'],
  scopes: [],
  claims: { sub: 'user-17' },
};

interface Setup {
  db: Database;
  /** Runs SQL as the database's owner (DDL the calls' role may not run). */
  admin(sql: string): Promise<unknown>;
  cleanup(): Promise<void>;
}

async function onPostgres(info: RealPostgres): Promise<Setup> {
  await withClient(info.adminUrl, async (c) => {
    await c.query('DROP SCHEMA IF EXISTS mcp_fixture CASCADE');
    await c.query(FIXTURE);
  });
  const db = await createDatabase(
    {
      url: info.url,
      poolSize: 2,
      embedded: { dataDir: '/nonexistent', demo: false },
    },
    logger,
  );
  return {
    db,
    admin: (sql) => withClient(info.adminUrl, (c) => c.query(sql)),
    async cleanup() {
      await db.close();
      await withClient(info.adminUrl, (c) => c.query('DROP SCHEMA IF EXISTS mcp_fixture CASCADE'));
    },
  };
}

async function onEmbedded(): Promise<Setup> {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-routines-'));
  const db = await createDatabase(
    {
      url: null,
      poolSize: 1,
      embedded: { dataDir: join(root, 'data'), demo: false },
    },
    logger,
  );
  await db.withOwnConnection((c) => c.query(FIXTURE));
  return {
    db,
    admin: (sql) => db.withOwnConnection((c) => c.query(sql)),
    async cleanup() {
      await db.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** What tools/list shows of a tool. */
function listed(tool: ToolSpec): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  };
  if (tool.outputSchema) entry['outputSchema'] = tool.outputSchema;
  if (tool.annotations) entry['annotations'] = tool.annotations;
  return entry;
}

const TYPE_ECHO_ARGS = {
  v_int2: -32768,
  v_int4: 2147483647,
  v_int8: '9007199254740993',
  v_numeric: '1.10',
  v_float4: 1.5,
  v_float8: -2.25,
  v_bool: true,
  v_text: 'tab\there',
  v_varchar: 'vc',
  v_char: 'c',
  v_name: 'nm',
  v_uuid: '6f1c2a4e-3b1d-4c7e-9a55-2f0e8d1b7c90',
  v_date: '2024-03-01',
  v_time: '12:34:56',
  v_timetz: '12:34:56+02:00',
  v_timestamp: '2024-03-01T12:00:00',
  v_timestamptz: '2024-03-01T12:00:00Z',
  v_interval: '1 day 02:00:00',
  v_json: { a: [1, null, 'x'] },
  v_jsonb: ['x', 2],
  v_bytea: Buffer.from([0, 1, 2, 255]).toString('base64'),
  v_inet: '10.0.0.1',
};

function suite(label: string, start: () => Promise<Setup>): void {
  describe(label, () => {
    let setup: Setup;
    let tools: Map<string, ToolSpec>;
    let writers: Map<string, ToolSpec>;
    let capped: Map<string, ToolSpec>;
    const warnings: string[] = [];

    beforeAll(async () => {
      setup = await start();
      const load = (allowWrites: boolean, warn?: (m: string) => void) =>
        loadRoutineTools(setup.db, {
          schemas: ['mcp_fixture'],
          allowWrites,
          statementTimeoutMs: TIMEOUT_MS,
          ...(warn ? { warn } : {}),
        });
      tools = new Map((await load(false, (m) => warnings.push(m))).map((t) => [t.name, t]));
      writers = new Map((await load(true)).map((t) => [t.name, t]));
      const small = await loadRoutineTools(setup.db, {
        schemas: ['mcp_fixture'],
        allowWrites: false,
        statementTimeoutMs: TIMEOUT_MS,
        maxRows: 3,
        maxResultBytes: 400,
      });
      capped = new Map(small.map((t) => [t.name, t]));
    });
    afterAll(async () => {
      await setup?.cleanup();
    });

    const call = async (
      name: string,
      args: Record<string, unknown>,
      principal?: Principal,
      from = tools,
    ) => {
      const tool = from.get(name);
      if (!tool) throw new Error(`no tool ${name}`);
      const { ctx } = createFakeContext(principal ? { principal } : {});
      const result = await tool.call(args, ctx);
      if (tool.outputSchema) {
        const validate = ajv.compile(tool.outputSchema);
        expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true);
        expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(
          result.structuredContent,
        );
      } else {
        expect(result.structuredContent).toBeUndefined();
      }
      return result;
    };
    const failure = async (
      name: string,
      args: Record<string, unknown>,
      principal?: Principal,
      from = tools,
    ) => {
      const error = await call(name, args, principal, from).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      return error as AppError;
    };

    it('lists the tools of the golden file (UPDATE_GOLDEN=1 rewrites it)', () => {
      const list = [...tools.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map(listed);
      if (process.env['UPDATE_GOLDEN'] === '1' && label.includes('PostgreSQL')) {
        writeFileSync(GOLDEN, `${JSON.stringify(list, null, 2)}\n`);
      }
      expect(list).toEqual(JSON.parse(readFileSync(GOLDEN, 'utf8')));
      // Every schema compiles and every name passes the registry's rule.
      const registry = createRegistry();
      for (const tool of tools.values()) registry.addTool(tool);
    });

    it('warns about overloads sharing a name, and about routines it cannot expose', () => {
      expect(tools.has('area')).toBe(false);
      expect(warnings.some((w) => w.includes('"area"') && w.includes('2 routines'))).toBe(true);
      expect(tools.has('scale')).toBe(true);
      expect(tools.has('scale_int')).toBe(true);
      expect(warnings.some((w) => w.includes('identity_any') && w.includes('anyelement'))).toBe(
        true,
      );
      expect(warnings.some((w) => w.includes('anon_record'))).toBe(true);
      expect(tools.has('not_a_tool')).toBe(false);
    });

    it('round-trips every type of the type table', async () => {
      const result = await call('type_echo', TYPE_ECHO_ARGS);
      expect(result.structuredContent).toEqual({
        ...TYPE_ECHO_ARGS,
        v_timetz: '12:34:56+02',
        v_timestamptz: expect.stringMatching(/^2024-03-01T\d\d:00:00[+-]\d\d:\d\d$/),
      });
    });

    it('returns int8 and numeric arrays with every digit (as text where a number would round)', async () => {
      await setup.admin(`DROP SCHEMA IF EXISTS mcp_fixture_arrays CASCADE;
          CREATE SCHEMA mcp_fixture_arrays;
          GRANT USAGE ON SCHEMA mcp_fixture_arrays TO PUBLIC;
          CREATE DOMAIN mcp_fixture_arrays.amount AS numeric;
          CREATE FUNCTION mcp_fixture_arrays.exact(OUT n numeric[], OUT i int8[], OUT a mcp_fixture_arrays.amount[], OUT f float8[])
          LANGUAGE sql IMMUTABLE AS $$ SELECT '{1.10000000000000000001,NULL,2}'::numeric[],
            '{9007199254740993,7,NULL,-1}'::int8[], '{0.30000000000000000001}'::numeric[], '{1.5}'::float8[] $$;
          COMMENT ON FUNCTION mcp_fixture_arrays.exact IS '@mcp Exact arrays.';`);
      try {
        const loaded = await loadRoutineTools(setup.db, {
          schemas: ['mcp_fixture_arrays'],
          allowWrites: false,
          statementTimeoutMs: TIMEOUT_MS,
        });
        const result = await call('exact', {}, undefined, new Map(loaded.map((t) => [t.name, t])));
        expect(result.structuredContent).toEqual({
          n: ['1.10000000000000000001', null, '2'],
          i: ['9007199254740993', 7, null, -1],
          a: ['0.30000000000000000001'],
          f: [1.5],
        });
      } finally {
        await setup.admin('DROP SCHEMA IF EXISTS mcp_fixture_arrays CASCADE');
      }
    });

    it('refuses a bytea argument that is not base64, rather than decoding it to garbage', async () => {
      const registry = createRegistry();
      registry.addTool(tools.get('type_echo')!);
      const entry = registry.tool('type_echo')!;
      for (const bad of ['!!!', 'hello world', 'abcde']) {
        const issues = entry.validate({ ...TYPE_ECHO_ARGS, v_bytea: bad });
        expect(issues?.join('; ')).toMatch(/arguments\.v_bytea must match pattern/);
        const error = await failure('type_echo', { ...TYPE_ECHO_ARGS, v_bytea: bad });
        expect(error.code).toBe('PGMCP301');
        expect(error.message).toContain('base64');
      }
      for (const good of ['', 'aGk', 'aGk=', 'aGVsbG8gd29ybGQ=']) {
        expect(entry.validate({ ...TYPE_ECHO_ARGS, v_bytea: good })).toBeNull();
      }
    });

    it('maps each return shape', async () => {
      expect((await call('add_numbers', { a: 1 })).structuredContent).toEqual({ value: 11 });
      expect((await call('add_numbers', { a: 1, b: 2 })).structuredContent).toEqual({ value: 3 });
      expect((await call('sum_all', { nums: [1, 2, 3] })).structuredContent).toEqual({ value: 6 });
      expect((await call('split_name', { full_name: 'Ada Lovelace' })).structuredContent).toEqual({
        first_name: 'Ada',
        last_name: 'Lovelace',
      });
      expect((await call('series', { n: 3 })).structuredContent).toEqual({ items: [1, 2, 3] });
      expect((await call('item_rows', {})).structuredContent).toEqual({
        items: [
          { id: 1, label: 'apple', price: 1.5, tags: ['fruit'] },
          { id: 2, label: 'bread', price: 2.25, tags: ['bakery', 'fresh'] },
        ].map((i) => ({ ...i, price: i.price === 1.5 ? '1.50' : '2.25' })),
      });
      expect((await call('top_items', { max_count: 1 })).structuredContent).toEqual({
        items: [{ id: 1, label: 'apple' }],
      });
      expect(
        (await call('reprice', { item: { id: 7, label: 'x', price: '1.5', tags: ['a'] } }))
          .structuredContent,
      ).toEqual({ id: 7, label: 'x', price: '3.0', tags: ['a'] });
      expect((await call('next_mood', { m: 'sad' })).structuredContent).toEqual({ value: 'ok' });
      expect((await call('normalize_code', { code: 'ABC' })).structuredContent).toEqual({
        value: 'ABC',
      });
      expect((await call('reverse_array', { vals: ['a', null, 'c'] })).structuredContent).toEqual({
        value: ['c', null, 'a'],
      });
      expect((await call('concat_pair', { arg1: 'hi' })).structuredContent).toEqual({
        value: 'hi!',
      });
      expect((await call('scale', { x: '1.25' })).structuredContent).toEqual({ value: '2.50' });
      expect((await call('scale_int', { x: 4 })).structuredContent).toEqual({ value: 8 });
    });

    it('caps set-returning routines at maxRows and maxResultBytes, and says so', async () => {
      // STABLE/IMMUTABLE: one round trip, capped as rows arrive.
      const rows = await call('series', { n: 10 }, undefined, capped);
      expect(rows.structuredContent).toEqual({ items: [1, 2, 3], truncated: true });
      expect(rows.content[1]).toEqual({
        type: 'text',
        text: expect.stringMatching(/^Truncated: only the first 3 rows .*database\.maxRows = 3/),
      });
      expect((await call('series', { n: 3 }, undefined, capped)).structuredContent).toEqual({
        items: [1, 2, 3],
      });
      expect((await call('series', { n: 3 }, undefined, capped)).content).toHaveLength(1);
      // VOLATILE: LIMIT inside its transaction.
      expect((await call('random_draws', { n: 5 }, undefined, capped)).structuredContent).toEqual({
        items: [1, 2, 3].map((g) => ({ draw: g, label: `draw ${g}` })),
        truncated: true,
      });
      expect((await call('random_draws', { n: 2 })).structuredContent).toEqual({
        items: [1, 2].map((g) => ({ draw: g, label: `draw ${g}` })),
      });
      // One value above the byte cap is refused rather than cut (the cut would break the schema).
      const wide = await call('concat_pair', { arg1: 'x'.repeat(2000) }, undefined, capped).catch(
        (e: unknown) => e,
      );
      expect(wide).toBeInstanceOf(AppError);
      expect((wide as AppError).code).toBe('PGMCP207');
    });

    it('enforces domains in the database', async () => {
      const error = await failure('normalize_code', { code: 'abc' });
      expect(error.details?.['sqlstate']).toBe('23514');
    });

    it('hands the caller identity to the function, transaction-locally', async () => {
      expect((await call('whoami', {}, USER)).structuredContent).toEqual({
        items: [{ user_id: 'user-17', tenant_id: 'tenant-3' }],
      });
      expect((await call('whoami', {})).structuredContent).toEqual({
        items: [{ user_id: '', tenant_id: '' }],
      });
    });

    it('checks @authorize roles before calling', async () => {
      expect((await failure('secret_number', {})).category).toBe('auth');
      const viewer = { ...USER, roles: ['viewer'] };
      const refused = await failure('secret_number', {}, viewer);
      expect(refused.category).toBe('forbidden');
      expect(refused.message).toContain('admin, auditor');
      expect((await call('secret_number', {}, USER)).structuredContent).toEqual({ value: 42 });
      // Listed only to callers who pass @authorize.
      const secret = tools.get('secret_number')!;
      expect(secret.allows?.(USER)).toBe(true);
      expect(secret.allows?.(viewer)).toBe(false);
      expect(secret.allows?.({ ...USER, kind: 'anonymous', userId: null, roles: [] })).toBe(false);
      expect(tools.get('add_numbers')!.allows).toBeUndefined();
    });

    it('maps RAISE to an error with SQLSTATE, detail and hint; PM404 is not_found', async () => {
      const missing = await failure('find_customer', { customer_id: 3 });
      expect(missing.category).toBe('not_found');
      expect(missing.message).toBe(
        'ERROR PM404: No customer 3.\nDETAIL: The customers table has no such id.\nHINT: List customers first.',
      );
      expect(missing.details).toMatchObject({
        sqlstate: 'PM404',
        hint: 'List customers first.',
        routine: 'mcp_fixture.find_customer',
      });
      const plain = await failure('find_customer', { customer_id: -1 });
      expect(plain.category).toBe('database');
      expect(plain.details?.['sqlstate']).toBe('P0001');
    });

    it('runs STABLE routines read-only even where writes are allowed', async () => {
      expect((await failure('sneaky_write', {}, undefined, writers)).details?.['sqlstate']).toBe(
        '25006',
      );
      expect(writers.get('sneaky_write')!.annotations?.readOnlyHint).toBe(true);
    });

    it('runs VOLATILE routines read-write only where writes are allowed', async () => {
      expect(tools.get('record_event')!.annotations?.readOnlyHint).toBe(true);
      expect((await failure('record_event', { note: 'no' })).details?.['sqlstate']).toBe('25006');
      expect(writers.get('record_event')!.annotations?.readOnlyHint).toBe(false);
      const done = await call('record_event', { note: 'yes' }, undefined, writers);
      expect(done.content[0]).toEqual({
        type: 'text',
        text: 'mcp_fixture.record_event completed.',
      });
      expect((await failure('log_event', { note: 'no' })).details?.['sqlstate']).toBe('25006');
      expect(
        (await call('log_event', { note: 'proc' }, undefined, writers)).structuredContent,
      ).toEqual({ total: 2 });
    });
  });
}

describe.skipIf(!pgInfo)('annotated routines', () => {
  suite('on PostgreSQL', () => onPostgres(pgInfo!));
});
suite('on the embedded PGlite', onEmbedded);
