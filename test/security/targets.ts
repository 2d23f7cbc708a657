// The deployments the corpus runs against: a real PostgreSQL (as the non-superuser pgmcp_test
// role, or as a superuser — the worst case, where only the transaction mode and the parser
// stand between a statement and the server's files and processes) and the embedded PGlite.
// Each gets a database of its own whose default is standard_conforming_strings = off, so the
// lexer tricks meet a server that would read backslashes the old way unless pgmcp says otherwise.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { vi } from 'vitest';
import { pino } from 'pino';
import { installCatalogTrigger } from '../../src/catalog/watch.js';
import { startEmbedded } from '../../src/db/embedded/index.js';
import { startPgBouncer, type PgBouncer, type PoolMode } from '../helpers/pgbouncer.js';
import { TEST_ROLE, uniqueSchemaName, withClient, type RealPostgres } from '../helpers/postgres.js';
import {
  EMBEDDED_STATEMENT_TIMEOUT_MS,
  fixtureSql,
  securityServerEnv,
  snapshotSql,
  startTarget,
  type Target,
} from './harness.js';
import { catalogFixtureSql, deniedColumnFixtureSql, stateStandInSql } from './catalog.js';
import { indirectionFixtureSql, passwordRoleSql, policyEnv } from './indirection.js';

const SCHEMA = 'sec';
/** Created where the server has them: pg_trgm for the legitimate list, dblink for the hostile one. */
const EXTENSIONS = ['pg_trgm', 'dblink'];

function withDatabase(url: string, database: string, applicationName?: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  if (applicationName) u.searchParams.set('application_name', applicationName);
  return u.toString();
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => undefined); // a terminated victim shows up in the checks instead
  await client.connect();
  return client;
}

