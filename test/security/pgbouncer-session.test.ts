// The hostile corpus through PgBouncer in session mode (Debian's pgbouncer), pgmcp connected as
// the non-superuser role pgmcp_test: a pooler between pgmcp and the server must not weaken the
// read-only promise, nor let one call's settings or identity reach the next.
import { describe } from 'vitest';
import { PGBOUNCER_BIN } from '../helpers/pgbouncer.js';
import { realPostgres, reportSkipped } from '../helpers/postgres.js';
import { runSecuritySuite } from './harness.js';
import { postgresTarget } from './targets.js';

const suite = 'test/security/pgbouncer-session.test.ts (security corpus through PgBouncer)';
const pg = await realPostgres(suite);
if (pg && !PGBOUNCER_BIN)
  reportSkipped(suite, 'PgBouncer is not installed (Debian package pgbouncer)');

describe.skipIf(!pg || !PGBOUNCER_BIN)(
  'read-only promise through PgBouncer in session mode',
  () => {
    runSecuritySuite('PostgreSQL (pgmcp_test) through PgBouncer, session mode', () =>
      postgresTarget(pg!, 'role', { pooler: 'session' }),
    );
  },
);
