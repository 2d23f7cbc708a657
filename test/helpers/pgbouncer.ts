// Debian's PgBouncer in front of a throwaway cluster (pg-cluster.ts), for the suites that run
// pgmcp behind a pooler. Trust auth, a pool of two server connections, daemonized as the
// postgres user (PgBouncer refuses root); stop() ends it by its pid.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, ownedTempDir, type Cluster } from './pg-cluster.js';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface Bouncer {
  port: number;
  stop(): void;
}

/** PgBouncer in front of `cluster`, as the postgres user (it refuses root), daemonized. */
export async function startBouncer(
  cluster: Cluster,
  mode: 'transaction' | 'session',
): Promise<Bouncer> {
  const dir = ownedTempDir('pgmcp-bouncer-');
  const port = await freePort();
  const pidFile = join(dir, 'pgbouncer.pid');
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `postgres = host=127.0.0.1 port=${cluster.port} dbname=postgres`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      "unix_socket_dir = ''",
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      `pool_mode = ${mode}`,
      'default_pool_size = 2',
      'max_client_conn = 50',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${pidFile}`,
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  const isRoot = process.getuid?.() === 0;
  if (isRoot) spawnSync('chown', ['-R', 'postgres:', dir]);
  const argv = [PGBOUNCER, '-d', join(dir, 'pgbouncer.ini')];
  const run = spawnSync(
    isRoot ? 'runuser' : argv[0]!,
    isRoot ? ['-u', 'postgres', '--', ...argv] : argv.slice(1),
    {
      encoding: 'utf8',
    },
  );
  if (run.status !== 0) throw new Error(`pgbouncer did not start: ${run.stderr}${run.stdout}`);
  for (let i = 0; i < 100 && !existsSync(pidFile); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return {
    port,
    stop() {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    },
  };
}
