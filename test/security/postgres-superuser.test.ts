// The hostile corpus on a real PostgreSQL, the server connected as a SUPERUSER: the worst case
// (a DSN pasted as is). Files, programs and other backends are in reach of the role; only the
// READ ONLY transaction, the parser guard and the caps stand in the way, and they must hold.
import { describe } from 'vitest';
import { realPostgres } from '../helpers/postgres.js';
import { runSecuritySuite } from './harness.js';
import { postgresTarget } from './targets.js';

const pg = await realPostgres(
  'test/security/postgres-superuser.test.ts (security corpus, superuser)',
);

describe.skipIf(!pg)('read-only promise on PostgreSQL as a superuser', () => {
  runSecuritySuite('PostgreSQL (superuser)', () => postgresTarget(pg!, 'superuser'));
});
