// query_database's guards beyond the transaction: the access policy (tables, columns,
// masks), the plan cost limit, and confirmation of writes — on real PostgreSQL.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/core/content.js';
import { ErrorCodes } from '../../src/core/errors.js';
import { createSigner } from '../../src/core/signed.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createAccessPolicy, NO_RULES, type AccessRules } from '../../src/tools/access-policy.js';
import {
  createQueryDatabaseTool,
  type QueryDatabaseOptions,
} from '../../src/tools/query/query-database.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../../src/tools/sql-guard.js';
import { realPostgres, uniqueSchemaName, withClient } from '../helpers/postgres.js';

const pg = await realPostgres('test/integration/query-guards.test.ts (query_database guards)');
const schema = uniqueSchemaName('pgmcp_guard');
const LIMITS = {
  defaultRows: 100,
  maxRows: 1000,
  maxResultBytes: 1_048_576,
  statementTimeoutMs: 5_000,
};

describe.skipIf(!pg)('query_database guards on PostgreSQL', () => {
  let db: Database;

  const tool = (
    overrides: Partial<QueryDatabaseOptions> & { access?: Partial<AccessRules> } = {},
  ) =>
    createQueryDatabaseTool(db, {
      limits: LIMITS,
      allowWrites: false,
      deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
      maxPlanCost: null,
      maxPlanRows: null,
      signer: createSigner('guards'),
      ...overrides,
      policy: createAccessPolicy({ ...NO_RULES, ...overrides.access }),
    });
  const rowsOf = (result: ToolResult) => (result.structuredContent as { rows: unknown[][] }).rows;
  const textOf = (result: ToolResult) => (result.content[0] as { text: string }).text;

  beforeAll(async () => {
    await loadSqlParser();
    // Written as the admin role; the server connects with write grants on purpose, so the
    // confirmation tests can write (and the read-only guards are not helped by the role).
    await withClient(pg!.adminUrl, (client) =>
      client.query(`
        CREATE SCHEMA ${schema};
        CREATE TABLE ${schema}.people (id int PRIMARY KEY, name text, email text, ssn text);
        INSERT INTO ${schema}.people VALUES (1, 'Ada', 'ada@example.com', '111-22-3333'), (2, 'Bob', 'bob@example.com', '444-55-6666');
        CREATE TABLE ${schema}.secrets (id int, token text);
        INSERT INTO ${schema}.secrets VALUES (1, 'hunter2');
        CREATE TABLE ${schema}.log (id serial PRIMARY KEY, note text);`),
    );
    db = await createDatabase(
      {
        url: pg!.adminUrl,
        poolSize: 2,
        embedded: { dataDir: '', demo: false },
      },
      pino({ level: 'silent' }),
    );
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    if (pg)
      await withClient(pg.adminUrl, (client) =>
        client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`),
      );
  });

  describe('access policy', () => {
    const access = {
      denyTables: [`${schema}.secrets`],
      denyColumns: ['*.ssn'],
      maskColumns: ['people.email'],
    };

    it('hides a denied table as if it did not exist', async () => {
      const call = tool({ access }).call(
        { query: `select token from ${schema}.secrets` },
        createFakeContext().ctx,
      );
      await expect(call).rejects.toMatchObject({ details: { sqlstate: '42P01' } });
      await expect(call).rejects.toThrow(/relation ".*secrets" does not exist/);
    });

    it('refuses denied columns, * and whole-row values on a table that has them', async () => {
      for (const query of [
        `select ssn from ${schema}.people`,
        `select * from ${schema}.people`,
        `select p from ${schema}.people p`,
        `select id from ${schema}.people where ssn like '1%'`,
      ]) {
        await expect(
          tool({ access }).call({ query }, createFakeContext().ctx),
          query,
        ).rejects.toMatchObject({
          category: 'forbidden',
        });
      }
    });

    it('masks configured columns, and values computed from them', async () => {
      const plain = await tool({ access }).call(
        { query: `select id, name, email from ${schema}.people order by id` },
        createFakeContext().ctx,
      );
      expect(rowsOf(plain)).toEqual([
        [1, 'Ada', '****'],
        [2, 'Bob', '****'],
      ]);
      expect(textOf(plain)).not.toContain('example.com');
      const derived = await tool({ access }).call(
        { query: `select id, upper(email) as shout from ${schema}.people order by id` },
        createFakeContext().ctx,
      );
      expect(rowsOf(derived)).toEqual([
        [1, '****'],
        [2, '****'],
      ]);
    });

    it('is not fooled by CTE names, attribute notation, whole-row values or statistics', async () => {
      const refused = [
        `select 1 from ${schema}.people where exists (with secrets as (select 1) select 1 from ${schema}.secrets)`,
        `select p.row_to_json from ${schema}.people p`,
        `select most_common_vals::text from pg_stats where tablename = 'people'`,
        `select * from pg_catalog.pg_statistic`,
      ];
      for (const query of refused) {
        await expect(
          tool({ access }).call({ query }, createFakeContext().ctx),
          query,
        ).rejects.toThrow();
      }
      // A CTE shadowing the denied table's name, in the same scope, stays a CTE.
      const shadow = await tool({ access }).call(
        { query: 'with secrets as (select 1 as x) select x from secrets' },
        createFakeContext().ctx,
      );
      expect(rowsOf(shadow)).toEqual([[1]]);
      const whole = await tool({ access: { maskColumns: ['people.email'] } }).call(
        { query: `select row_to_json(p)::text as j from ${schema}.people p order by id` },
        createFakeContext().ctx,
      );
      expect(rowsOf(whole)).toEqual([['****'], ['****']]);
    });

    it('leaves everything visible without rules', async () => {
      const result = await tool().call(
        { query: `select ssn from ${schema}.people order by id` },
        createFakeContext().ctx,
      );
      expect(rowsOf(result)).toEqual([['111-22-3333'], ['444-55-6666']]);
    });
  });

  describe('plan cost guard', () => {
    it('refuses a statement estimated above the limits, before running it, and says how to narrow it', async () => {
      const call = tool({ maxPlanRows: 500 }).call(
        { query: 'select g from generate_series(1, 100000) g' },
        createFakeContext().ctx,
      );
      await expect(call).rejects.toMatchObject({ code: ErrorCodes.TOOL_INPUT_INVALID });
      await expect(call).rejects.toThrow(/estimated to produce 100000 rows.*Narrow the query/s);
      const costly = tool({ maxPlanCost: 1 }).call(
        {
          query: `select count(*) from ${schema}.people a, ${schema}.people b, ${schema}.people c`,
        },
        createFakeContext().ctx,
      );
      await expect(costly).rejects.toThrow(/estimated cost \d+ is above the limit 1/);
    });

    it('refuses EXPLAIN ANALYZE when plan limits apply (it would run the query unjudged)', async () => {
      await expect(
        tool({ maxPlanRows: 500 }).call(
          { query: 'explain analyze select g from generate_series(1, 100000) g' },
          createFakeContext().ctx,
        ),
      ).rejects.toThrow(/EXPLAIN ANALYZE runs the query/);
    });

    it('lets a statement under the limits run', async () => {
      const result = await tool({ maxPlanRows: 500, maxPlanCost: 1_000 }).call(
        { query: `select id from ${schema}.people where id = $1`, params: [1] },
        createFakeContext().ctx,
      );
      expect(rowsOf(result)).toEqual([[1]]);
    });
  });

  describe('role', () => {
    const statement = (sql: string) => ({
      sql,
      params: [],
      offset: 0,
      limit: 10,
      maxBytes: 100_000,
      readOnly: true,
      timeoutMs: 5_000,
      principal: createFakeContext().ctx.principal,
    });

    it('a role set on the session by one call does not carry into the next', async () => {
      const login = (await db.runStatement(statement('select current_user::text'))).rows[0]![0];
      await db.runStatement(statement(`select set_config('role', '${pg!.role}', false)`));
      expect((await db.runStatement(statement('select current_user::text'))).rows).toEqual([
        [login],
      ]);
    });

    it('runs every call as the configured role', async () => {
      const asRole = await createDatabase(
        {
          url: pg!.adminUrl,
          poolSize: 1,
          embedded: { dataDir: '', demo: false },
          role: pg!.role,
        },
        pino({ level: 'silent' }),
      );
      try {
        const result = await asRole.runStatement(statement('select current_user::text'));
        expect(result.rows).toEqual([[pg!.role]]);
      } finally {
        await asRole.close();
      }
    });
  });

  describe('write confirmation', () => {
    const notes = async () =>
      withClient(pg!.adminUrl, async (c) =>
        (await c.query(`select note from ${schema}.log order by id`)).rows.map((r) => r.note),
      );
    const writer = () => tool({ allowWrites: true });
    const noElicitation = () => createFakeContext({ capabilities: [] }).ctx;

    it('previews a write with a nonce, runs it once confirmed, and only once', async () => {
      const insert = { query: `insert into ${schema}.log (note) values ($1)`, params: ['first'] };
      const t = writer();
      const preview = await t.call(insert, noElicitation());
      expect(preview.isError).toBeFalsy();
      expect(textOf(preview)).toMatch(/has NOT run yet/);
      const nonce = (preview.structuredContent as { confirmation: { nonce: string } }).confirmation
        .nonce;
      expect(await notes()).toEqual([]);

      await expect(
        t.call({ ...insert, params: ['other'], confirm: nonce }, noElicitation()),
      ).rejects.toThrow(/differ from the preview/);
      const done = await t.call({ ...insert, confirm: nonce }, noElicitation());
      expect(done.structuredContent).toMatchObject({
        command: 'INSERT',
        rowCount: 0,
        rowsAffected: 1,
      });
      expect(await notes()).toEqual(['first']);
      await expect(t.call({ ...insert, confirm: nonce }, noElicitation())).rejects.toThrow(
        /already used/,
      );
      await expect(t.call({ ...insert, confirm: 'forged.nonce' }, noElicitation())).rejects.toThrow(
        /not valid/,
      );
      expect(await notes()).toEqual(['first']);
    });

    it('asks the user through elicitation where the client supports it', async () => {
      const insert = { query: `insert into ${schema}.log (note) values ($1)`, params: ['asked'] };
      const declined = await writer().call(
        insert,
        createFakeContext({ answers: { confirm: { action: 'decline' } } }).ctx,
      );
      expect(textOf(declined)).toMatch(/Not run/);
      expect(await notes()).toEqual(['first']);
      const accepted = await writer().call(
        insert,
        createFakeContext({ answers: { confirm: { action: 'accept', content: { run: true } } } })
          .ctx,
      );
      expect(accepted.isError).toBeFalsy();
      expect(await notes()).toEqual(['first', 'asked']);
    });

    describe('the preview estimates the rows the statement writes', () => {
      // Planned on freshly analyzed small tables, whose estimates are exact.
      const table = `${schema}.fifty`;
      beforeAll(async () => {
        await withClient(pg!.adminUrl, (client) =>
          client.query(`
            CREATE TABLE ${table} (id int PRIMARY KEY, v text);
            INSERT INTO ${table} SELECT g, 'x' FROM generate_series(1, 50) g;
            CREATE TABLE ${schema}.parts (id int, v text) PARTITION BY RANGE (id);
            CREATE TABLE ${schema}.parts_a PARTITION OF ${schema}.parts FOR VALUES FROM (0) TO (100);
            CREATE TABLE ${schema}.parts_b PARTITION OF ${schema}.parts FOR VALUES FROM (100) TO (200);
            INSERT INTO ${schema}.parts SELECT g, 'x' FROM generate_series(81, 110) g;
            CREATE TABLE ${schema}.base (id int);
            CREATE TABLE ${schema}.derived () INHERITS (${schema}.base);
            INSERT INTO ${schema}.base SELECT generate_series(1, 10);
            INSERT INTO ${schema}.derived SELECT generate_series(1, 20);
            ANALYZE ${table}, ${schema}.parts, ${schema}.base, ${schema}.derived;`),
        );
      });
      const preview = async (query: string) => {
        const result = await writer().call({ query }, noElicitation());
        const { estimatedRows } = (
          result.structuredContent as { confirmation: { estimatedRows: number | null } }
        ).confirmation;
        return { estimatedRows, text: textOf(result) };
      };

      it.each([
        ['delete from fifty', `delete from ${table}`, 50],
        ['update … where id = 1', `update ${table} set v = 'y' where id = 1`, 1],
        ['update with a subquery', `update ${table} set v = 'y' where id = (select 1)`, 1],
        ['delete from a partitioned table', `delete from ${schema}.parts`, 30],
        ['delete from an inherited table', `delete from ${schema}.base`, 30],
        ['insert … values', `insert into ${table} values (101, 'a'), (102, 'b'), (103, 'c')`, 3],
        [
          'insert … select',
          `insert into ${table} select g, 'z' from generate_series(201, 207) g`,
          7,
        ],
        [
          'a data-modifying WITH',
          `with d as (delete from ${table} where id > 45 returning id) select count(*) from d`,
          5,
        ],
        [
          'a WITH that deletes, under an insert',
          `with d as (delete from ${table} where id > 45 returning id) insert into ${schema}.log (note) select id::text from d`,
          10,
        ],
      ])('%s', async (_name, query, rows) => {
        const { estimatedRows, text } = await preview(query);
        expect(estimatedRows).toBe(rows);
        expect(text).toContain(`(the planner estimates it writes ${rows} row`);
      });

      it('gives no estimate, rather than 0, for a write the planner cannot estimate', async () => {
        const { estimatedRows, text } = await preview(`create table ${schema}.never (id int)`);
        expect(estimatedRows).toBeNull();
        expect(text).not.toMatch(/planner estimates/);
      });

      it('tells the user through elicitation too', async () => {
        const fake = createFakeContext({ answers: { confirm: { action: 'decline' } } });
        await writer().call({ query: `delete from ${table}` }, fake.ctx);
        expect(JSON.stringify(fake.inputRequests)).toContain(
          'the planner estimates it writes 50 rows',
        );
        expect(
          await withClient(pg!.adminUrl, async (c) =>
            Number((await c.query(`select count(*) from ${table}`)).rows[0].count),
          ),
        ).toBe(50);
      });
    });

    it('reports the rows a confirmed write wrote, apart from the rows it returned', async () => {
      const table = `${schema}.doomed`;
      await withClient(pg!.adminUrl, (client) =>
        client.query(`
          CREATE TABLE ${table} (id int PRIMARY KEY);
          INSERT INTO ${table} SELECT generate_series(1, 50);`),
      );
      const t = writer();
      const run = async (args: { query: string; limit?: number }, ctx = noElicitation()) => {
        const preview = await t.call(args, ctx);
        const nonce = (preview.structuredContent as { confirmation: { nonce: string } })
          .confirmation.nonce;
        return t.call({ ...args, confirm: nonce }, noElicitation());
      };

      const deleted = await run({ query: `delete from ${table} where id > 45` });
      expect(textOf(deleted)).toContain('DELETE 5');
      expect(deleted.structuredContent).toMatchObject({
        command: 'DELETE',
        rowCount: 0,
        rowsAffected: 5,
      });
      const updated = await run({ query: `update ${table} set id = id + 100 where id <= 3` });
      expect(updated.structuredContent).toMatchObject({ command: 'UPDATE', rowsAffected: 3 });
      // RETURNING pages like a read: rowCount counts the rows returned, rowsAffected the rows
      // written; past the page PostgreSQL sends no count, and none is made up.
      const returned = await run({
        query: `insert into ${table} select generate_series(201, 203) returning id`,
      });
      expect(returned.structuredContent).toMatchObject({ rowCount: 3, rowsAffected: 3 });
      const paged = await run({
        query: `insert into ${table} select generate_series(204, 210) returning id`,
        limit: 4,
      });
      expect(paged.structuredContent).toMatchObject({
        rowCount: 4,
        truncated: true,
        rowsAffected: null,
        // No page to ask for: asking again would run the insert again.
        nextOffset: null,
      });
      expect(textOf(paged)).toMatch(
        /\n4 rows; the write returned more rows than are shown\. It ran once: running it again, with an offset or not, would write again\.$/,
      );
      // Confirmed through elicitation, the same.
      const asked = await writer().call(
        { query: `delete from ${table} where id > 200` },
        createFakeContext({ answers: { confirm: { action: 'accept', content: { run: true } } } })
          .ctx,
      );
      expect(asked.structuredContent).toMatchObject({ command: 'DELETE', rowsAffected: 10 });
      // A SELECT's count under a data-modifying WITH is not the rows written.
      const viaWith = await run({
        query: `with d as (delete from ${table} where id > 100 returning id) select count(*)::int as n from d`,
      });
      expect(viaWith.structuredContent).toMatchObject({ rows: [[3]], rowsAffected: null });
      // A read reports no rowsAffected at all.
      const read = await t.call({ query: `select count(*)::int from ${table}` }, noElicitation());
      expect(read.structuredContent).not.toHaveProperty('rowsAffected');
      // DDL reports its whole command tag, not its first word, and wrote no rows.
      const created = await run({ query: `create table ${table}_ddl (id int)` });
      expect(created.structuredContent).toMatchObject({
        command: 'CREATE TABLE',
        rowsAffected: null,
      });
      expect(textOf(created)).toContain('CREATE TABLE');
      const altered = await run({ query: `alter table ${table}_ddl add column note text` });
      expect(altered.structuredContent).toMatchObject({
        command: 'ALTER TABLE',
        rowsAffected: null,
      });
    });

    it('applies the access policy to the table a write targets', async () => {
      const denied = tool({ allowWrites: true, access: { denyTables: [`${schema}.secrets`] } });
      await expect(
        denied.call({ query: `delete from ${schema}.secrets` }, noElicitation()),
      ).rejects.toMatchObject({ details: { sqlstate: '42P01' } });
    });

    it('refuses writing to pg_settings', async () => {
      await expect(
        writer().call(
          { query: `update pg_settings set setting = 'x' where name = 'search_path'` },
          noElicitation(),
        ),
      ).rejects.toThrow(/pg_settings/);
    });

    it('still refuses transaction control and session settings on a writable database', async () => {
      await expect(writer().call({ query: 'commit' }, noElicitation())).rejects.toThrow(
        /transaction control/,
      );
      await expect(
        writer().call(
          { query: `select set_config('statement_timeout', '0', false)` },
          noElicitation(),
        ),
      ).rejects.toThrow(/set_config/);
    });
  });
});
