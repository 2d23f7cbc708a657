// The verdict of a repeated statement (tools/sql-guard.ts, tools/query/policy-cache.ts) on
// PostgreSQL, served as a non-superuser role, in a database with the catalog generation. Counted,
// never timed: the statements libpg-query parsed (sqlParses). A repeated statement is not parsed
// again, whatever values its parameters carry; a statement that differs by a literal is judged
// on its own; DDL and privileges changed by another session are judged anew before the next call
// runs; tools with different access policies never answer with each other's verdict.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCatalogTrigger } from '../../src/catalog/watch.js';
import type { ToolResult } from '../../src/core/content.js';
import { ErrorCodes } from '../../src/core/errors.js';
import { createSigner } from '../../src/core/signed.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import {
  createAccessPolicy,
  MASK,
  NO_RULES,
  type AccessRules,
} from '../../src/tools/access-policy.js';
import { sqlParses } from '../../src/tools/common/parse-tree.js';
import { createPolicyCache } from '../../src/tools/query/policy-cache.js';
import { createQueryDatabaseTool } from '../../src/tools/query/query-database.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../../src/tools/sql-guard.js';
import {
  realPostgres,
  throwawayDatabase,
  uniqueSchemaName,
  withClient,
} from '../helpers/postgres.js';

const pgInfo = await realPostgres('test/integration/verdict-cache.test.ts (verdict cache)');
const s = uniqueSchemaName('pgmcp_vc');

const FIXTURE = `
  CREATE SCHEMA ${s};
  CREATE TABLE ${s}.people (id int PRIMARY KEY, name text NOT NULL, contact text, secret text);
  INSERT INTO ${s}.people VALUES (1, 'Ada', 'ada@example.org', 's1'), (2, 'Bob', 'bob@example.org', 's2'),
    (3, 'Cy', 'cy@example.org', 's3');
  CREATE TABLE ${s}.vault (id int, token text);
  INSERT INTO ${s}.vault VALUES (1, 'hunter2');`;

/** How a denied relation answers: as one that does not exist. */
const HIDDEN = { details: expect.objectContaining({ sqlstate: '42P01' }) };

