// The access policy's catalog lookups kept between calls (tools/query/policy-cache.ts), on the
// embedded PGlite and on PostgreSQL (a database of its own, served as a non-superuser role).
// Counted, never timed: each call's lookups, own-SQL steps and the check sent ahead of them are
// logged by a wrapper around the real call session. A warm statement looks nothing up; a view
// replaced by another session is judged again before the statement runs; without the catalog
// generation every call looks the catalog up as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCatalogTrigger } from '../../src/catalog/watch.js';
import type { ToolResult } from '../../src/core/content.js';
import { ErrorCodes } from '../../src/core/errors.js';
import { createSigner } from '../../src/core/signed.js';
import type { CallSession } from '../../src/db/call-session.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createAccessPolicy, NO_RULES } from '../../src/tools/access-policy.js';
import { createPolicyCache } from '../../src/tools/query/policy-cache.js';
import { createQueryDatabaseTool } from '../../src/tools/query/query-database.js';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../../src/tools/sql-guard.js';
import {
  realPostgres,
  throwawayDatabase,
  uniqueSchemaName,
  withClient,
} from '../helpers/postgres.js';

const pgInfo = await realPostgres('test/integration/policy-cache.test.ts (policy cache)');
const s = uniqueSchemaName('pgmcp_pc');
const LIMITS = {
  defaultRows: 100,
  maxRows: 1000,
  maxResultBytes: 1_048_576,
  statementTimeoutMs: 10_000,
};

const FIXTURE = `
  CREATE SCHEMA ${s};
  CREATE TABLE ${s}.people (id int PRIMARY KEY, name text NOT NULL);
  INSERT INTO ${s}.people VALUES (1, 'Ada'), (2, 'Bob'), (3, 'Cy');
  CREATE TABLE ${s}.vault (id int, token text);
  INSERT INTO ${s}.vault VALUES (1, 'hunter2');
  CREATE VIEW ${s}.names AS SELECT p.id, p.name FROM ${s}.people p;
  CREATE VIEW ${s}.flip AS SELECT p.id, p.name FROM ${s}.people p;
  CREATE VIEW ${s}.flop AS SELECT v.id, v.token AS name FROM ${s}.vault v;
  CREATE FUNCTION ${s}.name_of(int) RETURNS text LANGUAGE sql STABLE
    AS $$ SELECT name FROM ${s}.people WHERE id = $1 $$;`;

/** What one withCall did, in order: `lookup <sql…>`, `precede`, `read`, `run`. */
type CallLog = string[];

/** The database with every call's session steps logged (the real session does the work). */
function logged(db: Database, calls: CallLog[]): Database {
  return {
    ...db,
    withCall: (tx, work) =>
      db.withCall(tx, (session) => {
        const log: CallLog = [];
        calls.push(log);
        const wrapped: CallSession = {
          get role() {
            return session.role;
          },
          get precedingFailed() {
            return session.precedingFailed;
          },
          precede(step) {
            log.push('precede');
            session.precede(step);
          },
          query(text, values) {
            log.push(`lookup ${text.replace(/\s+/g, ' ').slice(0, 40)}`);
            return session.query(text, values);
          },
          shielded(text, values, options) {
            log.push(`lookup ${text.replace(/\s+/g, ' ').slice(0, 40)}`);
            return session.shielded(text, values, options);
          },
          read(step, read) {
            log.push('read');
            return session.read(step, read);
          },
          run(step, read) {
            log.push('run');
            return session.run(step, read);
          },
        };
        return work(wrapped);
      }),
  };
}

const lookups = (log: CallLog | undefined): string[] =>
  (log ?? []).filter((step) => step.startsWith('lookup '));

