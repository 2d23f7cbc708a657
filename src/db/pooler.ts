// Whether a connection reaches a server session of its own: a pooler (PgBouncer) answers the
// startup with a backend pid of its own making, not the server's.
import type pg from 'pg';

export async function backendPids(
  client: pg.Client | pg.PoolClient,
): Promise<{ startupPid: number | undefined; backendPid: number; direct: boolean }> {
  const { rows } = await client.query<{ pid: number }>('SELECT pg_catalog.pg_backend_pid() AS pid');
  const startupPid = (client as unknown as { processID?: number }).processID;
  const backendPid = rows[0]!.pid;
  return { startupPid, backendPid, direct: startupPid === undefined || startupPid === backendPid };
}
