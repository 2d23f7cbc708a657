// A real PostgreSQL for the integration and e2e suites, in order of preference:
//   1. PGMCP_TEST_DATABASE_URL (the server, and the database to start from);
//   2. postgres://postgres@127.0.0.1:5432/test when it answers (the team's machines);
//   3. a throwaway cluster from the local server binaries (initdb + pg_ctl), stopped at exit;
//   4. nothing: the suite is skipped LOUDLY and recorded in .tmp/skipped-suites.txt (CI fails).
// PGMCP_TEST_NO_DEFAULT_POSTGRES=1 skips step 2 and PGMCP_TEST_NO_THROWAWAY=1 step 3 (to try
// the later steps on a machine that has PostgreSQL).
//
// Each test file works in a database of its own (pgmcp_t_<run>_<file>_<random>, made from
// template0 when the file asks for PostgreSQL, dropped after its last test, and what is left of
// the run's after the run by the global setup, test-databases.ts): test files run in parallel,
// and two of them changing the same database's catalog (schemas, views, grants, event
// triggers) wait for each other's locks or deadlock. What is cluster-wide stays shared only
// where it must: the non-superuser role pgmcp_test, and the roles and databases files make
// themselves, each under a name no other file uses.
// The server under test connects as the NON-superuser role pgmcp_test (STYLE.md), which only
// gets SELECT on each test file's own fixture schema.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { serverBinDir, startCluster } from './pg-cluster.js';
import { DEFAULT_URL, runDatabasePrefix } from './test-databases.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SKIPPED_SUITES_FILE = join(REPO_ROOT, '.tmp', 'skipped-suites.txt');

export const TEST_ROLE = 'pgmcp_test';
const TEST_ROLE_PASSWORD = 'not-a-real-secret';

export interface RealPostgres {
  /** Where it came from, for messages. */
  readonly source: 'env' | 'default' | 'throwaway';
  /**
   * A URL with rights to create roles and schemas (fixtures are made through it), on the test
   * file's own database.
   */
  readonly adminUrl: string;
  /** The test file's own database (adminUrl's and url's). */
  readonly database: string;
  /** The URL the server under test uses: the non-superuser role pgmcp_test. */
  readonly url: string;
  /** The role `url` logs in as. */
  readonly role: string;
}

/** The server found: the database to start from, before the file's own is made. */
type Server = Omit<RealPostgres, 'database'>;

let cached: Promise<Server | null> | undefined;
let ownDatabase: Promise<RealPostgres> | undefined;
/** What undoes them after the file's last test: the database's drop, the cluster's stop. */
let dropOwnDatabase: (() => Promise<void>) | null = null;
let stopThrowaway: (() => void) | null = null;

// Hooks only run when registered while the test file is collected: one registered from a hook
// or a test is silently never run. This turns false when the file's first hook runs.
let collecting = true;
beforeAll(() => {
  collecting = false;
});

/**
 * A real PostgreSQL for `suite`, on a database of the test file's own, or null (after a loud
 * warning and a line in .tmp/skipped-suites.txt) when none can be found or started. Use with
 * describe.skipIf(!pg), and await it at the top level of the test file (it throws anywhere
 * else): the database is dropped after the file's last test.
 */
export function realPostgres(suite: string): Promise<RealPostgres | null> {
  if (!collecting) {
    throw new Error(
      `realPostgres (${suite}) is called from a hook or a test: await it at the top level of the test file, or its database is never dropped`,
    );
  }
  if (cached === undefined) {
    // Registered now, while the file is collected (see above); undone in reverse order.
    afterAll(async () => {
      await ownDatabase?.catch(() => undefined);
      await dropOwnDatabase?.();
      stopThrowaway?.();
    });
  }
  cached ??= locate();
  return cached.then((found) => {
    if (!found) {
      reportSkipped(
        suite,
        'no PostgreSQL server: set PGMCP_TEST_DATABASE_URL, start one on 127.0.0.1:5432, or install the server binaries (initdb)',
      );
      return null;
    }
    ownDatabase ??= createFileDatabase(found, suite);
    return ownDatabase;
  });
}