export async function postgresTarget(
  info: RealPostgres,
  mode: 'role' | 'superuser',
  options: { pooler?: PoolMode } = {},
): Promise<Target> {
  const database = uniqueSchemaName(mode === 'role' ? 'pgmcp_sec_role' : 'pgmcp_sec_super');
  // Roles are cluster-wide: this one is the target's own, dropped with its database.
  const passwordRole = `${database}_pw`;
  await withClient(info.adminUrl, (c) => c.query(`CREATE DATABASE ${database}`));
  const clients: pg.Client[] = [];
  let bouncer: PgBouncer | null = null;
  const cleanup = async (): Promise<void> => {
    for (const client of clients) await client.end().catch(() => undefined);
    await bouncer?.stop();
    await withClient(info.adminUrl, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS ${passwordRole}`);
    });
  };
  try {
    const admin = await connect(withDatabase(info.adminUrl, database, 'pgmcp_sec_admin'));
    clients.push(admin);
    const me = (
      await admin.query<{ name: string; superuser: boolean }>(
        'SELECT rolname AS name, rolsuper AS superuser FROM pg_roles WHERE rolname = current_user',
      )
    ).rows[0]!;
    if (mode === 'superuser' && !me.superuser) {
      throw new Error(`the superuser suite needs a superuser admin URL; ${me.name} is not one`);
    }
    const available = (
      await admin.query<{ name: string }>(
        'SELECT name FROM pg_available_extensions WHERE name = ANY ($1)',
        [EXTENSIONS],
      )
    ).rows.map((r) => r.name);
    for (const name of available) await admin.query(`CREATE EXTENSION ${name}`);
    await admin.query(fixtureSql(SCHEMA));
    await admin.query(passwordRoleSql(passwordRole));
    await admin.query(indirectionFixtureSql(SCHEMA));
    await admin.query(deniedColumnFixtureSql(SCHEMA) + catalogFixtureSql(SCHEMA));
    // The served database holds a schema named like the state schema: the server denies it.
    await admin.query(stateStandInSql(mode === 'role' ? info.role : null, SCHEMA));
    // As `pgmcp install` leaves it: the catalog generation lets the access policy reuse its
    // lookups, so the corpus meets the cached path too (the embedded server installs it itself).
    await installCatalogTrigger(admin);
    const role = mode === 'role' ? info.role : me.name;
    if (mode === 'role' && info.role === TEST_ROLE) {
      await admin.query(`GRANT USAGE ON SCHEMA ${SCHEMA} TO ${TEST_ROLE}`);
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${SCHEMA} TO ${TEST_ROLE}`);
    }
    await admin.query(`ALTER DATABASE ${database} SET standard_conforming_strings = off`);
    // The server's connections are recognisable from outside by their application_name.
    let serverUrl = withDatabase(mode === 'role' ? info.url : info.adminUrl, database, database);
    if (options.pooler) {
      // PgBouncer between pgmcp and the server, one server connection per user: every call
      // of the server and the probe after it meet the same server session, as without it.
      const server = new URL(info.url);
      bouncer = await startPgBouncer({
        host: server.hostname,
        port: Number(server.port || 5432),
        mode: options.pooler,
        users: [info.role, me.name],
        poolSize: 1,
      });
      serverUrl = bouncer.via(serverUrl);
    }
    const victim = await connect(
      withDatabase(mode === 'role' ? info.url : info.adminUrl, database, 'pgmcp_sec_victim'),
    );
    clients.push(victim);
    const victimPid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))
      .rows[0]!.pid;
    return await startTarget({
      kind: 'postgres',
      label: `PostgreSQL as ${mode === 'role' ? `the non-superuser ${role}` : `the superuser ${role}`}${options.pooler ? `, through PgBouncer in ${options.pooler} mode` : ''}`,
      role,
      schema: SCHEMA,
      database,
      extensions: available,
      // One pooled connection: the probe after a hostile call runs in the same session.
      serverArgs: ['--database', serverUrl],
      env: securityServerEnv({ PGMCP_POOL_SIZE: '1', ...policyEnv(SCHEMA) }),
      victimPid,
      snapshot: async () =>
        (await admin.query(snapshotSql(SCHEMA, role))).rows[0] as Record<string, unknown>,
      async checkOutside() {
        // The backend hostile calls tried to terminate still answers.
        await victim.query('SELECT 1');
        // No advisory lock and no open transaction is left on the server's connections. A
        // catalog reload the call set off may be between its statements for a moment: what is
        // left is what is still there a little later.
        await vi.waitFor(
          async () => {
            const { rows } = await admin.query<{ locks: number; open: number }>(
              `SELECT (SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                        WHERE a.application_name = $1 AND l.locktype = 'advisory')::int AS locks,
                      (SELECT count(*) FROM pg_stat_activity
                        WHERE application_name = $1 AND state LIKE 'idle in transaction%')::int AS open`,
              [database],
            );
            if (rows[0]!.locks !== 0 || rows[0]!.open !== 0) {
              throw new Error(`server backends keep state: ${JSON.stringify(rows[0])}`);
            }
          },
          { timeout: 3_000, interval: 50 },
        );
      },
      cleanup,
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
}

export async function embeddedTarget(): Promise<Target> {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-sec-embedded-'));
  const dataDir = join(root, 'data');
  const cleanup = async (): Promise<void> => rmSync(root, { recursive: true, force: true });
  try {
    const db = await startEmbedded({ dataDir, seedDemo: false, logger: pino({ level: 'silent' }) });
    let available: string[] = [];
    try {
      const client = new pg.Client({ ...db.connection });
      await client.connect();
      try {
        available = (
          await client.query<{ name: string }>(
            'SELECT name FROM pg_available_extensions WHERE name = ANY ($1)',
            [EXTENSIONS],
          )
        ).rows.map((r) => r.name);
        for (const name of available) await client.query(`CREATE EXTENSION ${name}`);
        await client.query(fixtureSql(SCHEMA));
        await client.query(passwordRoleSql('pgmcp_sec_pw'));
        await client.query(indirectionFixtureSql(SCHEMA));
        await client.query(deniedColumnFixtureSql(SCHEMA) + catalogFixtureSql(SCHEMA));
        // PGlite's one backend ignores per-database settings; the server-wide one reaches it.
        await client.query('ALTER SYSTEM SET standard_conforming_strings = off');
      } finally {
        await client.end();
      }
    } finally {
      await db.stop();
    }
    const target = await startTarget({
      kind: 'embedded',
      label: 'the embedded PGlite (one shared session, superuser)',
      role: 'postgres',
      schema: SCHEMA,
      database: 'postgres',
      extensions: available,
      serverArgs: ['--data-dir', dataDir],
      env: securityServerEnv({
        ...policyEnv(SCHEMA),
        PGMCP_STATEMENT_TIMEOUT_MS: String(EMBEDDED_STATEMENT_TIMEOUT_MS),
      }),
      victimPid: null,
      // Nothing else may open the data directory: the state is read through the server.
      snapshot: null,
      cleanup,
    });
    // The child's first catalog reads are cold (WASM), and on a loaded machine the first
    // calls can pass the 2 s limit before the baseline is read: warm it up (the answers are
    // not judged; the baseline and every check come after).
    for (let i = 0; i < 3; i++) {
      await target.snapshot().catch(() => undefined);
    }
    return target;
  } catch (error) {
    await cleanup();
    throw error;
  }
}
