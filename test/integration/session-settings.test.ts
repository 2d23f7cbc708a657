// The safety settings applied once per connection (src/db/session-settings.ts): a caller's
// function that poisons the session (set_config on the timeout, the identity, the role,
// default_transaction_read_only — session-level) never reaches the next call, whether the call
// was read-only (its block is rolled back) or read-write (its connection is retired or its
// settings re-applied); a change PostgreSQL reports on its own forgets the base; a pooler
// between pgmcp and PostgreSQL is noticed and every call then carries all its settings.
// On PostgreSQL as a superuser (with a configured role) and as a non-superuser, and on the
// embedded database; pools of one, so the next call gets the same connection.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../src/core/principal.js';
import { createDatabase, type Database, type StatementRun } from '../../src/db/database.js';
import { createSessionSettings, type CallSettings } from '../../src/db/session-settings.js';
import { realPostgres, TEST_ROLE, uniqueSchemaName, withClient } from '../helpers/postgres.js';

const pgInfo = await realPostgres('test/integration/session-settings.test.ts');
const logger = pino({ level: 'silent' });
const TIMEOUT_MS = 1_500;

const poisonSql = (schema: string): string => `
  CREATE SCHEMA ${schema};
  CREATE FUNCTION ${schema}.poison() RETURNS text LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM set_config('statement_timeout', '0', false);
    PERFORM set_config('idle_in_transaction_session_timeout', '0', false);
    PERFORM set_config('auth.user_id', 'mallory', false);
    PERFORM set_config('auth.claims', '{"admin":true}', false);
    PERFORM set_config('role', 'none', false);
    PERFORM set_config('default_transaction_read_only', 'off', false);
    RETURN 'poisoned';
  END $$;
  GRANT USAGE ON SCHEMA ${schema} TO PUBLIC;`;

interface Target {
  db: Database;
  schema: string;
  /** current_user inside a call. */
  callUser: string;
  cleanup(): Promise<void>;
}

async function onPostgres(asSuperuser: boolean): Promise<Target> {
  const schema = uniqueSchemaName('pgmcp_sess');
  await withClient(pgInfo!.adminUrl, (c) => c.query(poisonSql(schema)));
  // As a superuser with database.role set: the role is the ceiling a poisoned session would lose.
  const db = await createDatabase(
    {
      url: asSuperuser ? pgInfo!.adminUrl : pgInfo!.url,
      poolSize: 1,
      embedded: { dataDir: '/nonexistent', demo: false },
      role: asSuperuser ? TEST_ROLE : null,
    },
    logger,
  );
  return {
    db,
    schema,
    callUser: asSuperuser ? TEST_ROLE : pgInfo!.role,
    async cleanup() {
      await db.close();
      await withClient(pgInfo!.adminUrl, (c) => c.query(`DROP SCHEMA ${schema} CASCADE`));
    },
  };
}

