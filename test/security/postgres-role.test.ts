// The hostile corpus on a real PostgreSQL, the server connected as the non-superuser role
// pgmcp_test with SELECT on the fixture only: the deployment docs/security.md recommends.
import { describe } from 'vitest';
import { realPostgres } from '../helpers/postgres.js';
import { runSecuritySuite } from './harness.js';
import { postgresTarget } from './targets.js';

const pg = await realPostgres(
  'test/security/postgres-role.test.ts (security corpus, non-superuser)',
);

describe.skipIf(!pg)('read-only promise on PostgreSQL as a non-superuser role', () => {
  runSecuritySuite('PostgreSQL (pgmcp_test, non-superuser)', () => postgresTarget(pg!, 'role'));
});
