// Spawns the real embedded database child (PGlite + pgvector behind pglite-socket).
// One data directory is shared by the tests below, in order, so initdb runs only once.

import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes, isAppError } from '../../src/core/errors.js';
import {
  LOCK_FILE_NAME,
  startEmbedded,
  type EmbeddedDatabase,
} from '../../src/db/embedded/index.js';

const logLines: string[] = [];
const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
const logged = (message: string): number =>
  logLines.filter((line) => line.includes(message)).length;

const roots: string[] = [];
function tempDir(prefix = 'pgmcp-embedded-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  roots.push(dir);
  return dir;
}

function connect(db: EmbeddedDatabase): pg.Pool {
  // A pool of ONE: pglite-socket multiplexes every connection onto one backend session.
  const pool = new pg.Pool({ ...db.connection, max: 1 });
  pool.on('error', () => undefined); // a killed child resets idle connections
  return pool;
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(50);
  }
}

function childPidOf(dataDir: string): number {
  const owner = JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8')) as {
    childPid: number;
  };
  return owner.childPid;
}

describe('embedded database', () => {
  let dataDir: string;
  let db: EmbeddedDatabase;
  let pool: pg.Pool;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    dataDir = join(tempDir(), 'data');
    const started = Date.now();
    db = await startEmbedded({ dataDir, seedDemo: true, logger });
    timings.firstStartWithSeedMs = Date.now() - started;
    pool = connect(db);
  });

  afterAll(async () => {
    await pool?.end().catch(() => undefined);
    await db?.stop();
    console.info('embedded timings (ms):', timings);
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it('starts PGlite and answers queries through the socket', async () => {
    expect(db.running).toBe(true);
    expect(db.connection).toMatchObject({ port: 5432, user: 'postgres', database: 'postgres' });
    const { rows } = await pool.query<{ version: string }>('select version()');
    expect(rows[0]!.version).toContain('PGlite');
  });

  it('seeds the demo dataset once', async () => {
    expect(logged('demo dataset loaded')).toBe(1);
    const { rows } = await pool.query<{ table_name: string; n: string }>(`
      select 'sites' as table_name, count(*) as n from demo.sites
      union all select 'telescopes', count(*) from demo.telescopes
      union all select 'observers', count(*) from demo.observers
      union all select 'celestial_objects', count(*) from demo.celestial_objects
      union all select 'observing_sessions', count(*) from demo.observing_sessions
      union all select 'observations', count(*) from demo.observations`);
    const counts = Object.fromEntries(rows.map((row) => [row.table_name, Number(row.n)]));
    expect(counts).toEqual({
      sites: 8,
      telescopes: 24,
      observers: 150,
      celestial_objects: 1600,
      observing_sessions: 1200,
      observations: 7000,
    });
    const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
    expect(total).toBeGreaterThan(9_000);
    expect(total).toBeLessThan(11_000);
    const logbook = await pool.query<{ n: number; embedded: number }>(
      'select count(*)::int as n, count(embedding)::int as embedded from demo.logbook_entries',
    );
    expect(logbook.rows[0]).toEqual({ n: 600, embedded: 600 });

    const nearest = await pool.query<{ designation: string }>(
      `select designation from demo.celestial_objects
        order by spectral_signature <-> '[0.02,0.06,0.18,0.45,0.8,1,0.86,0.62]' limit 3`,
    );
    expect(nearest.rows).toHaveLength(3);
    expect(nearest.rows[0]!.designation).toBe('HR 2061'); // Betelgeuse's own signature

    const near = await pool.query('select * from demo.objects_near(83.8, -5.4, 1)');
    expect(near.rows[0]).toMatchObject({ designation: 'M42' });
    const log = await pool.query('select count(*)::int as n from demo.observation_log');
    expect(log.rows[0].n).toBe(7000);
  });

  it('refuses a second start on the same directory', async () => {
    const second = startEmbedded({ dataDir, seedDemo: false, logger });
    await expect(second).rejects.toMatchObject({
      code: ErrorCodes.EMBEDDED_LOCKED,
      category: 'unavailable',
    });
    const error = await second.catch((e: unknown) => e);
    expect(isAppError(error)).toBe(true);
    expect((error as Error).message).toContain(dataDir);
    expect((error as Error).message).toContain(`pid ${process.pid}`);
    expect((error as Error).message).toContain('--data-dir');
    expect(db.running).toBe(true);
  });

  it('restart() ends a runaway query and keeps committed data', async () => {
    await pool.query('create table public.survives_restart (id int primary key, note text)');
    await pool.query(
      `insert into public.survives_restart values (1, 'committed before the restart')`,
    );

    const runaway = connect(db);
    const query = runaway.query(
      'select count(*) from generate_series(1, 100000) a, generate_series(1, 100000) b',
    );
    const outcome = query.then(
      () => 'finished',
      (error: Error) => error.message,
    );
    await sleep(500); // let the child get busy with it

    const started = Date.now();
    const first = db.restart('test: runaway query');
    const second = db.restart('test: concurrent caller');
    expect(second).toBe(first);
    await first;
    timings.restartMs = Date.now() - started;

    expect(await outcome).not.toBe('finished');
    expect(db.running).toBe(true);
    await runaway.end().catch(() => undefined);

    const { rows } = await pool.query('select note from public.survives_restart');
    expect(rows).toEqual([{ note: 'committed before the restart' }]);
  });

  it('restarts the child by itself after kill -9', async () => {
    const before = childPidOf(dataDir);
    const started = Date.now();
    process.kill(before, 'SIGKILL');
    await waitFor(() => !db.running, 5_000);
    await waitFor(() => db.running, 20_000);
    timings.autoRestartMs = Date.now() - started;
    expect(childPidOf(dataDir)).not.toBe(before);
    expect(logged('was killed by SIGKILL unexpectedly')).toBe(1);
    const { rows } = await pool.query('select count(*)::int as n from public.survives_restart');
    expect(rows[0].n).toBe(1);
  });

  it('stop() releases the lock so a new start works, without reseeding', async () => {
    await pool.end();
    await db.stop();
    await db.stop(); // idempotent
    expect(db.running).toBe(false);
    expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(false);
    await expect(db.restart('after stop')).rejects.toMatchObject({ category: 'unavailable' });

    const started = Date.now();
    db = await startEmbedded({ dataDir, seedDemo: true, logger });
    timings.reopenMs = Date.now() - started;
    pool = connect(db);
    expect(logged('demo dataset loaded')).toBe(1);
    const { rows } = await pool.query('select count(*)::int as n from demo.observations');
    expect(rows[0].n).toBe(7000);
  });

  it('reports a child that cannot open the directory as EMBEDDED_START_FAILED with its output', async () => {
    const broken = join(tempDir(), 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'PG_VERSION'), '9.6\n'); // not a data directory PGlite can open
    const attempt = startEmbedded({
      dataDir: broken,
      seedDemo: true,
      logger,
      startTimeoutMs: 20_000,
    });
    const error = (await attempt.catch((e: unknown) => e)) as {
      code: string;
      category: string;
      message: string;
    };
    expect(error).toMatchObject({
      code: ErrorCodes.EMBEDDED_START_FAILED,
      category: 'unavailable',
    });
    expect(error.message).toContain(broken);
    expect(error.message).toContain('start failed');
    expect(existsSync(join(broken, LOCK_FILE_NAME))).toBe(false);
  });

  it('follows symlinks and puts the socket in a private temp directory when the path is too long', async () => {
    // The lock applies whichever path names the directory.
    const alias = join(tempDir(), 'alias');
    symlinkSync(dataDir, alias);
    await expect(startEmbedded({ dataDir: alias, seedDemo: false, logger })).rejects.toMatchObject({
      code: ErrorCodes.EMBEDDED_LOCKED,
    });
    await pool.end();
    await db.stop();

    // Move the initialised directory somewhere deep (no second initdb) and open it via the alias.
    const deep = join(tempDir(), 'a-rather-long-directory-name-for-testing'.repeat(2), 'data');
    mkdirSync(dirname(deep));
    renameSync(dataDir, deep);
    rmSync(alias);
    symlinkSync(deep, alias);
    expect(Buffer.byteLength(join(deep, '.s.PGSQL.5432'))).toBeGreaterThan(107);

    const other = await startEmbedded({ dataDir: alias, seedDemo: true, logger });
    try {
      expect(other.dataDir).toBe(alias);
      expect(other.connection.host.startsWith(tmpdir())).toBe(true);
      expect(existsSync(join(other.connection.host, '.s.PGSQL.5432'))).toBe(true);
      const otherPool = connect(other);
      const { rows } = await otherPool.query('select count(*)::int as n from demo.sites');
      expect(rows[0].n).toBe(8);
      await otherPool.end();
    } finally {
      await other.stop();
    }
    expect(existsSync(other.connection.host)).toBe(false);
    expect(existsSync(join(deep, LOCK_FILE_NAME))).toBe(false);
    expect(logged('demo dataset loaded')).toBe(1);
  });
});