/**
 * `pgmcp_t_<run>_<file>_<random>`: the run that made it (whose global setup drops what is left
 * of it), the file it is for, told apart from other runs of that file.
 */
function fileDatabaseName(suite: string): string {
  const testPath = expect.getState().testPath ?? '';
  const from = testPath
    ? testPath
        .slice(REPO_ROOT.length)
        .replace(/^(test|src)\//, '')
        .replace(/\.test\.ts$/, '')
    : suite;
  const slug = from
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 36);
  return `${runDatabasePrefix(testRun())}${slug}_${Math.random().toString(36).slice(2, 8)}`;
}

/** The run's name from the global setup; without it (another config), one of this process's. */
let ownRun: string | undefined;
function testRun(): string {
  const provided = inject('pgmcpTestRun');
  if (typeof provided === 'string' && /^[a-z0-9]+$/.test(provided)) return provided;
  ownRun ??= Math.random().toString(36).slice(2, 8);
  return ownRun;
}

async function createFileDatabase(server: Server, suite: string): Promise<RealPostgres> {
  const database = fileDatabaseName(suite);
  // template0: nothing another file (or an earlier run) put into the server's databases.
  await withClient(server.adminUrl, (c) =>
    c.query(`CREATE DATABASE ${database} TEMPLATE template0 ENCODING 'UTF8'`),
  );
  dropOwnDatabase = async () => {
    await withClient(server.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
    );
  };
  const on = (url: string): string => {
    const u = new URL(url);
    u.pathname = `/${database}`;
    return u.toString();
  };
  return { ...server, database, adminUrl: on(server.adminUrl), url: on(server.url) };
}

async function locate(): Promise<Server | null> {
  const fromEnv = process.env['PGMCP_TEST_DATABASE_URL'];
  if (fromEnv) {
    // An explicit URL that does not answer is a broken setup, not a reason to look elsewhere.
    await ping(fromEnv, 10_000);
    return withTestRole('env', fromEnv);
  }
  if (process.env['PGMCP_TEST_NO_DEFAULT_POSTGRES'] !== '1') {
    const answered = await ping(DEFAULT_URL, 3_000).then(
      () => true,
      () => false,
    );
    if (answered) return withTestRole('default', DEFAULT_URL);
  }
  const binDir = process.env['PGMCP_TEST_NO_THROWAWAY'] === '1' ? null : serverBinDir();
  if (!binDir) return null;
  const adminUrl = await startThrowawayCluster();
  return withTestRole('throwaway', adminUrl);
}

async function ping(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Run `work` on one connection of `url`. */
export async function withClient<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates (once, under an advisory lock: test files run in parallel) the non-superuser role. */
async function withTestRole(source: Server['source'], adminUrl: string): Promise<Server> {
  const created = await withClient(adminUrl, async (client) => {
    const { rows } = await client.query<{ can: boolean }>(
      'SELECT rolsuper OR rolcreaterole AS can FROM pg_roles WHERE rolname = current_user',
    );
    if (!rows[0]?.can) return false;
    await client.query('SELECT pg_advisory_lock(hashtext($1))', ['pgmcp-test-role']);
    try {
      const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [TEST_ROLE]);
      const verb = exists.rowCount === 0 ? 'CREATE' : 'ALTER';
      await client.query(
        `${verb} ROLE ${TEST_ROLE} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS NOINHERIT PASSWORD '${TEST_ROLE_PASSWORD}'`,
      );
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['pgmcp-test-role']);
    }
    return true;
  });
  if (!created) {
    process.stderr.write(
      `\n!!! pgmcp tests: ${redact(adminUrl)} may not create roles; the server under test uses it as is.\n\n`,
    );
    const role = await withClient(
      adminUrl,
      async (c) => (await c.query('SELECT current_user AS u')).rows[0].u as string,
    );
    return { source, adminUrl, url: adminUrl, role };
  }
  const url = new URL(adminUrl);
  url.username = TEST_ROLE;
  url.password = TEST_ROLE_PASSWORD;
  return { source, adminUrl, url: url.toString(), role: TEST_ROLE };
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '****';
    return u.toString();
  } catch {
    return '(a database URL)';
  }
}

