// The state database's task store (pgmcp.tasks) past a task's ttl: a task still working stays
// visible to its owner, can be cancelled and is never deleted by a sweep; once ended it is gone
// and the sweep deletes it. Also what the per-caller limits count.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateDatabase, type StateDb } from '../../src/state/index.js';
import { createStateTaskStore } from '../../src/state/task-store.js';
import { realPostgres, throwawayDatabase, type RealPostgres } from '../helpers/postgres.js';

const info = await realPostgres('task store on PostgreSQL');

describe.skipIf(!info)('task store on PostgreSQL', () => {
  const { url } = throwawayDatabase(info as RealPostgres, 'pgmcp_task_store');
  let db: StateDb;

  beforeAll(async () => {
    db = await openStateDatabase({
      url,
      dataDir: '/nonexistent',
      logger: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await db?.close();
  });

  const expire = (id: string) =>
    db.query(`UPDATE pgmcp.tasks SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
  const rows = async (id: string): Promise<number> =>
    (
      await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pgmcp.tasks WHERE id = $1', [
        id,
      ])
    ).rows[0]!.n;

  it('keeps a working task past its ttl until it ends, then forgets it', async () => {
    const store = createStateTaskStore(db);
    const task = { owner: 'o', tool: 't', ttlMs: 60_000, pollIntervalMs: 1000, instance: 'i' };
    await store.create({ ...task, id: 'late' });
    await store.create({ ...task, id: 'done' });
    await store.end('done', { status: 'completed', result: {} });
    await expire('late');
    await expire('done');
    await store.sweep(10 ** 9);
    expect(await rows('late')).toBe(1);
    expect(await rows('done')).toBe(0);
    expect((await store.get('late', 'o'))?.status).toBe('working');
    expect(await store.get('late', 'other')).toBeNull();
    expect((await store.list('o', 0, 10)).map((t) => t.id)).toEqual(['late']);
    expect(await store.countOwned('o', 10 ** 9)).toEqual({ running: 1, stored: 1 });
    expect((await store.requestCancel('late', 'o'))?.cancelRequested).toBe(true);
    expect((await store.end('late', { status: 'cancelled' }))?.status).toBe('cancelled');
    expect(await store.get('late', 'o')).toBeNull();
    expect(await store.countOwned('o', 10 ** 9)).toEqual({ running: 0, stored: 0 });
    await store.sweep(10 ** 9);
    expect(await rows('late')).toBe(0);
  });
});
