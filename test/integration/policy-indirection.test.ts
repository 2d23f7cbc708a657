// The access policy and the credential wall through indirection, on real PostgreSQL as a
// superuser (the worst case): views (followed through pg_depend), SQL functions (bodies parsed),
// functions pgmcp cannot analyse, whole-row values, and masked columns that would decide rows.
// Each refusal must say why; ordinary analytics must still pass.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/core/content.js';
import { ErrorCodes, isAppError, type AppError } from '../../src/core/errors.js';
import { loadSnapshot } from '../../src/catalog/load.js';
import { createSigner } from '../../src/core/signed.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createAccessPolicy, NO_RULES, type AccessRules } from '../../src/tools/access-policy.js';
import { createQueryDatabaseTool } from '../../src/tools/query/query-database.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../../src/tools/sql-guard.js';
import { realPostgres, uniqueSchemaName, withClient } from '../helpers/postgres.js';

const pg = await realPostgres('test/integration/policy-indirection.test.ts (policy indirection)');
const s = uniqueSchemaName('pgmcp_ind');
const LIMITS = {
  defaultRows: 100,
  maxRows: 1000,
  maxResultBytes: 1_048_576,
  statementTimeoutMs: 5_000,
};

describe.skipIf(!pg)(
  'access policy and credentials through indirection (PostgreSQL, superuser)',
  () => {
    let db: Database;
    const tool = (access: Partial<AccessRules> = {}) =>
      createQueryDatabaseTool(db, {
        limits: LIMITS,
        allowWrites: false,
        deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
        maxPlanCost: null,
        maxPlanRows: null,
        signer: createSigner('indirection'),
        policy: createAccessPolicy({ ...NO_RULES, ...access }),
      });
    const policy = {
      denyTables: [`${s}.vault`],
      maskColumns: [`${s}.people.ssn`],
      allowFunctions: [`${s}.allowed_plpgsql`],
    };
    const run = (query: string, access: Partial<AccessRules> = policy): Promise<ToolResult> =>
      tool(access).call({ query }, createFakeContext().ctx);
    const rowsOf = (result: ToolResult) => (result.structuredContent as { rows: unknown[][] }).rows;

    beforeAll(async () => {
      await loadSqlParser();
      await withClient(pg!.adminUrl, (client) =>
        client.query(`
        CREATE SCHEMA ${s};
        CREATE TABLE ${s}.people (id int PRIMARY KEY, name text, city text, ssn text);
        INSERT INTO ${s}.people VALUES (1, 'Ada', 'Lisbon', '111-22-3333'), (2, 'Bob', 'Porto', '444-55-6666'), (3, 'Cy', 'Porto', '777-88-9999');
        CREATE TABLE ${s}.vault (id int, token text);
        INSERT INTO ${s}.vault VALUES (1, 'hunter2');
        CREATE TABLE ${s}.orders (id int, person_id int, amount numeric);
        INSERT INTO ${s}.orders VALUES (1, 1, 10), (2, 2, 20), (3, 2, 5);
        CREATE VIEW ${s}.vault_view AS SELECT token FROM ${s}.vault;
        CREATE VIEW ${s}.vault_view2 AS SELECT * FROM ${s}.vault_view;
        CREATE VIEW ${s}.people_ssn AS SELECT id, ssn FROM ${s}.people;
        CREATE VIEW ${s}.people_rows AS SELECT p.id, row_to_json(p)::text AS j FROM ${s}.people p;
        CREATE VIEW ${s}.people_public AS SELECT id, name, city FROM ${s}.people;
        CREATE VIEW ${s}.order_totals AS SELECT person_id, sum(amount) AS total FROM ${s}.orders GROUP BY person_id;
        CREATE FUNCTION ${s}.vault_fn() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT token FROM ${s}.vault $$;
        CREATE FUNCTION ${s}.vault_fn2() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT * FROM ${s}.vault_fn() $$;
        CREATE FUNCTION ${s}.ssn_of(int) RETURNS text LANGUAGE sql STABLE AS $$ SELECT ssn FROM ${s}.people WHERE id = $1 $$;
        CREATE FUNCTION ${s}.vault_plpgsql() RETURNS text LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN (SELECT token FROM ${s}.vault LIMIT 1); END $$;
        CREATE FUNCTION ${s}.allowed_plpgsql() RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN 7; END $$;
        CREATE FUNCTION ${s}.spend(int) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT sum(amount) FROM ${s}.orders WHERE person_id = $1 $$;
        CREATE FUNCTION ${s}.view_fn() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT token FROM ${s}.vault_view $$;
        CREATE VIEW ${s}.fn_view AS SELECT ${s}.vault_fn() AS t;
        CREATE VIEW ${s}.authid_view AS SELECT rolname, rolpassword FROM pg_catalog.pg_authid;
        CREATE VIEW ${s}.authid_rows AS SELECT a FROM pg_catalog.pg_authid a;
        CREATE VIEW ${s}.shadow_view AS SELECT usename, passwd FROM pg_catalog.pg_shadow;
        CREATE VIEW ${s}.role_names AS SELECT rolname FROM pg_catalog.pg_roles;
        CREATE FUNCTION ${s}.hashes() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT rolpassword FROM pg_authid $$;
        CREATE FUNCTION ${s}.hash_rows() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT to_jsonb(a)::text FROM pg_authid a $$;
        CREATE FUNCTION ${s}.hashes_plpgsql() RETURNS SETOF text LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN QUERY SELECT rolpassword FROM pg_authid; END $$;
        CREATE FUNCTION ${s}.hashes_dynamic() RETURNS SETOF text LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN QUERY EXECUTE 'SELECT rolpassword FROM pg_' || 'authid'; END $$;
        CREATE FUNCTION ${s}.raise_dynamic() RETURNS text LANGUAGE plpgsql STABLE AS $$ DECLARE h text; BEGIN EXECUTE 'SELECT rolpassword FROM pg_' || 'authid WHERE rolpassword IS NOT NULL LIMIT 1' INTO h; RAISE EXCEPTION 'hash %', h USING DETAIL = h; END $$;
        CREATE ROLE ${s}_pw LOGIN PASSWORD 'correct horse battery staple';
      `),
      );
      db = await createDatabase(
        { url: pg!.adminUrl, poolSize: 2, embedded: { dataDir: '', demo: false } },
        pino({ level: 'silent' }),
      );
    }, 60_000);

    afterAll(async () => {
      await db?.close();
      if (pg)
        await withClient(pg.adminUrl, (client) =>
          client.query(`DROP SCHEMA IF EXISTS ${s} CASCADE; DROP ROLE IF EXISTS ${s}_pw`),
        );
    });

    const refused = async (
      query: string,
      code: string,
      reason: RegExp,
      access?: Partial<AccessRules>,
    ) => {
      const error = await run(query, access).then(
        (r) => new Error(`ran: ${JSON.stringify(rowsOf(r))}`),
        (e: unknown) => e,
      );
      expect(error, query).toMatchObject({ code, category: 'forbidden' });
      expect((error as Error).message, query).toMatch(reason);
    };

    it('refuses credentials read directly, with or without a policy', async () => {
      for (const access of [{}, policy]) {
        await refused(
          'SELECT rolname, rolpassword FROM pg_authid',
          ErrorCodes.CREDENTIALS_REFUSED,
          /pg_authid\.rolpassword.*password hashes/,
          access,
        );
        await refused(
          'SELECT passwd FROM pg_shadow',
          ErrorCodes.CREDENTIALS_REFUSED,
          /pg_shadow\.passwd/,
          access,
        );
        await refused(
          "SELECT count(*) FROM pg_authid WHERE rolpassword LIKE 'SCRAM%'",
          ErrorCodes.CREDENTIALS_REFUSED,
          /rolpassword/,
          access,
        );
        await refused(
          'SELECT umoptions FROM pg_user_mapping',
          ErrorCodes.CREDENTIALS_REFUSED,
          /user-mapping options/,
          access,
        );
        await refused(
          'SELECT umoptions FROM pg_user_mappings',
          ErrorCodes.CREDENTIALS_REFUSED,
          /umoptions/,
          access,
        );
        await refused(
          'SELECT option_value FROM information_schema.user_mapping_options',
          ErrorCodes.CREDENTIALS_REFUSED,
          /option_value/,
          access,
        );
        await refused(
          'SELECT subconninfo FROM pg_subscription',
          ErrorCodes.CREDENTIALS_REFUSED,
          /connection strings/,
          access,
        );
        await refused(
          'SELECT a FROM pg_authid a',
          ErrorCodes.CREDENTIALS_REFUSED,
          /pg_authid/,
          access,
        );
        await refused(
          'SELECT row_to_json(a) FROM pg_authid a',
          ErrorCodes.CREDENTIALS_REFUSED,
          /pg_authid/,
          access,
        );
        await refused(
          'SELECT to_jsonb(a.*) FROM pg_catalog.pg_authid a',
          ErrorCodes.CREDENTIALS_REFUSED,
          /pg_authid/,
          access,
        );
        await refused(
          'SELECT * FROM pg_authid',
          ErrorCodes.CREDENTIALS_REFUSED,
          /pg_authid/,
          access,
        );
        await refused(
          'SELECT a.to_json FROM pg_authid a',
          ErrorCodes.CREDENTIALS_REFUSED,
          /pg_authid/,
          access,
        );
      }
    });

    it('refuses credentials through views and functions, with or without a policy', async () => {
      for (const access of [{}, policy]) {
        await refused(
          `SELECT * FROM ${s}.authid_view`,
          ErrorCodes.CREDENTIALS_REFUSED,
          /authid_view.*pg_authid\.rolpassword/,
          access,
        );
        await refused(
          `SELECT count(*) FROM ${s}.authid_rows`,
          ErrorCodes.CREDENTIALS_REFUSED,
          /authid_rows.*whole rows of pg_catalog\.pg_authid/,
          access,
        );
        await refused(
          `SELECT usename FROM ${s}.shadow_view`,
          ErrorCodes.CREDENTIALS_REFUSED,
          /pg_shadow\.passwd/,
          access,
        );
        await refused(
          `SELECT ${s}.hashes()`,
          ErrorCodes.CREDENTIALS_REFUSED,
          /function .*hashes reads pg_catalog\.pg_authid\.rolpassword/,
          access,
        );
        await refused(
          `SELECT * FROM ${s}.hash_rows()`,
          ErrorCodes.CREDENTIALS_REFUSED,
          /hash_rows/,
          access,
        );
      }
      // Without a policy a plpgsql function is refused when its body names the catalog …
      await refused(
        `SELECT ${s}.hashes_plpgsql()`,
        ErrorCodes.CREDENTIALS_REFUSED,
        /plpgsql.*pg_authid/,
        {},
      );
      // … and under a policy any function pgmcp cannot analyse is.
      await refused(
        `SELECT ${s}.hashes_plpgsql()`,
        ErrorCodes.FUNCTION_NOT_ANALYSABLE,
        /plpgsql.*allowFunctions/,
      );
      // A body that hides the name: the output screen withholds what reads like a hash.
      const dynamic = await run(`SELECT h FROM ${s}.hashes_dynamic() h WHERE h IS NOT NULL`, {});
      expect(JSON.stringify(rowsOf(dynamic))).not.toMatch(/SCRAM-SHA-256\$|md5[0-9a-f]{32}/);
      expect(rowsOf(dynamic)).toContainEqual(['[credential withheld]']);
      expect((dynamic.content[0] as { text: string }).text).toMatch(/withheld.*credential/);
      // … and from an error that carries one.
      const raised = await tool()
        .call({ query: `SELECT ${s}.raise_dynamic()` }, createFakeContext().ctx)
        .catch((e: unknown) => e);
      expect(isAppError(raised) && raised.details?.['sqlstate']).toBe('P0001');
      expect(JSON.stringify([(raised as Error).message, (raised as AppError).details])).not.toMatch(
        /SCRAM-SHA-256\$|md5[0-9a-f]{32}/,
      );
      expect((raised as Error).message).toMatch(/^ERROR P0001: \[credential withheld\]\nDETAIL:/);
      expect((raised as Error).message).toMatch(/3 values withheld as \[credential withheld\]/);
    });

    it('keeps harmless catalog reads working', async () => {
      expect(
        rowsOf(
          await run(`SELECT count(*)::int FROM ${s}.role_names WHERE rolname = '${s}_pw'`, {}),
        ),
      ).toEqual([[1]]);
      expect(
        rowsOf(await run(`SELECT rolname FROM pg_authid WHERE rolname = '${s}_pw'`, {})),
      ).toEqual([[`${s}_pw`]]);
      expect(
        rowsOf(
          await run(`SELECT rolname, rolpassword FROM pg_roles WHERE rolname = '${s}_pw'`, {}),
        ),
      ).toEqual([[`${s}_pw`, '********']]);
      expect(
        rowsOf(await run(`SELECT usename FROM pg_user WHERE usename = '${s}_pw'`, {})),
      ).toEqual([[`${s}_pw`]]);
    });

    it('refuses a denied table through views and functions, saying through which', async () => {
      await refused(
        `SELECT token FROM ${s}.vault_view`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        new RegExp(`view ${s}\\.vault_view reads ${s}\\.vault, which the access policy denies`),
      );
      await refused(
        `SELECT * FROM ${s}.vault_view2`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        new RegExp(
          `view ${s}\\.vault_view2 \\(through view ${s}\\.vault_view\\) reads ${s}\\.vault`,
        ),
      );
      await refused(
        `SELECT * FROM ${s}.vault_fn()`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        new RegExp(`function ${s}\\.vault_fn reads ${s}\\.vault`),
      );
      await refused(
        `SELECT ${s}.vault_fn2()`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        new RegExp(`vault_fn2 calls function ${s}\\.vault_fn reads`),
      );
      await refused(
        `SELECT ${s}.view_fn()`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        /view_fn: view .*vault_view reads/,
      );
      await refused(
        `SELECT t FROM ${s}.fn_view`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        /fn_view calls function .*vault_fn reads/,
      );
      await refused(
        `SELECT ${s}.vault_plpgsql()`,
        ErrorCodes.FUNCTION_NOT_ANALYSABLE,
        /vault_plpgsql is written in plpgsql/,
      );
      await refused(
        `SELECT id FROM ${s}.people WHERE id = ${s}.allowed_plpgsql() - 6 AND ${s}.vault_plpgsql() IS NULL`,
        ErrorCodes.FUNCTION_NOT_ANALYSABLE,
        /vault_plpgsql/,
      );
    });

    it('refuses masked columns through views, functions and whole rows', async () => {
      await refused(
        `SELECT ssn FROM ${s}.people_ssn`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        /reads the masked column .*people\.ssn/,
      );
      await refused(
        `SELECT j FROM ${s}.people_rows`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        /whole rows of .*people/,
      );
      await refused(
        `SELECT ${s}.ssn_of(1)`,
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        /ssn_of reads the masked column/,
      );
      // Whole rows named directly come back masked, as before.
      expect(rowsOf(await run(`SELECT p FROM ${s}.people p ORDER BY id`))).toEqual([
        ['****'],
        ['****'],
        ['****'],
      ]);
    });

    it('refuses masked columns that would decide rows or their order', async () => {
      const decides: [string, RegExp][] = [
        [`SELECT id FROM ${s}.people WHERE ssn = '111-22-3333'`, /WHERE uses "ssn"/],
        [`SELECT id FROM ${s}.people ORDER BY ssn`, /ORDER BY uses "ssn"/],
        [`SELECT id, ssn AS x FROM ${s}.people ORDER BY x`, /ORDER BY uses "x"/],
        [`SELECT ssn, id FROM ${s}.people ORDER BY 1`, /ORDER BY uses output column 1/],
        [`SELECT DISTINCT ON (ssn) id FROM ${s}.people`, /DISTINCT ON uses "ssn"/],
        [`SELECT DISTINCT ssn FROM ${s}.people`, /SELECT DISTINCT/],
        [`SELECT count(*) FROM ${s}.people GROUP BY ssn`, /GROUP BY uses "ssn"/],
        [`SELECT row_number() OVER (PARTITION BY ssn) FROM ${s}.people`, /window/],
        [`SELECT city FROM ${s}.people GROUP BY city HAVING max(ssn) > '5'`, /HAVING/],
        [
          `SELECT o.id FROM ${s}.orders o JOIN ${s}.people p ON p.ssn LIKE '1%' AND p.id = o.person_id`,
          /FROM/,
        ],
        [
          `SELECT id FROM ${s}.people p WHERE p::text LIKE '%111%'`,
          /WHERE uses the whole row of "p"/,
        ],
        [
          `SELECT id FROM ${s}.people WHERE id IN (SELECT id FROM ${s}.people WHERE ssn LIKE '1%')`,
          /WHERE/,
        ],
        [
          `SELECT id, generate_series(1, CASE WHEN ssn LIKE '1%' THEN 1 ELSE 0 END) FROM ${s}.people`,
          /set-returning function generate_series/,
        ],
        [
          `WITH x AS (SELECT id, ssn FROM ${s}.people) SELECT id FROM x WHERE ssn > '5'`,
          /WITH|WHERE/,
        ],
        [`SELECT ssn FROM ${s}.people UNION SELECT '111-22-3333'`, /UNION/],
        [
          `SELECT id FROM ${s}.people LIMIT (SELECT count(*) FROM ${s}.people WHERE ssn > '5')`,
          /LIMIT/,
        ],
      ];
      for (const [query, reason] of decides)
        await refused(query, ErrorCodes.MASKED_COLUMN_DECIDES, reason);
      // CASE in the select list: its output is masked like any value computed from the column.
      expect(
        rowsOf(
          await run(
            `SELECT id, CASE WHEN ssn LIKE '1%' THEN 'yes' END AS c FROM ${s}.people ORDER BY id`,
          ),
        ),
      ).toEqual([
        [1, '****'],
        [2, null],
        [3, null],
      ]);
      // The config can allow it.
      const allowed = await run(`SELECT id FROM ${s}.people WHERE ssn LIKE '1%'`, {
        ...policy,
        allowMaskedPredicates: true,
      });
      expect(rowsOf(allowed)).toEqual([[1]]);
    });

    it('passes ordinary analytics under the policy', async () => {
      const legit: [string, unknown[][]][] = [
        [
          `SELECT p.name, sum(o.amount)::int FROM ${s}.people p JOIN ${s}.orders o ON o.person_id = p.id GROUP BY p.name ORDER BY p.name`,
          [
            ['Ada', 10],
            ['Bob', 25],
          ],
        ],
        [
          `SELECT city, count(*)::int FROM ${s}.people GROUP BY city ORDER BY city`,
          [
            ['Lisbon', 1],
            ['Porto', 2],
          ],
        ],
        [`SELECT id, ssn FROM ${s}.people WHERE city = 'Lisbon'`, [[1, '****']]],
        [
          `SELECT name FROM ${s}.people_public WHERE city = 'Porto' ORDER BY name`,
          [['Bob'], ['Cy']],
        ],
        [`SELECT total::int FROM ${s}.order_totals WHERE person_id = 2`, [[25]]],
        [`SELECT ${s}.spend(2)::int`, [[25]]],
        [`SELECT ${s}.allowed_plpgsql()`, [[7]]],
        [
          `SELECT id, rank() OVER (ORDER BY amount DESC)::int FROM ${s}.orders ORDER BY id`,
          [
            [1, 2],
            [2, 1],
            [3, 3],
          ],
        ],
        [
          `SELECT upper(name) FROM ${s}.people WHERE id IN (SELECT person_id FROM ${s}.orders) ORDER BY 1`,
          [['ADA'], ['BOB']],
        ],
      ];
      for (const [query, rows] of legit) expect(rowsOf(await run(query)), query).toEqual(rows);
    });

    it('hides views that read a denied table from introspection, not the others', async () => {
      const snapshot = await withClient(pg!.adminUrl, (client) =>
        loadSnapshot(client, createAccessPolicy({ ...NO_RULES, ...policy })),
      );
      const names = snapshot.relationsOf(s).map((r) => r.name);
      expect(names).not.toContain('vault');
      expect(names).not.toContain('vault_view');
      expect(names).not.toContain('vault_view2');
      expect(names).toContain('people_public');
      expect(names).toContain('order_totals');
    });
  },
);
