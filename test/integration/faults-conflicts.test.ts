// A read-only call stopped by a deadlock (40P01) runs once more by itself and is answered; a
// read-write one is not run again and fails with PGMCP209, saying nothing was committed. The
// deadlock is a real one: two calls taking the same two advisory locks in opposite order.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../../src/core/errors.js';
import { ANONYMOUS } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { realPostgres, type RealPostgres } from '../helpers/postgres.js';

const pg = await realPostgres('test/integration/faults-conflicts.test.ts (deadlocks)');
const logger = pino({ level: 'silent' });

describe.skipIf(!pg)('a deadlock between two calls', () => {
  const info = pg as RealPostgres;
  let db: Database;
  beforeAll(async () => {
    db = await createDatabase(
      { url: info.url, poolSize: 4, embedded: { dataDir: '/nonexistent', demo: false } },
      logger,
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  /** Two calls that lock `a` then `b`, and `b` then `a`: PostgreSQL stops one of them. */
  const deadlock = (readOnly: boolean) => {
    const base = Math.floor(Math.random() * 1_000_000_000);
    const run = (first: number, second: number) =>
      db
        .runStatement({
          sql: `SELECT pg_advisory_xact_lock($1::bigint), pg_sleep(0.3), pg_advisory_xact_lock($2::bigint)`,
          params: [first, second],
          offset: 0,
          limit: 10,
          maxBytes: 1_000_000,
          readOnly,
          keepAfterWrite: true,
          timeoutMs: 20_000,
          principal: ANONYMOUS,
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
    return Promise.all([run(base, base + 1), run(base + 1, base)]);
  };

  it('read-only: the call PostgreSQL stopped runs again and both are answered', async () => {
    expect(await deadlock(true)).toEqual([null, null]);
  });

  it('read-write: the stopped call is not run again; PGMCP209 says nothing was committed', async () => {
    const outcomes = await deadlock(false);
    const failures = outcomes.filter((o): o is AppError => o !== null);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(AppError);
    expect(failures[0]).toMatchObject({
      code: ErrorCodes.DB_CONFLICT,
      category: 'conflict',
      details: { sqlstate: '40P01' },
    });
    expect(failures[0]!.message).toMatch(/deadlocked .*Nothing of it was committed/);
  });
});
