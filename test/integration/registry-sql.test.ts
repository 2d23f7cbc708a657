// Runs the registry's own SQL tests (test/sql/*.sql) after the install scripts, inside a
// transaction the test file rolls back: on real PostgreSQL (a throwaway database) and on PGlite.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryScripts } from '../../src/tools/handlers/install.js';
import { realPostgres, REPO_ROOT, withClient, type RealPostgres } from '../helpers/postgres.js';

const SQL_DIR = join(REPO_ROOT, 'test', 'sql');
const testFiles = readdirSync(SQL_DIR)
  .filter((f) => f.endsWith('.sql'))
  .sort();
const install = registryScripts()
  .map((s) => s.sql)
  .join('\n');
const info = await realPostgres('registry SQL tests');

describe.skipIf(!info)('registry SQL tests on PostgreSQL', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_regsql_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let url: string;

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
    const u = new URL(pgInfo.adminUrl);
    u.pathname = `/${dbName}`;
    url = u.toString();
  });
  afterAll(async () => {
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  it.each(testFiles)('%s', async (file) => {
    await withClient(url, async (client) => {
      await client.query('BEGIN');
      await client.query(install);
      await client.query(readFileSync(join(SQL_DIR, file), 'utf8'));
      // The file rolled everything back: nothing of the registry is left.
      const left = await client.query("SELECT to_regnamespace('mcp') AS ns");
      expect(left.rows[0].ns).toBeNull();
    });
  });
});

describe('registry SQL tests on PGlite', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create();
  });
  afterAll(async () => {
    await db?.close();
  });

  it.each(testFiles)('%s', async (file) => {
    await db.exec('BEGIN');
    await db.exec(install);
    await db.exec(readFileSync(join(SQL_DIR, file), 'utf8'));
    const left = await db.query<{ ns: string | null }>("SELECT to_regnamespace('mcp')::text AS ns");
    expect(left.rows[0]?.ns).toBeNull();
  });
});
