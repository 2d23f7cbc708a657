// With database.role configured, query_database's lookups (relation resolution for the access
// policy) run under that role on the call's own connection: the policy judges the relation the
// statement will read, not the one the login role would have found.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/core/content.js';
import { createSigner } from '../../src/core/signed.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createAccessPolicy, NO_RULES, type AccessRules } from '../../src/tools/access-policy.js';
import { createQueryDatabaseTool } from '../../src/tools/query/query-database.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../../src/tools/sql-guard.js';
import {
  realPostgres,
  TEST_ROLE,
  uniqueSchemaName,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';

const info = await realPostgres('test/integration/query-role.test.ts (lookups under the role)');

// The login role must not be a superuser: a superuser would see every schema anyway.
describe.skipIf(!info || info.role !== TEST_ROLE)('query_database under database.role', () => {
  const pgInfo = info as RealPostgres;
  // Unique per run: the role's name is also its "$user" schema.
  const role = uniqueSchemaName('pgmcp_role');
  const hidden = uniqueSchemaName('pgmcp_hidden');
  const visible = uniqueSchemaName('pgmcp_visible');
  let db: Database;

  const tool = (access: Partial<AccessRules>) =>
    createQueryDatabaseTool(db, {
      limits: {
        defaultRows: 100,
        maxRows: 1000,
        maxResultBytes: 1_048_576,
        statementTimeoutMs: 5_000,
      },
      allowWrites: false,
      deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
      maxPlanCost: null,
      maxPlanRows: null,
      signer: createSigner('role'),
      policy: createAccessPolicy({ ...NO_RULES, ...access }),
    });
  const call = (access: Partial<AccessRules>, query: string) =>
    tool(access).call({ query }, createFakeContext().ctx);
  const rowsOf = (result: ToolResult) => (result.structuredContent as { rows: unknown[][] }).rows;

  beforeAll(async () => {
    await loadSqlParser();
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`
        CREATE ROLE ${role} NOLOGIN;
        GRANT ${role} TO ${TEST_ROLE};
        -- The role's own schema: "$user" in the default search_path names it under the role only.
        CREATE SCHEMA ${role};
        GRANT USAGE ON SCHEMA ${role} TO ${role};
        CREATE TABLE ${role}.secrets (token text);
        INSERT INTO ${role}.secrets VALUES ('hunter2');
        GRANT SELECT ON ${role}.secrets TO ${role};
        -- A schema the login role may use and the configured role may not.
        CREATE SCHEMA ${hidden};
        GRANT USAGE ON SCHEMA ${hidden} TO ${TEST_ROLE};
        CREATE TABLE ${hidden}.notes (body text);
        INSERT INTO ${hidden}.notes VALUES ('harmless');
        GRANT SELECT ON ${hidden}.notes TO ${TEST_ROLE};
        CREATE SCHEMA ${visible};
        GRANT USAGE ON SCHEMA ${visible} TO ${role};
        CREATE TABLE ${visible}.notes (body text);
        INSERT INTO ${visible}.notes VALUES ('confidential');
        GRANT SELECT ON ${visible}.notes TO ${role};`),
    );
    // The login role's search_path finds the hidden schema first; the role skips it.
    const url = new URL(pgInfo.url);
    url.searchParams.set('options', `-c search_path="$user",${hidden},${visible}`);
    db = await createDatabase(
      {
        url: url.toString(),
        poolSize: 2,
        embedded: { dataDir: '/nonexistent', demo: false },
        role,
      },
      pino({ level: 'silent' }),
    );
  }, 60_000);

  afterAll(async () => {
    await db?.close();
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`
        DROP SCHEMA IF EXISTS ${role}, ${hidden}, ${visible} CASCADE;
        DROP ROLE IF EXISTS ${role};`),
    );
  });

  it('runs the statement as the role, which reads its own tables', async () => {
    expect(rowsOf(await call({}, 'select current_user, token from secrets'))).toEqual([
      [role, 'hunter2'],
    ]);
    expect(rowsOf(await call({}, 'select body from notes'))).toEqual([['confidential']]);
  });

  it('resolves names for the policy as the role does ("$user" is the role)', async () => {
    // The login role finds no "secrets" at all; the role finds its own, which is denied.
    const refused = call({ denyTables: [`${role}.secrets`] }, 'select token from secrets');
    await expect(refused).rejects.toMatchObject({ details: { sqlstate: '42P01' } });
    await expect(refused).rejects.toThrow(/relation "secrets" does not exist/);
  });

  it('does not let the policy see a table the role cannot see', async () => {
    // The login role would resolve "notes" to the hidden schema's table (allowed); the role
    // cannot use that schema and reads the visible one, which is denied.
    const refused = call({ denyTables: [`${visible}.notes`] }, 'select body from notes');
    await expect(refused).rejects.toMatchObject({ details: { sqlstate: '42P01' } });
    // And a table denied in the schema the role cannot use changes nothing for the role.
    expect(
      rowsOf(await call({ denyTables: [`${hidden}.notes`] }, 'select body from notes')),
    ).toEqual([['confidential']]);
  });

  it('reports each stage of the call to ctx.timing', async () => {
    const stages: string[] = [];
    const { ctx } = createFakeContext();
    const timed = Object.assign(Object.create(ctx) as typeof ctx, {
      timing: (stage: string, ms: number) => {
        expect(ms).toBeGreaterThanOrEqual(0);
        stages.push(stage);
      },
    });
    await tool({ denyTables: [`${hidden}.notes`] }).call(
      { query: 'select body from notes' },
      timed,
    );
    expect(stages).toEqual(['parse', 'policy', 'plan', 'confirm', 'run', 'format']);
  });
});
