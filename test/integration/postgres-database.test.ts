// The database layer and query_database against a real PostgreSQL (as the non-superuser role
// pgmcp_test, fixtures in this file's own schema) and, with the same tests, against the
// embedded PGlite: transaction-local safety settings, the caller's identity, timeouts,
// cancellation, row and byte caps, and values as PostgreSQL returns them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ErrorCodes } from '../../src/core/errors.js';
import { ANONYMOUS, type Principal } from '../../src/core/principal.js';
import type { ToolResult } from '../../src/core/content.js';
import type { ToolSpec } from '../../src/core/specs.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createSigner } from '../../src/core/signed.js';
import { createAccessPolicy, NO_RULES } from '../../src/tools/access-policy.js';
import { createQueryDatabaseTool } from '../../src/tools/query/query-database.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../../src/tools/sql-guard.js';
import {
  createFixtureSchema,
  fixtureSql,
  realPostgres,
  uniqueSchemaName,
  type RealPostgres,
} from '../helpers/postgres.js';

const pg = await realPostgres(
  'test/integration/postgres-database.test.ts (database layer on PostgreSQL)',
);

const TIMEOUT_MS = 1_500; // PostgreSQL shows it as '1500ms' (1000 would read '1s')
const LIMITS = {
  defaultRows: 100,
  maxRows: 1000,
  maxResultBytes: 1_048_576,
  statementTimeoutMs: TIMEOUT_MS,
};
const logger = pino({ level: 'silent' });
const queryTool = (db: Database, limits: typeof LIMITS) =>
  createQueryDatabaseTool(db, {
    limits,
    allowWrites: false,
    deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
    policy: createAccessPolicy(NO_RULES),
    maxPlanCost: null,
    maxPlanRows: null,
    signer: createSigner('test'),
  });

interface Setup {
  db: Database;
  schema: string;
  cleanup(): Promise<void>;
}

async function onPostgres(info: RealPostgres): Promise<Setup> {
  const fixture = await createFixtureSchema(info, 'pgmcp_int');
  // A pool of one, so the test can see what a previous call left on the connection.
  const db = await createDatabase(
    {
      url: info.url,
      poolSize: 1,
      embedded: { dataDir: '/nonexistent', demo: false },
    },
    logger,
  );
  return {
    db,
    schema: fixture.name,
    async cleanup() {
      await db.close();
      await fixture.drop();
    },
  };
}