interface Target {
  /** The database the tool serves (as a non-superuser role on PostgreSQL). */
  db: Database;
  /** Runs SQL as another session would (DDL, the generation's removal). */
  admin(sql: string): Promise<void>;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Target>): void {
  describe(`policy cache (${name})`, () => {
    let target: Target;
    const calls: CallLog[] = [];
    const cache = createPolicyCache();
    const tool = () =>
      createQueryDatabaseTool(logged(target.db, calls), {
        limits: LIMITS,
        allowWrites: false,
        deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
        maxPlanCost: null,
        maxPlanRows: null,
        signer: createSigner('policy-cache'),
        policy: createAccessPolicy({ ...NO_RULES, denyTables: [`${s}.vault`] }),
        policyCache: cache,
      });
    let query: ReturnType<typeof tool>;
    /** One tools/call; returns its rows and the session logs of the calls it made. */
    const call = async (sql: string, params?: unknown[]) => {
      const from = calls.length;
      const result: ToolResult = await query.call(
        { query: sql, ...(params ? { params } : {}) },
        createFakeContext().ctx,
      );
      return {
        rows: (result.structuredContent as { rows: unknown[][] }).rows,
        logs: calls.slice(from),
      };
    };
    const refusal = async (sql: string) => {
      const from = calls.length;
      const error = await query.call({ query: sql }, createFakeContext().ctx).then(
        (r) => new Error(`ran: ${JSON.stringify(r.structuredContent)}`),
        (e: unknown) => e,
      );
      return { error, logs: calls.slice(from) };
    };

    beforeAll(async () => {
      await loadSqlParser();
      target = await open();
      query = tool();
    }, 120_000);
    afterAll(async () => {
      await target?.close();
    });

    it('answers a repeated statement without looking anything up', async () => {
      const statements: [string, unknown[] | undefined, unknown[][]][] = [
        [`SELECT id, name FROM ${s}.people WHERE id = $1`, [2], [[2, 'Bob']]],
        [
          `SELECT p.name, q.name AS other FROM ${s}.people p JOIN ${s}.people q ON q.id = p.id + 1 WHERE p.id = $1`,
          [1],
          [['Ada', 'Bob']],
        ],
        [`SELECT name FROM ${s}.names WHERE id = $1`, [3], [['Cy']]],
        [`SELECT ${s}.name_of($1)`, [1], [['Ada']]],
      ];
      for (const [sql, params, rows] of statements) {
        const cold = await call(sql, params);
        expect(cold.rows, sql).toEqual(rows);
        for (let i = 0; i < 3; i++) {
          const warm = await call(sql, params);
          expect(warm.rows, sql).toEqual(rows);
          // One call, no lookup, the check ahead of the statement, the statement.
          expect(warm.logs, sql).toEqual([['precede', 'run']]);
        }
      }
    });

    it('reuses what it learned about a view for another statement over it', async () => {
      await call(`SELECT * FROM ${s}.names`);
      const other = await call(`SELECT id FROM ${s}.names WHERE name <> $1 ORDER BY id`, ['Ada']);
      expect(other.rows).toEqual([[2], [3]]);
      // Its name, the view's dependencies, definition and body are not looked up again.
      expect(other.logs).toEqual([['precede', 'run']]);
    });

    it('judges a view replaced by another session again, before the statement runs', async () => {
      expect((await call(`SELECT * FROM ${s}.flip ORDER BY id`)).rows).toHaveLength(3);
      expect((await call(`SELECT * FROM ${s}.flip ORDER BY id`)).logs).toEqual([
        ['precede', 'run'],
      ]);
      await target.admin(
        `CREATE OR REPLACE VIEW ${s}.flip AS SELECT v.id, v.token AS name FROM ${s}.vault v`,
      );
      const { error, logs } = await refusal(`SELECT * FROM ${s}.flip ORDER BY id`);
      expect(error).toMatchObject({ code: ErrorCodes.POLICY_INDIRECT_ACCESS });
      // The check failed ahead of the statement (which never ran), then the call was judged on
      // fresh lookups and refused before its statement.
      expect(logs).toHaveLength(2);
      expect(logs[0]).toEqual(['precede', 'run']);
      expect(lookups(logs[1]).length).toBeGreaterThan(0);
      expect(logs[1]).not.toContain('run');
    });

    it('does not keep a refusal once the view no longer reads what is denied', async () => {
      const sql = `SELECT * FROM ${s}.flop ORDER BY id`;
      for (let i = 0; i < 2; i++)
        expect((await refusal(sql)).error).toMatchObject({
          code: ErrorCodes.POLICY_INDIRECT_ACCESS,
        });
      await target.admin(
        `CREATE OR REPLACE VIEW ${s}.flop AS SELECT p.id, p.name FROM ${s}.people p`,
      );
      expect((await call(sql)).rows).toEqual([
        [1, 'Ada'],
        [2, 'Bob'],
        [3, 'Cy'],
      ]);
    });

    it('looks the catalog up on every call once the generation is gone', async () => {
      const sql = `SELECT name FROM ${s}.names WHERE id = $1`;
      await call(sql, [1]);
      await target.admin('DROP SCHEMA pgmcp_watch CASCADE');
      // The warm call's check fails (no generation), and the call runs again without the cache.
      const first = await call(sql, [1]);
      expect(first.rows).toEqual([['Ada']]);
      expect(first.logs[0]).toEqual(['precede', 'run']);
      for (let i = 0; i < 2; i++) {
        const again = await call(sql, [1]);
        expect(again.rows).toEqual([['Ada']]);
        expect(again.logs).toHaveLength(1);
        expect(again.logs[0]).not.toContain('precede');
        expect(lookups(again.logs[0]).length).toBeGreaterThan(0);
      }
    });
  });
}

suite('embedded PGlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-policy-cache-'));
  const db = await createDatabase(
    { url: null, poolSize: 1, embedded: { dataDir: join(dir, 'data'), demo: false } },
    pino({ level: 'silent' }),
  );
  const admin = async (sql: string) => {
    await db.withOwnConnection((client) => client.query(sql));
  };
  await admin(FIXTURE);
  await db.withOwnConnection((client) => installCatalogTrigger(client));
  return {
    db,
    admin,
    async close() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe.skipIf(!pgInfo)('on PostgreSQL', () => {
  const own = pgInfo ? throwawayDatabase(pgInfo, 'pgmcp_pc') : null;
  suite('PostgreSQL, a non-superuser role', async () => {
    const admin = async (sql: string) => {
      await withClient(own!.url, (client) => client.query(sql));
    };
    await admin(
      `${FIXTURE}
      GRANT USAGE ON SCHEMA ${s} TO ${pgInfo!.role};
      GRANT SELECT ON ALL TABLES IN SCHEMA ${s} TO ${pgInfo!.role};`,
    );
    await withClient(own!.url, (client) => installCatalogTrigger(client));
    const url = new URL(pgInfo!.url);
    url.pathname = `/${own!.name}`;
    const db = await createDatabase(
      { url: url.toString(), poolSize: 2, embedded: { dataDir: '', demo: false } },
      pino({ level: 'silent' }),
    );
    return { db, admin, close: () => db.close() };
  });
});
