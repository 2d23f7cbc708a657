// Every scenario × every connector against the built server on its embedded database (PGlite in
// a child process). A data directory admits one server at a time, so the HTTP server gets one
// and the stdio servers (one per stdio connector, one after another) get a copy.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { describe } from 'vitest';
import { startEmbedded } from '../../src/db/embedded/index.js';
import { FIXTURE_ITEMS, fixtureSql, uniqueSchemaName } from '../helpers/postgres.js';
import { runScenarioMatrix } from '../helpers/scenarios.js';
import { serverEnv, startHttpServer } from '../helpers/server.js';

/** A fresh data directory holding the fixture schema (and no demo data: other tests cover it). */
async function prepareDataDir(dataDir: string, schema: string): Promise<void> {
  const db = await startEmbedded({ dataDir, seedDemo: false, logger: pino({ level: 'silent' }) });
  try {
    const client = new pg.Client({ ...db.connection });
    await client.connect();
    try {
      await client.query(fixtureSql(schema));
    } finally {
      await client.end();
    }
  } finally {
    await db.stop();
  }
}

describe('e2e scenarios on the embedded database', () => {
  runScenarioMatrix(async () => {
    const root = mkdtempSync(join(tmpdir(), 'pgmcp-e2e-embedded-'));
    const httpDir = join(root, 'http');
    const stdioDir = join(root, 'stdio');
    const schema = uniqueSchemaName('pgmcp_e2e');
    await prepareDataDir(httpDir, schema);
    cpSync(httpDir, stdioDir, { recursive: true });
    const env = serverEnv({ TZ: 'Asia/Tokyo', PGMCP_LOG_LEVEL: 'info', PGMCP_DEMO: 'false' });
    const http = await startHttpServer(['--data-dir', httpDir], { env, fixtures: true });
    return {
      deployment: {
        httpUrl: () => http.url,
        stdioArgs: ['--data-dir', stdioDir],
        fixtures: true,
        env,
      },
      target: {
        kind: 'embedded',
        schema,
        itemCount: FIXTURE_ITEMS,
        databaseName: 'pgmcp-embedded',
        role: { name: 'postgres', superuser: true },
        admin: null,
      },
      httpStderr: () => http.stderr(),
      async teardown() {
        await http.stop();
        rmSync(root, { recursive: true, force: true });
      },
    };
  });
});
