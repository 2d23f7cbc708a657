// Throwaway PostgreSQL clusters of a test's own, from the local server binaries: for what the
// shared server cannot give a test (a standby, a restart, a promotion, a preloaded extension,
// settings only a superuser sets at start). Each runs on a free loopback port with its socket
// and data in a temporary folder, trust auth, fsync off; all are stopped and removed when the
// process exits, whatever the test did.
//
// initdb refuses root: when the tests run as root, the server binaries run as the `postgres`
// user, and the folder is handed to it.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';
export { freePort };

/** The directory of the newest local PostgreSQL server binaries (initdb, pg_ctl, …), or null. */
export function serverBinDir(): string | null {
  const candidates: string[] = [];
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join(base, v, 'bin'));
  }
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir) candidates.push(dir);
  }
  return candidates.find((dir) => existsSync(join(dir, 'initdb'))) ?? null;
}

/** Runs a server binary, as the postgres user when we are root. */
export function runAsOwner(
  command: string,
  args: string[],
  timeoutMs = 60_000,
): { status: number | null; output: string } {
  const isRoot = process.getuid?.() === 0;
  const argv = isRoot ? ['runuser', '-u', 'postgres', '--', command, ...args] : [command, ...args];
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: timeoutMs });
  return {
    status: result.status,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}`,
  };
}

/** A folder the server binaries may write to. */
export function ownedTempDir(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  if (process.getuid?.() === 0) {
    chmodSync(root, 0o755);
    const chown = spawnSync('chown', ['postgres:', root]);
    if (chown.status !== 0) throw new Error(`cannot chown ${root} to postgres`);
  }
  return root;
}

export type StopMode = 'smart' | 'fast' | 'immediate';

export interface ClusterOptions {
  /** postgresql.conf settings given at start (`-c name=value`), e.g. shared_preload_libraries. */
  settings?: Record<string, string | number>;
}

export interface Cluster {
  readonly port: number;
  readonly dataDir: string;
  /** A superuser (postgres) URL to a database of this cluster (default `postgres`). */
  url(database?: string): string;
  /** Runs one statement as the superuser on a fresh connection; returns its rows. */
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    sql: string,
    values?: unknown[],
    database?: string,
  ): Promise<R[]>;
  /** Starts it again after stop(); resolves when it accepts connections. */
  start(): void;
  stop(mode?: StopMode): void;
  restart(mode?: StopMode): void;
  /** Turns a standby into a primary; resolves when it accepts writes. */
  promote(): Promise<void>;
  readonly running: boolean;
  /** The server's log so far (for a failing test's message). */
  log(): string;
  /** Stops it (immediate) and removes its folder. Safe to call twice. */
  destroy(): void;
}

const live = new Set<Cluster>();
let exitHookSet = false;

function bin(name: string): string {
  const dir = serverBinDir();
  if (!dir) throw new Error('no local PostgreSQL server binaries (initdb) on this machine');
  return join(dir, name);
}

function makeCluster(
  root: string,
  dataDir: string,
  port: number,
  options: ClusterOptions,
): Cluster {
  const logFile = join(root, 'log');
  const settings = {
    listen_addresses: '127.0.0.1',
    fsync: 'off',
    ...options.settings,
  };
  const pgOptions = [
    `-p ${port}`,
    `-k ${root}`,
    ...Object.entries(settings).map(([k, v]) => `-c ${k}=${String(v)}`),
  ].join(' ');
  let running = false;
  let destroyed = false;
  const pgCtl = (args: string[]): void => {
    const result = runAsOwner(bin('pg_ctl'), ['-D', dataDir, ...args]);
    if (result.status !== 0) {
      throw new Error(`pg_ctl ${args.join(' ')} failed:\n${result.output}\n${cluster.log()}`);
    }
  };
  const url = (database = 'postgres'): string =>
    `postgres://postgres@127.0.0.1:${port}/${database}`;
  const cluster: Cluster = {
    port,
    dataDir,
    url,
    async query(sql, values, database) {
      const client = new pg.Client({ connectionString: url(database) });
      await client.connect();
      try {
        return (await client.query(sql, values)).rows;
      } finally {
        await client.end();
      }
    },
    start() {
      pgCtl(['-o', pgOptions, '-l', logFile, '-w', '-t', '60', 'start']);
      running = true;
    },
    stop(mode = 'fast') {
      pgCtl(['-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    restart(mode = 'fast') {
      cluster.stop(mode);
      cluster.start();
    },
    async promote() {
      pgCtl(['-w', '-t', '60', 'promote']);
      for (let i = 0; i < 100; i++) {
        const [row] = await cluster.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
        if (row && !row.r) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('the promoted standby is still in recovery after 10 s');
    },
    get running() {
      return running;
    },
    log() {
      return existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      live.delete(cluster);
      runAsOwner(bin('pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      rmSync(root, { recursive: true, force: true });
    },
  };
  live.add(cluster);
  if (!exitHookSet) {
    exitHookSet = true;
    process.once('exit', () => {
      for (const c of [...live]) c.destroy();
    });
  }
  return cluster;
}

/** A new primary cluster, started. */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const root = ownedTempDir('pgmcp-cluster-');
  const dataDir = join(root, 'data');
  const init = runAsOwner(bin('initdb'), [
    '-D',
    dataDir,
    '-A',
    'trust',
    '-U',
    'postgres',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.output}`);
  const cluster = makeCluster(root, dataDir, await freePort(), options);
  cluster.start();
  return cluster;
}

/**
 * A streaming standby of `primary` (pg_basebackup -R: it follows the primary until promoted),
 * started. initdb's trust configuration admits replication from loopback.
 */
export async function startStandby(
  primary: Cluster,
  options: ClusterOptions = {},
): Promise<Cluster> {
  const root = ownedTempDir('pgmcp-standby-');
  const dataDir = join(root, 'data');
  const backup = runAsOwner(bin('pg_basebackup'), [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    dataDir,
    '-R',
    '-X',
    'stream',
    '--checkpoint=fast',
    '--no-sync',
  ]);
  if (backup.status !== 0) throw new Error(`pg_basebackup failed:\n${backup.output}`);
  const standby = makeCluster(root, dataDir, await freePort(), {
    ...options,
    settings: { hot_standby: 'on', ...options.settings },
  });
  standby.start();
  return standby;
}

/** Waits until `standby` has replayed everything `primary` had written when called. */
export async function caughtUp(
  primary: Cluster,
  standby: Cluster,
  timeoutMs = 30_000,
): Promise<void> {
  const [row] = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const [r] = await standby.query<{ done: boolean }>(
      'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done',
      [row!.lsn],
    );
    if (r?.done) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the standby did not replay up to ${row!.lsn} in ${timeoutMs} ms`);
}
