// pgmcp behind Debian's PgBouncer, in transaction mode and in session mode, on a cluster of the
// test's own: many callers share few server connections, and no caller ever sees another's
// identity; a read-only call cannot write; a session setting a caller's function makes does not
// reach the next caller; in transaction mode pgmcp notices the pooler (the backend pid differs
// from the startup one) and carries every setting with each call.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { serverBinDir, startCluster, type Cluster } from '../helpers/pg-cluster.js';
import { PGBOUNCER_BIN, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { reportSkipped } from '../helpers/postgres.js';

const ready = serverBinDir() !== null && PGBOUNCER_BIN !== undefined;
if (!ready) reportSkipped('pgbouncer', 'no local PostgreSQL server binaries or no pgbouncer');

const caller = (userId: string): Principal => ({
  kind: 'token',
  userId,
  tenantId: `tenant-${userId}`,
  roles: [],
  scopes: [],
  claims: { sub: userId },
});

describe.skipIf(!ready)('behind PgBouncer', () => {
  let cluster: Cluster;
  const bouncers: PgBouncer[] = [];
  const opened: Database[] = [];
  beforeAll(async () => {
    cluster = await startCluster();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close()));
    for (const b of bouncers) await b.stop();
    cluster?.destroy();
  });

  for (const mode of ['transaction', 'session'] as const) {
    it(`${mode} mode: identities never cross, read-only holds, session changes do not carry over`, async () => {
      const bouncer = await startPgBouncer({
        host: '127.0.0.1',
        port: cluster.port,
        mode,
        users: ['postgres'],
        poolSize: 2,
      });
      bouncers.push(bouncer);
      const warnings: string[] = [];
      const logger = pino(
        { level: 'warn' },
        { write: (line: string) => void warnings.push(JSON.parse(line).msg as string) },
      );
      const db = await createDatabase(
        {
          url: `postgres://postgres@127.0.0.1:${bouncer.port}/postgres`,
          // Session mode holds a server connection per client connection: pgmcp's pool must
          // fit in PgBouncer's (default_pool_size 2). Transaction mode shares them.
          poolSize: mode === 'session' ? 2 : 6,
          embedded: { dataDir: '/nonexistent', demo: false },
        },
        logger,
      );
      opened.push(db);
      const run = (who: Principal, sql: string, readOnly = true) =>
        db.runStatement({
          sql,
          params: [],
          offset: 0,
          limit: 5,
          maxBytes: 100_000,
          readOnly,
          timeoutMs: 10_000,
          principal: who,
        });

      // A caller's function changes its session (not transaction-local): nobody after sees it.
      await run(caller('mallory'), "SELECT set_config('auth.user_id', 'mallory', false)");
      const users = Array.from({ length: 8 }, (_, i) => `user${i}`);
      const answers = await Promise.all(
        Array.from({ length: 64 }, (_, i) => {
          const who = users[i % users.length]!;
          return run(
            caller(who),
            "SELECT current_setting('auth.user_id', true), current_setting('auth.tenant_id', true), current_setting('transaction_read_only')",
          ).then((result) => ({ who, row: result.rows[0] }));
        }),
      );
      for (const { who, row } of answers) expect(row).toEqual([who, `tenant-${who}`, 'on']);

      // Read-only calls cannot write, however many connections the pooler juggles.
      const write = await run(caller('user0'), 'CREATE TABLE pwned (n int)').then(
        () => null,
        (e: unknown) => e,
      );
      expect(write).toBeInstanceOf(AppError);
      expect((write as AppError).details?.['sqlstate']).toBe('25006');
      const exists = await cluster.query("SELECT to_regclass('pwned') IS NULL AS gone");
      expect(exists).toEqual([{ gone: true }]);

      // An anonymous caller after all of them has no identity.
      const anonymous = await run(
        { ...caller(''), kind: 'anonymous', userId: null, tenantId: null },
        "SELECT coalesce(current_setting('auth.user_id', true), '')",
      );
      expect(anonymous.rows).toEqual([['']]);

      if (mode === 'transaction') {
        expect(
          warnings.some((w) => /connection pooler sits between pgmcp and PostgreSQL/.test(w)),
        ).toBe(true);
      }
    });
  }
});
