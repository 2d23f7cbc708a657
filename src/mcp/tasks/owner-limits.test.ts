// Who owns a task (ownerKey), and the bounds a task service keeps: the ttl floor, the per-owner
// running and stored limits, and a cancel that reaches a running task past its ttl.
import { describe, expect, it } from 'vitest';
import { createMemoryTaskStore, ownerKey, type TaskEnd } from '../../core/tasks.js';
import { ANONYMOUS } from '../../core/principal.js';
import type { ToolSpec } from '../../core/specs.js';
import { RpcError } from '../jsonrpc.js';
import type { RequestScope } from '../methods/shared.js';
import type { Session } from '../session.js';
import { taskRequest } from './call.js';
import { createTaskService, MIN_TTL_MS } from './service.js';
import { TASKS_EXTENSION } from './wire.js';

const oauth = (iss: string | undefined, userId: string | null, tenantId: string | null = null) => ({
  kind: 'oauth',
  userId,
  tenantId,
  claims: iss === undefined ? {} : { iss, sub: 'subject' },
});

/** Work that runs until it is stopped. */
const untilStopped = (signal: AbortSignal): Promise<TaskEnd> =>
  new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve({ status: 'completed', result: {} })),
  );

describe('ownerKey', () => {
  it('gives no owner to an anonymous caller without a kept session, or an identity without a user', () => {
    expect(ownerKey({ kind: 'anonymous', userId: null, tenantId: null }, null)).toBeNull();
    expect(ownerKey(oauth('https://a.example', null), null)).toBeNull();
    expect(ownerKey({ kind: 'trusted-header', userId: null, tenantId: null }, 's1')).toBeNull();
    expect(ownerKey({ kind: 'anonymous', userId: null, tenantId: null }, 's1')).not.toBeNull();
  });

  it('tells apart OAuth subjects of different issuers, and tenants whatever their characters', () => {
    expect(ownerKey(oauth('https://a.example', 'u'), null)).not.toBe(
      ownerKey(oauth('https://b.example', 'u'), null),
    );
    // With ':' joining the parts these two were one key.
    const a = ownerKey({ kind: 'user', userId: 'x:user:y', tenantId: 't' }, null);
    const b = ownerKey({ kind: 'user', userId: 'y', tenantId: 't:user:x' }, null);
    expect(a).not.toBe(b);
    expect(ownerKey({ kind: 'token', userId: 'u', tokenId: 'k', tenantId: null }, null)).not.toBe(
      ownerKey({ kind: 'token', userId: 'u', tokenId: 'j', tenantId: null }, null),
    );
  });
});

