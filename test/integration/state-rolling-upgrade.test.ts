// A rolling upgrade of the state database (docs/operations.md, "Upgrades and migrations"): a
// newer instance migrates while an older one keeps serving. That holds because migrations are
// additive, so what an older version writes still runs on the newer schema. Checked here for
// the audit log, whose rows gained `request_id` in version 4: the older version's INSERT (its
// own column list) runs after the migration, and rows written before it keep their fields.
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAuditLog,
  MIGRATIONS,
  migrateState,
  openStateDatabase,
  stateVersion,
  type StateDb,
} from '../../src/state/index.js';
import { runInRequestScope } from '../../src/core/request-scope.js';
import { realPostgres, throwawayDatabase } from '../helpers/postgres.js';

const logger = pino({ level: 'silent' });
const pgInfo = await realPostgres('test/integration/state-rolling-upgrade.test.ts');

/** The audit INSERT of pgmcp before version 4 of the state schema. */
const INSERT_BEFORE_V4 = `
  INSERT INTO pgmcp.audit (at, event, outcome, principal_kind, principal_id, client_address, database, tool, duration_ms, details)
  SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::jsonb[])`;

/** A state database on a pool of its own, migrated by hand (openStateDatabase migrates to the latest). */
function plainStateDb(url: string): StateDb {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  return {
    description: 'the older instance',
    mode: 'postgres',
    query: (text, values) => pool.query(text, values),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

function insertBeforeV4(db: StateDb, event: string) {
  return db.query(INSERT_BEFORE_V4, [
    [new Date()],
    [event],
    ['success'],
    ['token'],
    ['alice'],
    [null],
    ['shop'],
    ['query_database'],
    [12],
    ['{}'],
  ]);
}

describe.skipIf(!pgInfo)('the state database during a rolling upgrade', () => {
  const { url } = pgInfo ? throwawayDatabase(pgInfo, 'pgmcp_rolling') : { url: '' };
  let older: StateDb;
  let newer: StateDb;

  beforeAll(async () => {
    // The older instance: the schema as versions 1–3 left it, on a pool of its own.
    older = plainStateDb(url);
    await migrateState(older, {
      migrate: true,
      migrations: MIGRATIONS.filter((m) => m.version <= 3),
    });
    await insertBeforeV4(older, 'login');
  });
  afterAll(async () => {
    await older?.close();
    await newer?.close();
  });

  it('a newer instance migrates while the older one keeps writing its audit rows', async () => {
    expect(await stateVersion(older)).toBe(3);
    newer = await openStateDatabase({ url, dataDir: '/nonexistent', logger });
    // Migrated to the newest version (4 gave the audit its request_id).
    expect(await stateVersion(newer)).toBe(Math.max(...MIGRATIONS.map((m) => m.version)));
    await insertBeforeV4(older, 'logout');
    const audit = createAuditLog({ db: newer, file: null, flushIntervalMs: 10 });
    runInRequestScope({ requestId: 'req-rolling-1' }, () =>
      audit.record({ event: 'token_created', outcome: 'success' }),
    );
    await audit.close();
    const { rows } = await newer.query<{
      event: string;
      principal_id: string | null;
      request_id: string | null;
    }>('SELECT event, principal_id, request_id FROM pgmcp.audit ORDER BY id');
    expect(rows).toEqual([
      { event: 'login', principal_id: 'alice', request_id: null },
      { event: 'logout', principal_id: 'alice', request_id: null },
      { event: 'token_created', principal_id: null, request_id: 'req-rolling-1' },
    ]);
  });
});
