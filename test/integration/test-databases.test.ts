// Each test file's own database (test/helpers/postgres.ts): named after the test run, refused
// where its drop would never be registered, and — when a file never gets to drop it (it failed
// while collected, so none of its hooks ran) — dropped by the run's global setup after the run,
// leaving other runs' databases alone.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { REPO_ROOT, realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import { dropRunDatabases } from '../helpers/test-databases.js';

const info = await realPostgres('test/integration/test-databases.test.ts (test databases)');

describe.skipIf(!info)("the test files' own databases", () => {
  const pgInfo = info as RealPostgres;
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-test-databases-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const exists = (name: string): Promise<boolean> =>
    withClient(pgInfo.adminUrl, async (c) => {
      const { rowCount } = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      return rowCount === 1;
    });

  it("carries the run's name", () => {
    expect(pgInfo.database).toMatch(new RegExp(`^pgmcp_t_${inject('pgmcpTestRun')}_`));
  });

  it('is refused from a test, where its drop would never run', () => {
    expect(() => realPostgres('called from a test')).toThrow(
      /is called from a hook or a test: await it at the top level of the test file/,
    );
  });

  it('is dropped after the run when its file failed while collected', () => {
    const out = join(root, 'database.txt');
    const run = spawnSync(
      process.execPath,
      [
        join(REPO_ROOT, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--config',
        'test/fixtures/test-databases/vitest.config.ts',
      ],
      {
        cwd: REPO_ROOT,
        // A run of its own: nothing of this worker's vitest state.
        env: {
          ...Object.fromEntries(
            Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST')),
          ),
          PGMCP_FIXTURE_OUT: out,
        },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    const output = `${run.stdout}${run.stderr}`;
    // The inner run failed: its one file could not be collected.
    expect(run.status, output).toBe(1);
    expect(output).toContain('this file fails while it is collected');
    const database = readFileSync(out, 'utf8');
    expect(database, output).toMatch(/^pgmcp_t_[a-z0-9]+_fixtures_test_databases_fails_to_col/);
    expect(output).toContain(`dropped 1 test database(s) left behind: ${database}`);
    return expect(exists(database)).resolves.toBe(false);
  }, 150_000);

  it("drops a run's databases and no other run's", async () => {
    // Two other runs' databases, one run's name the start of the other's.
    const run = `zz${Math.random().toString(36).slice(2, 6)}`;
    const mine = `pgmcp_t_${run}_some_file_x`;
    const theirs = `pgmcp_t_${run}9_some_file_x`;
    await withClient(pgInfo.adminUrl, async (c) => {
      for (const name of [mine, theirs]) await c.query(`CREATE DATABASE ${name}`);
    });
    try {
      expect(await dropRunDatabases(pgInfo.adminUrl, run)).toEqual([mine]);
      expect(await exists(mine)).toBe(false);
      expect(await exists(theirs)).toBe(true);
    } finally {
      await withClient(pgInfo.adminUrl, async (c) => {
        for (const name of [mine, theirs])
          await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    }
  });
});