async function onEmbedded(): Promise<Target> {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-sess-'));
  const db = await createDatabase(
    { url: null, poolSize: 1, embedded: { dataDir: join(root, 'data'), demo: false } },
    logger,
  );
  const schema = uniqueSchemaName('pgmcp_sess');
  await db.withOwnConnection((c) => c.query(poisonSql(schema)));
  const user = await db.withOwnConnection((c) =>
    c.query<{ u: string }>('SELECT current_user AS u'),
  );
  return {
    db,
    schema,
    callUser: user.rows[0]!.u,
    async cleanup() {
      await db.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

const targets: Array<[string, () => Promise<Target>, boolean]> = [
  ['PostgreSQL as a superuser with database.role', () => onPostgres(true), !pgInfo],
  ['PostgreSQL as a non-superuser', () => onPostgres(false), !pgInfo],
  ['the embedded database', onEmbedded, false],
];

describe.each(targets)('per-connection settings on %s', (_name, setup, skip) => {
  let t: Target;
  const run = (sql: string, extra: Partial<StatementRun> = {}) =>
    t.db.runStatement({
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
  /** What a call runs under, seen from inside it. */
  const seen = async () =>
    (
      await run(
        `SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout'),
                current_setting('auth.user_id'), current_setting('auth.claims'), current_user::text,
                current_setting('transaction_read_only')`,
      )
    ).rows[0];
  const clean = () => [`${TIMEOUT_MS}ms`, `${TIMEOUT_MS + 5_000}ms`, '', '{}', t.callUser, 'on'];

  beforeAll(async () => {
    if (!skip) t = await setup();
  }, 120_000);
  afterAll(async () => {
    await t?.cleanup();
  }, 30_000);

  it.skipIf(skip)('a read-only call that poisons the session leaves nothing behind', async () => {
    expect(await seen()).toEqual(clean());
    // Inside the call the poison takes (it is the caller's own session) …
    expect((await run(`SELECT ${t.schema}.poison()`)).rows).toEqual([['poisoned']]);
    // … and the rollback that ends every read-only call takes it away again.
    expect(await seen()).toEqual(clean());
    expect(await seen()).toEqual(clean());
  });

  it.skipIf(skip)('a failed call that poisoned first leaves nothing behind', async () => {
    await expect(run(`SELECT ${t.schema}.poison(), 1 / 0`)).rejects.toMatchObject({
      details: { sqlstate: '22012' },
    });
    expect(await seen()).toEqual(clean());
  });

  it.skipIf(skip)(
    'a read-write call that poisons and commits never reaches the next call',
    async () => {
      // A caller's statement: the connection is retired.
      await run(`SELECT ${t.schema}.poison()`, { readOnly: false });
      expect(await seen()).toEqual(clean());
      // A generated routine or handler call: the connection stays, its settings re-applied.
      await run(`SELECT ${t.schema}.poison()`, { readOnly: false, keepAfterWrite: true });
      expect(await seen()).toEqual(clean());
      // withTransaction, read-write, committed.
      await t.db.withTransaction(
        { readOnly: false, timeoutMs: TIMEOUT_MS, principal: ANONYMOUS },
        (c) => c.query(`SELECT ${t.schema}.poison()`),
      );
      expect(await seen()).toEqual(clean());
    },
  );

  it.skipIf(skip)('another caller’s identity is set for that call only', async () => {
    const alice = { ...ANONYMOUS, kind: 'token' as const, userId: 'alice', claims: { a: 1 } };
    const inside = await run(
      `SELECT current_setting('auth.user_id'), current_setting('auth.claims')`,
      { principal: alice },
    );
    expect(inside.rows).toEqual([['alice', '{"a":1}']]);
    expect(await seen()).toEqual(clean());
  });

  it.skipIf(skip)('pgmcp’s own work sees the login role and no call settings', async () => {
    await seen();
    const own = await t.db.withOwnConnection((c) =>
      c.query<{ t: string; u: string | null }>(
        `SELECT current_setting('statement_timeout') AS t, current_setting('auth.user_id', true) AS u`,
      ),
    );
    expect(own.rows[0]!.t).not.toBe(`${TIMEOUT_MS}ms`);
    expect(['', null]).toContain(own.rows[0]!.u);
    expect(await seen()).toEqual(clean());
  });
});

describe.skipIf(!pgInfo)('the base itself, on PostgreSQL', () => {
  const values: CallSettings = {
    statementTimeout: '1500ms',
    idleTimeout: '6500ms',
    userId: '',
    tenantId: '',
    claims: '{}',
    role: 'none',
  };
  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: pgInfo!.url });
    await client.connect();
    return client;
  };

  it('is applied once, then only differing values are sent, transaction-locally', async () => {
    const client = await connect();
    try {
      const sessions = createSessionSettings();
      const asPool = client as unknown as pg.PoolClient;
      expect(await sessions.prepare(asPool, values)).toBeNull();
      expect(sessions.mode).toBe('base');
      expect(sessions.hasBase(asPool)).toBe(true);
      expect((await client.query('SHOW statement_timeout')).rows[0].statement_timeout).toBe(
        '1500ms',
      );
      expect(await sessions.prepare(asPool, values)).toBeNull();
      const step = await sessions.prepare(asPool, { ...values, userId: 'bob' });
      expect(step).toEqual({
        text: "SELECT set_config('auth.user_id', $1, true)",
        values: ['bob'],
      });
    } finally {
      await client.end();
    }
  });

  it('is forgotten when PostgreSQL reports a change of its own', async () => {
    const client = await connect();
    try {
      const sessions = createSessionSettings();
      const asPool = client as unknown as pg.PoolClient;
      await sessions.prepare(asPool, values);
      expect(sessions.hasBase(asPool)).toBe(true);
      // A committed session change PostgreSQL reports (GUC_REPORT since PostgreSQL 14).
      await client.query('SET default_transaction_read_only = on');
      expect(sessions.hasBase(asPool)).toBe(false);
      // The next call re-applies it.
      expect(await sessions.prepare(asPool, values)).toBeNull();
      expect(sessions.hasBase(asPool)).toBe(true);
    } finally {
      await client.end();
    }
  });

  it('is never used behind a pooler: every call carries every setting', async () => {
    const client = await connect();
    try {
      // What a transaction-mode pooler shows: a startup pid that is not the backend's.
      const real = (client as unknown as { processID: number }).processID;
      (client as unknown as { processID: number }).processID = real + 1;
      const noticed: unknown[] = [];
      const sessions = createSessionSettings({ onPooler: (d) => noticed.push(d) });
      const asPool = client as unknown as pg.PoolClient;
      const step = await sessions.prepare(asPool, values);
      expect(sessions.mode).toBe('transaction-local');
      expect(noticed).toHaveLength(1);
      expect(step!.text).toContain("set_config('role', $6, true)");
      expect(step!.text).toContain("set_config('statement_timeout', $1, true)");
      expect(step!.values).toEqual(['1500ms', '6500ms', '', '', '{}', 'none']);
      // Nothing was set on the session.
      expect((await client.query('SHOW statement_timeout')).rows[0].statement_timeout).not.toBe(
        '1500ms',
      );
    } finally {
      await client.end();
    }
  });
});
