// Two task services (two instances) sharing a PostgreSQL state database and no cluster bus: a
// cancel on one stops the query the other runs (its heartbeat reads the cancel), so does a task
// failed elsewhere; the periodic sweep deletes expired ended tasks though nobody reads them, and
// never a working one past its ttl.
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskEnd } from '../../src/core/tasks.js';
import { createTaskService, type TaskService } from '../../src/mcp/tasks/service.js';
import { openStateDatabase, type StateDb } from '../../src/state/index.js';
import { createStateTaskStore } from '../../src/state/task-store.js';
import {
  activeStatements as activeStatementsOf,
  realPostgres,
  throwawayDatabase,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';

const info = await realPostgres('task lifecycle on PostgreSQL');

const activeStatements = (marker: string): Promise<number> =>
  activeStatementsOf(info!.adminUrl, marker);

/** A task's work: a long pg_sleep, cancelled in PostgreSQL when the task's signal aborts. */
async function sleepQuery(marker: string, signal: AbortSignal): Promise<TaskEnd> {
  const client = new pg.Client({ connectionString: info!.url });
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const cancel = (): void =>
    void withClient(info!.adminUrl, (c) => c.query('SELECT pg_cancel_backend($1)', [pid]));
  signal.addEventListener('abort', cancel, { once: true });
  try {
    await client.query(`SELECT pg_sleep(60) AS ${marker}`);
    return { status: 'completed', result: {} };
  } catch (error) {
    return { status: 'failed', error: { code: -32603, message: String(error) } };
  } finally {
    signal.removeEventListener('abort', cancel);
    await client.end();
  }
}

describe.skipIf(!info)('task lifecycle on PostgreSQL (no cluster bus)', () => {
  const { url } = throwawayDatabase(info as RealPostgres, 'pgmcp_task_lifecycle');
  let db: StateDb;
  const services: TaskService[] = [];
  const service = (options: { heartbeatMs?: number; sweepIntervalMs?: number }): TaskService => {
    const made = createTaskService({ maxTtlMs: 3_600_000, sweepIntervalMs: 0, ...options });
    made.useStore(createStateTaskStore(db));
    services.push(made);
    return made;
  };

  beforeAll(async () => {
    db = await openStateDatabase({
      url,
      dataDir: '/nonexistent',
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    for (const s of services) await s.close();
    await db?.close();
  });

  it('a cancel on another instance stops the running query through the heartbeat', async () => {
    const a = service({ heartbeatMs: 200 });
    const b = service({ heartbeatMs: 200 });
    const marker = `life_cancel_${Date.now()}`;
    const task = await a.start({
      owner: 'o',
      tool: 'sleep',
      run: (signal) => sleepQuery(marker, signal),
    });
    await expect.poll(() => activeStatements(marker), { timeout: 10_000 }).toBe(1);
    expect((await b.cancel(task.id, 'o'))?.status).toBe('cancelled');
    await expect.poll(() => activeStatements(marker), { timeout: 10_000 }).toBe(0);
    expect((await a.get(task.id, 'o'))?.status).toBe('cancelled');
  });

  it('a task failed elsewhere (a stale sweep) stops running here', async () => {
    const a = service({ heartbeatMs: 200 });
    const marker = `life_failed_${Date.now()}`;
    const task = await a.start({
      owner: 'o',
      tool: 'sleep',
      run: (signal) => sleepQuery(marker, signal),
    });
    await expect.poll(() => activeStatements(marker), { timeout: 10_000 }).toBe(1);
    await db.query(`UPDATE pgmcp.tasks SET status = 'failed' WHERE id = $1`, [task.id]);
    await expect.poll(() => activeStatements(marker), { timeout: 10_000 }).toBe(0);
  });

  it('sweeps expired ended tasks periodically, never a working one', async () => {
    const marker = `life_sweep_${Date.now()}`;
    const a = service({ sweepIntervalMs: 200 });
    const done = await a.start({
      owner: 's',
      tool: 'quick',
      run: async () => ({ status: 'completed', result: {} }),
    });
    await expect.poll(async () => (await a.get(done.id, 's'))?.status).toBe('completed');
    const late = await a.start({
      owner: 's',
      tool: 'sleep',
      run: (signal) => sleepQuery(marker, signal),
    });
    await db.query(
      `UPDATE pgmcp.tasks SET expires_at = now() - interval '1 second' WHERE id = ANY($1)`,
      [[done.id, late.id]],
    );
    const rows = async (id: string): Promise<number> =>
      (
        await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pgmcp.tasks WHERE id = $1', [
          id,
        ])
      ).rows[0]!.n;
    // Nobody reads either task: the sweep alone deletes the ended one.
    await expect.poll(() => rows(done.id), { timeout: 10_000 }).toBe(0);
    expect(await rows(late.id)).toBe(1);
    expect(
      (
        await db.query<{ status: string }>('SELECT status FROM pgmcp.tasks WHERE id = $1', [
          late.id,
        ])
      ).rows[0]!.status,
    ).toBe('working');
    expect((await a.cancel(late.id, 's'))?.status).toBe('cancelled');
    await expect.poll(() => activeStatements(marker), { timeout: 10_000 }).toBe(0);
  });
});