describe.skipIf(!pgInfo)('verdict cache (PostgreSQL, a non-superuser role)', () => {
  const own = pgInfo ? throwawayDatabase(pgInfo, 'pgmcp_vc') : null;
  let db: Database;
  const admin = async (sql: string) => {
    await withClient(own!.url, (client) => client.query(sql));
  };
  // One cache, as one database's tools share it; each tool its own policy.
  const cache = createPolicyCache();
  const tool = (rules: AccessRules) =>
    createQueryDatabaseTool(db, {
      limits: {
        defaultRows: 100,
        maxRows: 1000,
        maxResultBytes: 1_048_576,
        statementTimeoutMs: 10_000,
      },
      allowWrites: false,
      deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
      maxPlanCost: null,
      maxPlanRows: null,
      signer: createSigner('verdict-cache'),
      policy: createAccessPolicy(rules),
      policyCache: cache,
    });
  let masking: ReturnType<typeof tool>;
  let denying: ReturnType<typeof tool>;
  let open: ReturnType<typeof tool>;

  const call = async (t: ReturnType<typeof tool>, query: string, params?: unknown[]) => {
    const result: ToolResult = await t.call(
      { query, ...(params ? { params } : {}) },
      createFakeContext().ctx,
    );
    return (result.structuredContent as { rows: unknown[][] }).rows;
  };
  const refusal = (t: ReturnType<typeof tool>, query: string, params?: unknown[]) =>
    t.call({ query, ...(params ? { params } : {}) }, createFakeContext().ctx).then(
      (r) => new Error(`ran: ${JSON.stringify(r.structuredContent)}`),
      (e: unknown) => e,
    );
  /** What `work` parsed. */
  const parsedBy = async (work: () => Promise<unknown>): Promise<number> => {
    const before = sqlParses();
    await work();
    return sqlParses() - before;
  };

  beforeAll(async () => {
    await loadSqlParser();
    await admin(
      `${FIXTURE}
      GRANT USAGE ON SCHEMA ${s} TO ${pgInfo!.role};
      GRANT SELECT ON ALL TABLES IN SCHEMA ${s} TO ${pgInfo!.role};`,
    );
    await withClient(own!.url, (client) => installCatalogTrigger(client));
    const url = new URL(pgInfo!.url);
    url.pathname = `/${own!.name}`;
    db = await createDatabase(
      { url: url.toString(), poolSize: 2, embedded: { dataDir: '', demo: false } },
      pino({ level: 'silent' }),
    );
    masking = tool({
      ...NO_RULES,
      denyTables: [`${s}.vault`],
      maskColumns: [`${s}.people.email`],
      denyColumns: [`${s}.people.secret`],
    });
    denying = tool({ ...NO_RULES, denyTables: [`${s}.people`] });
    open = tool(NO_RULES);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  it('parses a repeated statement once, whatever values its parameters carry', async () => {
    const sql = `SELECT id, name FROM ${s}.people WHERE id = $1`;
    for (const t of [masking, open]) {
      await call(t, sql, [1]);
      const names: unknown[] = [];
      const parsed = await parsedBy(async () => {
        for (const id of [1, 2, 3, 2]) names.push(...(await call(t, sql, [id])));
      });
      expect(parsed).toBe(0);
      // The verdict is reused; the values of each call are what runs.
      expect(names).toEqual([
        [1, 'Ada'],
        [2, 'Bob'],
        [3, 'Cy'],
        [2, 'Bob'],
      ]);
    }
  });

  it('judges a statement that differs by a literal on its own', async () => {
    // Each text is parsed once, and answers with its own literal.
    for (const id of [1, 2, 3]) {
      const sql = `SELECT name FROM ${s}.people WHERE id = ${id}`;
      let rows: unknown[][] = [];
      expect(await parsedBy(async () => (rows = await call(masking, sql)))).toBe(1);
      expect(rows).toEqual([[['Ada', 'Bob', 'Cy'][id - 1]]]);
      expect(await parsedBy(() => call(masking, sql))).toBe(0);
    }
    // Literals decide verdicts, so no text with another literal shares one: the position a
    // masked column sorts by (ORDER BY 1) and the relation a string names.
    const byPosition = (n: number) =>
      `SELECT id, contact AS shown, name FROM ${s}.people ORDER BY ${n}`;
    await admin(`ALTER TABLE ${s}.people RENAME COLUMN contact TO email`);
    const sorted = (n: number) => byPosition(n).replace('contact AS', 'email AS');
    for (let round = 0; round < 2; round++) {
      expect(await call(masking, sorted(1))).toHaveLength(3);
      expect(await refusal(masking, sorted(2))).toMatchObject({
        code: ErrorCodes.MASKED_COLUMN_DECIDES,
      });
      expect(await call(masking, sorted(3))).toEqual([
        [1, MASK, 'Ada'],
        [2, MASK, 'Bob'],
        [3, MASK, 'Cy'],
      ]);
    }
    await admin(`ALTER TABLE ${s}.people RENAME COLUMN email TO contact`);
    const named = (relation: string) =>
      `SELECT c.relname FROM pg_catalog.pg_class c WHERE c.oid = '${relation}'::regclass`;
    for (let round = 0; round < 2; round++) {
      expect(await call(masking, named(`${s}.people`))).toEqual([['people']]);
      expect(await refusal(masking, named(`${s}.vault`))).toMatchObject(HIDDEN);
    }
  });

  it('never answers one policy with the verdict of another', async () => {
    const sql = `SELECT id, name FROM ${s}.people WHERE id = $1`;
    for (let round = 0; round < 3; round++) {
      expect(await call(masking, sql, [1])).toEqual([[1, 'Ada']]);
      expect(await refusal(denying, sql, [1])).toMatchObject(HIDDEN);
      expect(await call(open, sql, [2])).toEqual([[2, 'Bob']]);
    }
  });

  it('judges anew after another session renames or drops a column', async () => {
    const sql = `SELECT * FROM ${s}.people WHERE id = $1`;
    // Under the masking policy a column named email is masked; contact is not.
    const ada = () => call(masking, `SELECT id, name, contact FROM ${s}.people WHERE id = $1`, [1]);
    expect(await ada()).toEqual([[1, 'Ada', 'ada@example.org']]);
    expect(await ada()).toEqual([[1, 'Ada', 'ada@example.org']]);
    // The column becomes the masked one: the remembered verdict (nothing masked) is not used.
    await admin(`ALTER TABLE ${s}.people RENAME COLUMN contact TO email`);
    const masked = `SELECT id, name, email FROM ${s}.people WHERE id = $1`;
    expect(await call(masking, masked, [1])).toEqual([[1, 'Ada', MASK]]);
    await admin(`ALTER TABLE ${s}.people RENAME COLUMN email TO contact`);
    expect(await ada()).toEqual([[1, 'Ada', 'ada@example.org']]);
    // A star over a denied column is refused, again and again; once the column is dropped by
    // another session, the same text answers.
    for (let round = 0; round < 2; round++)
      expect(await refusal(masking, sql, [1])).toMatchObject({ category: 'forbidden' });
    await admin(`ALTER TABLE ${s}.people DROP COLUMN secret`);
    expect(await call(masking, sql, [1])).toEqual([[1, 'Ada', 'ada@example.org']]);
  });

  it('judges anew after another session revokes or grants a privilege', async () => {
    const sql = `SELECT name FROM ${s}.people WHERE id = $1`;
    for (const t of [masking, open]) {
      expect(await call(t, sql, [3])).toEqual([['Cy']]);
      expect(await call(t, sql, [3])).toEqual([['Cy']]);
    }
    await admin(`REVOKE SELECT ON ${s}.people FROM ${pgInfo!.role}`);
    for (const t of [masking, open]) {
      for (let round = 0; round < 2; round++)
        expect(await refusal(t, sql, [3]), 'after REVOKE').toMatchObject({
          details: expect.objectContaining({ sqlstate: '42501' }),
        });
    }
    await admin(`GRANT SELECT ON ${s}.people TO ${pgInfo!.role}`);
    for (const t of [masking, open]) expect(await call(t, sql, [3])).toEqual([['Cy']]);
  });
});
