// The named ROLLBACK that closes read-only calls on a direct connection (src/db/closing.ts):
// parsed once per connection, and never trusted after a caller's code could have replaced it.
// A caller's function that DEALLOCATEs pgmcp's statements and PREPAREs look-alikes under their
// names (PL/pgSQL allows both in a read-only transaction, and ROLLBACK keeps them) never runs
// its look-alike in another call: the look-alike answers with the wrong tag in the planting
// call itself (which fails, its connection closed), or, when that call failed before its
// closing, the next call parses the statement again. A pool of one: the next call gets the
// same connection unless it was closed.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../src/core/principal.js';
import { createDatabase, type Database, type StatementRun } from '../../src/db/database.js';
import { realPostgres, TEST_ROLE, uniqueSchemaName, withClient } from '../helpers/postgres.js';

const pgInfo = await realPostgres('test/integration/named-closing.test.ts');
const logger = pino({ level: 'silent' });
const TIMEOUT_MS = 1_500;

// plant(text): every prepared statement of the session replaced by `text` under its name.
const fixture = (schema: string): string => `
  CREATE SCHEMA ${schema};
  CREATE FUNCTION ${schema}.plant(body text) RETURNS text LANGUAGE plpgsql AS $$
  DECLARE n text; names text[];
  BEGIN
    SELECT coalesce(array_agg(name), '{}') INTO names FROM pg_prepared_statements;
    EXECUTE 'DEALLOCATE ALL';
    FOREACH n IN ARRAY names LOOP
      EXECUTE format('PREPARE %I AS %s', n, body);
    END LOOP;
    PERFORM set_config('auth.user_id', 'mallory', false);
    RETURN array_to_string(names, ',');
  END $$;
  CREATE FUNCTION ${schema}.drop_all() RETURNS text LANGUAGE plpgsql AS $$
  BEGIN EXECUTE 'DEALLOCATE ALL'; RETURN 'dropped'; END $$;
  GRANT USAGE ON SCHEMA ${schema} TO PUBLIC;`;

describe.each([
  ['as a superuser with database.role', true],
  ['as a non-superuser', false],
])('the named closing on PostgreSQL %s', (_name, asSuperuser) => {
  const schema = uniqueSchemaName('pgmcp_close');
  let db: Database;
  const run = (sql: string, extra: Partial<StatementRun> = {}) =>
    db.runStatement({
      sql,
      params: [],
      offset: 0,
      limit: 10,
      maxBytes: 1_000_000,
      readOnly: true,
      timeoutMs: TIMEOUT_MS,
      principal: ANONYMOUS,
      ...extra,
    });
  /** The session's prepared statements (name, made by SQL PREPARE) and the caller's identity. */
  const seen = async () =>
    (
      await run(
        `SELECT (SELECT coalesce(string_agg(name || ':' || from_sql, ',' ORDER BY name), '') FROM pg_prepared_statements),
                current_setting('auth.user_id')`,
      )
    ).rows[0];

  beforeAll(async () => {
    if (!pgInfo) return;
    await withClient(pgInfo.adminUrl, (c) => c.query(fixture(schema)));
    db = await createDatabase(
      {
        url: asSuperuser ? pgInfo.adminUrl : pgInfo.url,
        poolSize: 1,
        embedded: { dataDir: '/nonexistent', demo: false },
        role: asSuperuser ? TEST_ROLE : null,
      },
      logger,
    );
  }, 60_000);
  afterAll(async () => {
    if (!pgInfo) return;
    await db?.close();
    await withClient(pgInfo.adminUrl, (c) => c.query(`DROP SCHEMA ${schema} CASCADE`));
  });

  it.skipIf(!pgInfo)(
    'a read-only call ends with ROLLBACK prepared once on the connection',
    async () => {
      await run('SELECT 1');
      // Parsed by pgmcp over the protocol (not SQL PREPARE), and kept for the next call.
      expect(await seen()).toEqual(['pgmcp_rollback:false', '']);
      expect(await seen()).toEqual(['pgmcp_rollback:false', '']);
    },
  );

  it.skipIf(!pgInfo)(
    'a look-alike planted by the call fails that call and closes its connection',
    async () => {
      await run('SELECT 1');
      // It would set the identity for the session: the next caller's call would run as mallory.
      await expect(
        run(`SELECT ${schema}.plant($$SELECT set_config('auth.user_id', 'mallory', false)$$)`),
      ).rejects.toMatchObject({ code: 'PGMCP202' });
      // A new connection: nothing of the look-alike, nor of the identity it set; the closing
      // is parsed at the end of this first call, and there from the next one on.
      expect(await seen()).toEqual(['', '']);
      expect(await seen()).toEqual(['pgmcp_rollback:false', '']);
    },
  );

  it.skipIf(!pgInfo)(
    'a look-alike planted by a call that then failed is never run: the next call parses again',
    async () => {
      await run('SELECT 1');
      // The call fails after planting (the names are no integer), before its closing.
      await expect(run(`SELECT ${schema}.plant('SELECT 1 / 0')::int`)).rejects.toMatchObject({
        details: { sqlstate: '22P02' },
      });
      // The same connection, the look-alike still there during the next call (made by SQL
      // PREPARE) but not bound: had it been, the call would fail with its division by zero.
      // Its identity was rolled back with the failed call.
      expect(await seen()).toEqual(['pgmcp_rollback:true', '']);
      // Closed and parsed again at the end of that call: pgmcp's own again.
      expect(await seen()).toEqual(['pgmcp_rollback:false', '']);
      expect((await run('SELECT 2')).rows).toEqual([[2]]);
    },
  );

  it.skipIf(!pgInfo)(
    'a call that deallocates the closing fails at it; the next call is whole',
    async () => {
      await run('SELECT 1');
      await expect(run(`SELECT ${schema}.drop_all()`)).rejects.toMatchObject({
        details: { sqlstate: '26000' },
      });
      // Parsed again at the end of the next call.
      expect(await seen()).toEqual(['', '']);
      expect(await seen()).toEqual(['pgmcp_rollback:false', '']);
    },
  );

  it.skipIf(!pgInfo)('the closing stays read-only calls only: writes commit unnamed', async () => {
    // A read-write call (a routine's, kept) commits with a plain COMMIT and then the
    // connection's named ROLLBACK is parsed again: still pgmcp's.
    await run(`SELECT 3`, { readOnly: false, keepAfterWrite: true });
    expect(await seen()).toEqual(['pgmcp_rollback:false', '']);
  });
});
