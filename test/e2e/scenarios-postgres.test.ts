// Every scenario × every connector against the built server on a real PostgreSQL, connected as
// the non-superuser role pgmcp_test with SELECT on this file's own fixture schema.
import { describe } from 'vitest';
import { createFixtureSchema, realPostgres } from '../helpers/postgres.js';
import { postgresTarget, runScenarioMatrix } from '../helpers/scenarios.js';
import { serverEnv, startHttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/scenarios-postgres.test.ts (e2e scenarios on PostgreSQL)');

describe.skipIf(!pg)('e2e scenarios on PostgreSQL', () => {
  runScenarioMatrix(async () => {
    const info = pg!;
    const fixture = await createFixtureSchema(info, 'pgmcp_e2e');
    const env = serverEnv({ TZ: 'Asia/Tokyo', PGMCP_LOG_LEVEL: 'info' });
    const args = ['--database', info.url];
    const http = await startHttpServer(args, { env, fixtures: true }).catch(
      async (error: unknown) => {
        await fixture.drop();
        throw error;
      },
    );
    return {
      deployment: { httpUrl: () => http.url, stdioArgs: args, fixtures: true, env },
      target: postgresTarget(info, fixture),
      httpStderr: () => http.stderr(),
      async teardown() {
        await http.stop();
        await fixture.drop();
      },
    };
  });
});