async function onEmbedded(): Promise<Setup> {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-int-embedded-'));
  const db = await createDatabase(
    {
      url: null,
      poolSize: 1,
      embedded: { dataDir: join(root, 'data'), demo: false },
    },
    logger,
  );
  const schema = uniqueSchemaName('pgmcp_int');
  await db.withOwnConnection((c) => c.query(fixtureSql(schema)));
  return {
    db,
    schema,
    async cleanup() {
      await db.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

const targets: Array<[string, () => Promise<Setup>, boolean]> = [
  ['PostgreSQL', () => onPostgres(pg!), !pg],
  ['the embedded database', onEmbedded, false],
];

describe.each(targets)('database layer on %s', (_name, setup, skip) => {
  let s: Setup;
  let tool: ToolSpec;

  const call = (
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; principal?: Principal } = {},
  ) => tool.call(args, createFakeContext(options).ctx);
  const rows = async (
    sql: string,
    params: unknown[] = [],
    principal?: Principal,
  ): Promise<unknown[][]> =>
    ((await call({ query: sql, params }, { principal })).structuredContent as { rows: unknown[][] })
      .rows;
  /** A statement straight to the database layer, past the parser's checks. */
  const direct = () => ({
    params: [],
    offset: 0,
    limit: 10,
    maxBytes: 1_000_000,
    readOnly: true,
    timeoutMs: TIMEOUT_MS,
    principal: ANONYMOUS,
  });
  /** The database works again (the embedded child may be restarting after an interruption). */
  const recovered = () =>
    vi.waitFor(async () => expect(await rows('select 1')).toEqual([[1]]), {
      timeout: 15_000,
      interval: 200,
    });

  beforeAll(async () => {
    if (skip) return;
    s = await setup();
    await loadSqlParser();
    tool = queryTool(s.db, LIMITS);
  }, 120_000);

  afterAll(async () => {
    await s?.cleanup();
  }, 30_000);

  describe.skipIf(skip)('query_database and withTransaction', () => {
    it('reads rows through a cursor and reports health', async () => {
      expect(
        await rows(`select id, name from ${s.schema}.items where id in (1, 25) order by id`),
      ).toEqual([
        [1, 'item 01'],
        [25, 'item 25'],
      ]);
      expect(await s.db.health()).toEqual({ ok: true, database: 'up' });
    });

    it('runs every call READ ONLY: writes fail with SQLSTATE 25006', async () => {
      // The parser refuses it first, in PostgreSQL's words …
      await expect(call({ query: `delete from ${s.schema}.items` })).rejects.toMatchObject({
        code: ErrorCodes.WRITE_NOT_ALLOWED,
        details: { sqlstate: '25006' },
      });
      // … and the transaction itself refuses it too (the first wall, without the parser), as
      // the same refusal of a write in a read-only call.
      await expect(
        s.db.runStatement({ ...direct(), sql: `delete from ${s.schema}.items` }),
      ).rejects.toMatchObject({
        code: ErrorCodes.WRITE_NOT_ALLOWED,
        category: 'input',
        details: { sqlstate: '25006' },
      });
      expect(await rows(`select count(*)::int from ${s.schema}.items`)).toEqual([[25]]);
    });

    it('hands the caller’s identity and the timeout to PostgreSQL transaction-locally', async () => {
      const principal: Principal = {
        ...ANONYMOUS,
        kind: 'token',
        userId: 'u-17',
        tenantId: 't-3',
        claims: { plan: 'pro' },
      };
      const inside = await rows(
        `select current_setting('auth.user_id'), current_setting('auth.tenant_id'),
                current_setting('auth.claims'), current_setting('statement_timeout'),
                current_setting('transaction_read_only')`,
        [],
        principal,
      );
      expect(inside).toEqual([['u-17', 't-3', '{"plan":"pro"}', `${TIMEOUT_MS}ms`, 'on']]);
      // Nothing of it stays on the connection once the transaction is over.
      const after = await s.db.withOwnConnection((c) =>
        c.query<{ u: string | null; t: string }>(
          `select current_setting('auth.user_id', true) as u, current_setting('statement_timeout') as t`,
        ),
      );
      expect(['', null]).toContain(after.rows[0]!.u);
      expect(after.rows[0]!.t).not.toBe(`${TIMEOUT_MS}ms`);
    });

    it('a setting a query plants on the session does not reach the next call', async () => {
      // query_database refuses set_config outright; a function could still call it, so the
      // database layer must not carry such a setting into the next call.
      await expect(
        call({ query: `select set_config('statement_timeout', '0', false)` }),
      ).rejects.toThrow(/set_config/);
      await s.db.runStatement({
        ...direct(),
        sql: `select set_config('auth.user_id', 'mallory', false), set_config('statement_timeout', '0', false)`,
      });
      expect(
        await rows(`select current_setting('auth.user_id'), current_setting('statement_timeout')`),
      ).toEqual([['', `${TIMEOUT_MS}ms`]]);
    });

    it('one value per placeholder: a wrong count is the caller’s error, and the connection stays', async () => {
      await expect(call({ query: 'select $1::int as n', params: [] })).rejects.toThrow(
        /placeholders up to \$1, so params needs 1 value \(\$1 is params\[0\]\); it has 0/,
      );
      await expect(call({ query: 'select $2::int as n', params: [7] })).rejects.toMatchObject({
        code: ErrorCodes.TOOL_INPUT_INVALID,
        details: { placeholders: 2, params: 1 },
      });
      await expect(call({ query: 'select 1 as n', params: [1, 2] })).rejects.toThrow(
        /no \$1, \$2 … placeholders, but params has 2 values/,
      );
      expect(await rows('select $1::int + $2::int', [1, 2])).toEqual([[3]]);
      // Past the parser (a generated call gone wrong): PostgreSQL refuses the Bind with an
      // ERROR (08P01), which leaves the session as it was: not "database unavailable".
      const pid = async () => (await rows('select pg_backend_pid()'))[0]![0];
      const before = await pid();
      const refused = await s.db.runStatement({ ...direct(), sql: 'select $1::int' }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({ code: ErrorCodes.DB_QUERY_FAILED });
      expect(String((refused as Error).message)).toMatch(/bind message supplies 0 parameters/);
      expect(await pid()).toBe(before);
    });

    it('stops a statement at the timeout and says so', async () => {
      const started = Date.now();
      await expect(call({ query: 'select pg_sleep(10)' })).rejects.toMatchObject({
        code: ErrorCodes.DB_TIMEOUT,
        category: 'timeout',
        details: { sqlstate: '57014' },
      });
      expect(Date.now() - started).toBeLessThan(8_000);
      await recovered();
    });

    it('stops a statement when the request is cancelled', async () => {
      const controller = new AbortController();
      const started = Date.now();
      const pending = call({ query: 'select pg_sleep(10)' }, { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('cancelled by the test')), 300);
      await expect(pending).rejects.toMatchObject({ code: ErrorCodes.DB_CANCELLED });
      expect(Date.now() - started).toBeLessThan(8_000);
      await recovered();
    });

    it('caps rows and bytes, and says where to continue', async () => {
      const capped = queryTool(s.db, { ...LIMITS, maxResultBytes: 200 });
      const result = await capped.call(
        { query: `select id, name, note from ${s.schema}.items order by id` },
        createFakeContext().ctx,
      );
      const structured = result.structuredContent as {
        rowCount: number;
        truncated: boolean;
        nextOffset: number;
      };
      expect(structured.truncated).toBe(true);
      expect(structured.rowCount).toBeGreaterThan(0);
      expect(structured.rowCount).toBeLessThan(25);
      expect(structured.nextOffset).toBe(structured.rowCount);
      const text = (result.content[0] as { text: string }).text;
      expect(text).toContain(
        `(stopped at the 200-byte result cap); more available — use offset=${structured.nextOffset}.`,
      );
    });

    it('cuts a lone row over the byte cap and says no more rows follow, or where they start', async () => {
      const capped = queryTool(s.db, { ...LIMITS, maxResultBytes: 200 });
      const text = (r: ToolResult): string => (r.content[0] as { text: string }).text;
      const one = await capped.call(
        { query: "select repeat('x', 5000) as big" },
        createFakeContext().ctx,
      );
      expect(one.structuredContent).toMatchObject({
        truncated: false,
        valuesCut: true,
        nextOffset: null,
      });
      expect(text(one)).toMatch(/\[cut: \d+ of 5000 characters\]/);
      expect(text(one)).toMatch(
        /\n1 row; its long values are cut to fit the 200-byte result cap \(select a part: left\(column, n\), length\(column\)\); no more rows\.$/,
      );
      const two = await capped.call(
        { query: "select repeat('x', 5000) as big union all select 'small'" },
        createFakeContext().ctx,
      );
      expect(two.structuredContent).toMatchObject({
        truncated: true,
        valuesCut: true,
        nextOffset: 1,
      });
      expect(text(two)).toMatch(
        /cut to fit the 200-byte result cap .*; more available — use offset=1\.$/,
      );
    });

    it('returns values as PostgreSQL has them', async () => {
      const [row] = await rows(
        `select 9007199254740993::bigint, 1.50::numeric(4,2), 2.5::float8, true, null::text,
                '{"a":[1,2]}'::jsonb, array[1,2,3], '\\x00ff'::bytea, '2024-02-29'::date,
                'a\tb'::text`,
      );
      expect(row).toEqual([
        '9007199254740993',
        '1.50',
        2.5,
        true,
        null,
        { a: [1, 2] },
        [1, 2, 3],
        '\\x00ff',
        '2024-02-29',
        'a\tb',
      ]);
    });

    it('keeps numeric and date/time arrays as PostgreSQL writes them', async () => {
      const [row] = await rows(
        `select array[1.10000000000000000001, null, 2]::numeric[],
                array['2024-03-01'::date], array['2024-03-01 12:00:00.123456'::timestamp],
                array['2024-03-01 12:00:00.123456+00'::timestamptz]::text::timestamptz[],
                array[9007199254740993::bigint]`,
      );
      expect(row).toEqual([
        ['1.10000000000000000001', null, '2'],
        ['2024-03-01'],
        ['2024-03-01 12:00:00.123456'],
        [expect.stringMatching(/^2024-03-01 \d\d:00:00\.123456[+-]\d\d/)],
        ['9007199254740993'],
      ]);
    });

    it('maps SQL errors with every field PostgreSQL gave', async () => {
      await expect(call({ query: `select nme from ${s.schema}.items` })).rejects.toMatchObject({
        category: 'database',
        details: { sqlstate: '42703', position: '8' },
      });
      await expect(call({ query: `select 1/0` })).rejects.toMatchObject({
        details: { sqlstate: '22012' },
      });
    });
  });
});
