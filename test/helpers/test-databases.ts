// The databases test files make for themselves, named after the run that made them:
// pgmcp_t_<run>_<file>_<random>. The run's name comes from the global setup (provided to every
// test file), which drops what this run left behind once it is over, and only that: other runs
// on the same server (a colleague's, CI's) carry other names.
import pg from 'pg';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The name of this test run, in the names of the databases its files make. */
    pgmcpTestRun: string;
  }
}

/** The server the suites use when PGMCP_TEST_DATABASE_URL names none. */
export const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** What every database of the run's files begins with. */
export function runDatabasePrefix(run: string): string {
  return `pgmcp_t_${run}_`;
}

/** The servers the run's files may have made databases on (a throwaway cluster is gone by now). */
export function runServers(): string[] {
  const fromEnv = process.env['PGMCP_TEST_DATABASE_URL'];
  if (fromEnv) return [fromEnv];
  return process.env['PGMCP_TEST_NO_DEFAULT_POSTGRES'] === '1' ? [] : [DEFAULT_URL];
}

/** Drops the databases of `run` still on the server at `url`; their names. */
export async function dropRunDatabases(url: string, run: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch {
    return []; // no server there: nothing of this run's either
  }
  try {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_catalog.pg_database WHERE starts_with(datname, $1) ORDER BY 1`,
      [runDatabasePrefix(run)],
    );
    for (const { datname } of rows) {
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`);
    }
    return rows.map((r) => r.datname);
  } finally {
    await client.end().catch(() => undefined);
  }
}
