import { describe, expect, it } from 'vitest';
import { createMemoryTaskStore, ownerKey } from '../../core/tasks.js';
import { createTaskService, STALE_MS } from './service.js';

const principal = (userId: string) => ({ kind: 'user', userId, tenantId: null });

describe('task service (memory store)', () => {
  it('sweeps expired ended tasks from the memory store (stdio) on its own, never a working one', async () => {
    let now = Date.now();
    const store = createMemoryTaskStore(() => now);
    // A heartbeat interval long enough that the sweep never takes the working task for abandoned.
    const tasks = createTaskService({
      maxTtlMs: 60_000,
      sweepIntervalMs: 50,
      heartbeatMs: 10 ** 9,
      store,
    });
    const done = await tasks.start({
      owner: 'o',
      tool: 't',
      run: async () => ({ status: 'completed', result: {} }),
    });
    await tasks.waitEnd(done.id, 'o');
    const late = await tasks.start({
      owner: 'o',
      tool: 't',
      run: (signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => resolve({ status: 'cancelled' }), { once: true }),
        ),
    });
    now += 120_000;
    // Nobody reads it: the periodic sweep alone deletes the ended task (end finds nothing).
    await expect
      .poll(() => store.end(done.id, { status: 'cancelled' }), { timeout: 5_000 })
      .toBeNull();
    expect((await tasks.get(late.id, 'o'))?.status).toBe('working');
    expect((await tasks.cancel(late.id, 'o'))?.status).toBe('cancelled');
    await tasks.close();
  });

  it('runs a task to its result, bounds the ttl and keeps it from other owners', async () => {
    const tasks = createTaskService({ maxTtlMs: 10_000 });
    const owner = ownerKey(principal('a'), null)!;
    const created = await tasks.start({
      owner,
      tool: 't',
      ttlMs: 10 ** 9,
      run: async () => ({ status: 'completed', result: { content: [] } }),
    });
    expect(created.status).toBe('working');
    expect(created.ttlMs).toBe(10_000);
    const ended = await tasks.waitEnd(created.id, owner);
    expect(ended?.status).toBe('completed');
    expect(await tasks.get(created.id, ownerKey(principal('b'), null)!)).toBeNull();
    expect((await tasks.list(owner, 0, 10)).map((t) => t.id)).toEqual([created.id]);
    await tasks.close();
  });

  it('cancels: the work sees the abort and the task stays cancelled', async () => {
    const tasks = createTaskService({ maxTtlMs: 10_000 });
    let aborted = false;
    const created = await tasks.start({
      owner: 'o',
      tool: 't',
      run: (signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve({ status: 'completed', result: {} });
          }),
        ),
    });
    expect((await tasks.cancel(created.id, 'o'))?.status).toBe('cancelled');
    expect(aborted).toBe(true);
    expect((await tasks.waitEnd(created.id, 'o'))?.status).toBe('cancelled');
    expect(await tasks.cancel(created.id, 'other')).toBeNull();
    await tasks.close();
  });

  it('waits in input_required until every request is answered, one at a time', async () => {
    const tasks = createTaskService({ maxTtlMs: 10_000 });
    const created = await tasks.start({
      owner: 'o',
      tool: 't',
      run: async (signal, id) => {
        const got = await tasks.ask(id, { x: { method: 'm' }, y: { method: 'm' } }, signal);
        return { status: 'completed', result: { got } };
      },
    });
    await expect
      .poll(async () => (await tasks.get(created.id, 'o'))?.status)
      .toBe('input_required');
    await tasks.answer(created.id, 'o', { x: 1, unknown: 3 });
    const partial = await tasks.get(created.id, 'o');
    expect(partial?.status).toBe('input_required');
    expect(Object.keys(partial?.inputRequests ?? {})).toEqual(['y']);
    await tasks.answer(created.id, 'o', { y: 2 });
    const ended = await tasks.waitEnd(created.id, 'o');
    expect(ended?.result).toEqual({ got: { x: 1, y: 2 } });
    await tasks.close();
  });

  it('fails a working task whose instance stopped marking it alive', async () => {
    // Created (and last marked alive) longer ago than the heartbeat window.
    let now = Date.now() - STALE_MS - 1_000;
    const store = createMemoryTaskStore(() => now);
    const other = createTaskService({ maxTtlMs: 600_000, store });
    const created = await store.create({
      id: 'orphan',
      owner: 'o',
      tool: 't',
      ttlMs: 600_000,
      pollIntervalMs: 1000,
      instance: 'gone',
    });
    now = Date.now();
    const seen = await other.get(created.id, 'o');
    expect(seen?.status).toBe('failed');
    expect(seen?.error?.['code']).toBe(-32603);
    other.close();
  });

  it('a task still running when the server stops ends failed, not cancelled', async () => {
    const tasks = createTaskService({ maxTtlMs: 10_000 });
    const created = await tasks.start({
      owner: 'o',
      tool: 't',
      run: (signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => resolve({ status: 'completed', result: {} })),
        ),
    });
    await tasks.close();
    const ended = await tasks.waitEnd(created.id, 'o');
    expect(ended?.status).toBe('failed');
    expect(ended?.error?.['message']).toMatch(/server shut down/);
  });
});
