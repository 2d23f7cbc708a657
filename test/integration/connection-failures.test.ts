// A database pgmcp cannot connect to, on a real PostgreSQL: whatever the reason (SSL the
// server does not offer, no such database, nothing listening), every path into the database
// answers PGMCP201 with the reason, never an internal error, and never the password. sslmode
// means what libpq makes of it: require encrypts without verifying, allow does not encrypt.
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../../src/core/errors.js';
import { ANONYMOUS } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';

const pg = await realPostgres('test/integration/connection-failures.test.ts (connection failures)');
const logger = pino({ level: 'silent' });

describe.skipIf(!pg)('connecting to PostgreSQL fails with the reason, as PGMCP201', () => {
  const info = pg as RealPostgres;
  const opened: Database[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((db) => db.close()));
  });

  const withUrl = (change: (url: URL) => void): string => {
    const url = new URL(info.url);
    change(url);
    return url.toString();
  };
  const open = async (url: string): Promise<Database> => {
    const db = await createDatabase(
      { url, poolSize: 1, embedded: { dataDir: '/nonexistent', demo: false } },
      logger,
    );
    opened.push(db);
    return db;
  };
  const statement = {
    sql: 'select 1 as one',
    params: [],
    offset: 0,
    limit: 10,
    maxBytes: 1_000_000,
    readOnly: true,
    timeoutMs: 5_000,
    principal: ANONYMOUS,
  };
  /** What each way into the database throws: a call's statement and pgmcp's own connection. */
  const failures = async (db: Database): Promise<AppError[]> => {
    const errors: AppError[] = [];
    for (const run of [
      () => db.runStatement(statement),
      () => db.withOwnConnection((client) => client.query('select 1')),
    ]) {
      const error = await run().then(
        () => new Error('expected the connection to fail'),
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      errors.push(error as AppError);
    }
    return errors;
  };
  const expectUnavailable = (errors: AppError[], reason: RegExp): void => {
    const password = new URL(info.url).password;
    for (const error of errors) {
      expect(error.code).toBe(ErrorCodes.DB_UNAVAILABLE);
      expect(error.category).toBe('unavailable');
      expect(error.message).toMatch(/^The database is unavailable; pgmcp cannot connect to it: /);
      expect(error.message).toMatch(reason);
      expect(String(error.details?.['reason'])).toMatch(reason);
      if (password !== '') {
        expect(error.message).not.toContain(password);
        expect(JSON.stringify(error.details)).not.toContain(password);
      }
    }
  };

  it('sslmode=require: the server without SSL says so; with SSL, the certificate is not checked', async () => {
    const ssl = await withClient(
      info.adminUrl,
      async (c) => (await c.query<{ ssl: string }>('SHOW ssl')).rows[0]!.ssl,
    );
    const db = await open(withUrl((u) => u.searchParams.set('sslmode', 'require')));
    if (ssl === 'off') {
      expectUnavailable(await failures(db), /The server does not support SSL connections/);
    } else {
      // libpq's require: encrypted, whatever certificate the server shows.
      expect((await db.runStatement(statement)).rows).toEqual([[1]]);
    }
  });

  it('sslmode=allow and disable connect without SSL', async () => {
    for (const mode of ['allow', 'disable']) {
      const db = await open(withUrl((u) => u.searchParams.set('sslmode', mode)));
      const result = await db.withOwnConnection((client) =>
        client.query<{ ssl: boolean }>(
          'SELECT ssl FROM pg_catalog.pg_stat_ssl WHERE pid = pg_backend_pid()',
        ),
      );
      expect(result.rows[0]?.ssl).toBe(false);
    }
  });

  it('a database that does not exist: the server’s words and SQLSTATE 3D000', async () => {
    const db = await open(withUrl((u) => (u.pathname = '/pgmcp_no_such_database')));
    const errors = await failures(db);
    expectUnavailable(errors, /database "pgmcp_no_such_database" does not exist/);
    for (const error of errors) expect(error.details?.['sqlstate']).toBe('3D000');
    expect(await db.health()).toEqual({ ok: false, database: 'unreachable' });
  });

  it('nothing listening: connection refused, without the address', async () => {
    const db = await open(withUrl((u) => (u.port = '1')));
    const errors = await failures(db);
    expectUnavailable(errors, /connection refused \(ECONNREFUSED\)/);
    for (const error of errors) expect(error.message).not.toContain(':1');
  });
});
