// Debian's PgBouncer in front of a PostgreSQL server, for the suites that check pgmcp behind a
// pooler: its own configuration in a temporary folder, a free loopback port, trust auth (the
// server behind it is the one that decides), every database routed to the server. It runs as
// the postgres user when the tests run as root (PgBouncer refuses root), and is stopped when
// the test asks or the process exits.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, ownedTempDir } from './pg-cluster.js';

export const PGBOUNCER_BIN = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) =>
  existsSync(p),
);

export type PoolMode = 'transaction' | 'session';

export interface PgBouncerOptions {
  /** The server behind it. */
  host: string;
  port: number;
  mode: PoolMode;
  /** Users that may log in (trust: any password). */
  users: readonly string[];
  /**
   * Server connections per database and user; 1 makes every client of a user share one
   * server session, the strictest test of what a transaction leaves behind.
   */
  poolSize?: number;
}

export interface PgBouncer {
  readonly port: number;
  readonly mode: PoolMode;
  /** `url` with its host and port replaced by PgBouncer's. */
  via(url: string): string;
  log(): string;
  stop(): Promise<void>;
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  if (!PGBOUNCER_BIN) throw new Error('PgBouncer is not installed (Debian package pgbouncer)');
  const dir = ownedTempDir('pgmcp-pgbouncer-');
  const port = await freePort();
  const logFile = join(dir, 'pgbouncer.log');
  const pidFile = join(dir, 'pgbouncer.pid');
  writeFileSync(join(dir, 'users.txt'), options.users.map((u) => `"${u}" ""\n`).join(''));
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${options.host} port=${options.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${options.mode}`,
      `default_pool_size = ${options.poolSize ?? 1}`,
      'max_client_conn = 200',
      `logfile = ${logFile}`,
      `pidfile = ${pidFile}`,
      // Startup parameters the drivers send that PgBouncer would otherwise refuse.
      'ignore_startup_parameters = extra_float_digits,options',
      'server_reset_query = DISCARD ALL',
      '',
    ].join('\n'),
  );
  const args = [join(dir, 'pgbouncer.ini')];
  const isRoot = process.getuid?.() === 0;
  if (isRoot) spawnSync('chown', ['-R', 'postgres:', dir]);
  const child: ChildProcess = isRoot
    ? spawn('runuser', ['-u', 'postgres', '--', PGBOUNCER_BIN, ...args], { stdio: 'ignore' })
    : spawn(PGBOUNCER_BIN, args, { stdio: 'ignore' });
  let exited = false;
  child.once('exit', () => (exited = true));
  // runuser may not pass SIGKILL on: the daemon's own pid is in its pidfile.
  const signal = (sig: NodeJS.Signals): void => {
    try {
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      if (pid > 0) process.kill(pid, sig);
    } catch {
      // not started yet, or gone
    }
    child.kill(sig);
  };
  const killOnExit = (): void => signal('SIGKILL');
  process.once('exit', killOnExit);
  const log = (): string => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');

  // Ready when a client gets through it to the server.
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (exited) throw new Error(`PgBouncer exited at start:\n${log()}`);
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: options.users[0],
      database: 'postgres',
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) {
        signal('SIGKILL');
        throw new Error(`PgBouncer did not answer: ${(error as Error).message}\n${log()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  return {
    port,
    mode: options.mode,
    via(url) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    log,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (!exited) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        signal('SIGTERM');
        await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        if (!exited) signal('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