describe('task service bounds', () => {
  it('raises a ttl below the floor to it, within maxTtlMs', async () => {
    const tasks = createTaskService({ maxTtlMs: 600_000 });
    const done = async (): Promise<TaskEnd> => ({ status: 'completed', result: {} });
    const one = await tasks.start({ owner: 'o', tool: 't', ttlMs: 1, run: done });
    expect(one.ttlMs).toBe(MIN_TTL_MS);
    const small = createTaskService({ maxTtlMs: 5_000 });
    expect((await small.start({ owner: 'o', tool: 't', ttlMs: 1, run: done })).ttlMs).toBe(5_000);
    await tasks.close();
    small.close();
  });

  it('refuses a task over the running or the stored limit, and makes none', async () => {
    const store = createMemoryTaskStore();
    const tasks = createTaskService({
      maxTtlMs: 600_000,
      maxRunningPerCaller: 2,
      maxStoredPerCaller: 3,
      store,
    });
    const start = (owner: string, run = untilStopped) =>
      tasks.start({ owner, tool: 't', run: (signal) => run(signal) });
    const first = await start('o');
    const second = await start('o');
    const refused = await start('o').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RpcError);
    expect((refused as RpcError).code).toBe(-32000);
    expect((refused as RpcError).data).toEqual({ limit: 'tasks.maxRunningPerCaller', max: 2 });
    expect(await tasks.list('o', 0, 10)).toHaveLength(2);
    // Another owner is not counted against this one.
    await start('p');
    // One ends: one more may run; then the stored limit (3, ended ones too) holds.
    await tasks.cancel(first.id, 'o');
    await start('o');
    await tasks.cancel(second.id, 'o');
    const stored = await start('o').catch((error: unknown) => error);
    expect((stored as RpcError).data).toEqual({ limit: 'tasks.maxStoredPerCaller', max: 3 });
    expect(await tasks.list('o', 0, 10)).toHaveLength(3);
    await tasks.close();
  });

  it('holds the running limit against many starts at once', async () => {
    const tasks = createTaskService({ maxTtlMs: 600_000, maxRunningPerCaller: 2 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, () =>
        tasks.start({ owner: 'o', tool: 't', run: (signal) => untilStopped(signal) }),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    expect(await tasks.list('o', 0, 20)).toHaveLength(2);
    await tasks.close();
  });

  it('a working task past its ttl is still seen and can be cancelled; the sweep keeps it', async () => {
    let now = Date.now();
    const store = createMemoryTaskStore(() => now);
    const tasks = createTaskService({ maxTtlMs: 600_000, store });
    let stopped = false;
    const created = await tasks.start({
      owner: 'o',
      tool: 't',
      ttlMs: 60_000,
      run: async (signal) => {
        const end = await untilStopped(signal);
        stopped = true;
        return end;
      },
    });
    now += 120_000;
    await store.heartbeat(tasks.instance, []);
    await store.sweep(10 ** 9);
    expect((await tasks.get(created.id, 'o'))?.status).toBe('working');
    expect((await tasks.cancel(created.id, 'o'))?.status).toBe('cancelled');
    expect(stopped).toBe(true);
    // Ended and past its ttl: gone.
    expect(await tasks.get(created.id, 'o')).toBeNull();
    await store.sweep(10 ** 9);
    expect(await store.countOwned('o', 10 ** 9)).toEqual({ running: 0, stored: 0 });
    await tasks.close();
  });
});

describe('taskRequest for a caller nobody can own a task as', () => {
  const spec = (taskSupport: 'optional' | 'required'): ToolSpec => ({
    name: 'job',
    description: 'a job',
    inputSchema: { type: 'object', properties: {} },
    taskSupport,
    call: async () => ({ content: [] }),
  });
  const scope = (era: 'legacy' | 'modern', session: Session | null): RequestScope =>
    ({
      era,
      id: 1,
      channel: { session, principal: ANONYMOUS, inFlight: null, notify: () => undefined },
      clientCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      logLevel: null,
      protocolVersion: era === 'modern' ? '2026-07-28' : '2025-11-25',
    }) as unknown as RequestScope;
  const refusal = (run: () => unknown): unknown => {
    try {
      run();
    } catch (error) {
      return error;
    }
    return null;
  };

  it('2026-07-28: runs a tool that supports tasks directly, refuses one that requires a task', () => {
    expect(taskRequest(spec('optional'), {}, scope('modern', null))).toBeNull();
    const refused = refusal(() => taskRequest(spec('required'), {}, scope('modern', null)));
    expect((refused as RpcError).code).toBe(-32602);
    expect((refused as RpcError).data).toEqual({ reason: 'no_task_owner' });
  });

  it('2025-11-25: refuses params.task without a kept session; a kept session gets its task', () => {
    const stateless = { id: 'stateless', oneRequest: true } as unknown as Session;
    const refused = refusal(() =>
      taskRequest(spec('optional'), { task: {} }, scope('legacy', stateless)),
    );
    expect((refused as RpcError).data).toEqual({ reason: 'no_task_owner' });
    const kept = { id: 'kept-session' } as unknown as Session;
    expect(taskRequest(spec('optional'), { task: {} }, scope('legacy', kept))).toEqual({
      ttlMs: undefined,
    });
  });
});