export interface FixtureSchema {
  readonly name: string;
  /** Rows in <name>.items. */
  readonly itemCount: number;
  drop(): Promise<void>;
}

/** The fixture tables, created in `schema`. Also used for the embedded database. */
export function fixtureSql(schema: string): string {
  const rows: string[] = [];
  const notes: Record<number, string> = {
    1: 'NULL',
    2: `E'tab\\there'`,
    3: `E'line1\\nline2'`,
    4: `E'back\\\\slash'`,
  };
  for (let id = 1; id <= FIXTURE_ITEMS; id++) {
    const name = `'item ${String(id).padStart(2, '0')}'`;
    rows.push(`(${id}, ${name}, ${notes[id] ?? `'note ${id}'`}, ${(id * 1.5).toFixed(1)})`);
  }
  return `
    CREATE SCHEMA ${schema};
    CREATE TABLE ${schema}.items (
      id integer PRIMARY KEY,
      name text NOT NULL,
      note text,
      weight numeric(6,1) NOT NULL
    );
    COMMENT ON TABLE ${schema}.items IS 'pgmcp test fixture';
    INSERT INTO ${schema}.items (id, name, note, weight) VALUES ${rows.join(',\n      ')};
    CREATE TABLE ${schema}.tags (item_id integer REFERENCES ${schema}.items (id), tag text NOT NULL);
    INSERT INTO ${schema}.tags VALUES (1, 'red'), (1, 'blue'), (2, 'green');
  `;
}

export const FIXTURE_ITEMS = 25;

export function uniqueSchemaName(prefix = 'pgmcp_t'): string {
  return `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

/** A unique fixture schema readable by the test role; drop() removes it (call it in afterAll). */
export async function createFixtureSchema(
  pgInfo: RealPostgres,
  prefix?: string,
): Promise<FixtureSchema> {
  const name = uniqueSchemaName(prefix);
  await withClient(pgInfo.adminUrl, async (client) => {
    await client.query(fixtureSql(name));
    if (pgInfo.role !== TEST_ROLE) return;
    await client.query(`GRANT USAGE ON SCHEMA ${name} TO ${TEST_ROLE}`);
    await client.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${name} TO ${TEST_ROLE}`);
  });
  return {
    name,
    itemCount: FIXTURE_ITEMS,
    drop: () =>
      withClient(pgInfo.adminUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`)).then(
        () => undefined,
      ),
  };
}

// ---------------------------------------------------------------------------------------------
// Skipping, loudly.

export function reportSkipped(suite: string, why: string): void {
  process.stderr.write(`!!! SKIPPED SUITE: ${suite}: ${why}\n`);
  mkdirSync(join(REPO_ROOT, '.tmp'), { recursive: true });
  appendFileSync(SKIPPED_SUITES_FILE, `${new Date().toISOString()}\t${suite}\t${why}\n`);
}

// ---------------------------------------------------------------------------------------------
// Throwaway cluster.

async function startThrowawayCluster(): Promise<string> {
  const cluster = await startCluster();
  stopThrowaway = () => cluster.destroy();
  process.stderr.write(
    `pgmcp tests: started a throwaway PostgreSQL cluster on 127.0.0.1:${cluster.port} (${cluster.dataDir})\n`,
  );
  await withClient(cluster.url('postgres'), (c) => c.query('CREATE DATABASE test'));
  return cluster.url('test');
}

/**
 * A database of its own for one suite, made before its tests and dropped after them (call in
 * a describe body). `url` is the admin URL pointed at it.
 */
export function throwawayDatabase(
  info: RealPostgres,
  prefix: string,
): { name: string; url: string } {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const u = new URL(info.adminUrl);
  u.pathname = `/${name}`;
  beforeAll(async () => {
    await withClient(info.adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  });
  afterAll(async () => {
    await withClient(info.adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  });
  return { name, url: u.toString() };
}

/** How many other backends are running a statement that contains `marker` (admin connection). */
export function activeStatements(adminUrl: string, marker: string): Promise<number> {
  return withClient(adminUrl, async (c) => {
    const { rows } = await c.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid() AND state = 'active'`,
      [marker],
    );
    return rows[0]!.n;
  });
}
