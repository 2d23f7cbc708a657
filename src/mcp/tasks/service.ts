// The task runtime of one instance: creates a task in the store, runs its work in the
// background under the trace context of the call that created it, records how it ended, stops
// it when a cancel arrives (here, or from another instance over the cluster bus), and keeps its
// instance's working tasks marked alive so that a task whose instance stopped is failed rather
// than left working forever.
import { randomUUID } from 'node:crypto';
import {
  createMemoryTaskStore,
  isTerminal,
  type TaskEnd,
  type TaskRecord,
  type TaskStore,
} from '../../core/tasks.js';
import { inSpan } from '../../core/tracing.js';
import { RpcCodes, RpcError } from '../jsonrpc.js';

/** How often a running instance marks its working tasks alive (tasks.heartbeatIntervalMs). */
export const HEARTBEAT_MS = 5_000;
/** A working task not marked alive for this long (4 heartbeats) lost its instance. */
export const STALE_MS = 4 * HEARTBEAT_MS;
/** How often expired ended tasks are deleted and abandoned ones failed (tasks.sweepIntervalMs). */
export const SWEEP_MS = 60_000;
/** Why the work of tasks still running at shutdown stops: they end failed, not cancelled. */
const STOPPING = new Error('The server shut down before the task ended.');
/** How long stopped tasks get to record their end at shutdown. */
const STOP_SETTLE_MS = 3_000;
/** The shortest ttl granted: a smaller one asked for is raised to it (within tasks.maxTtlMs). */
export const MIN_TTL_MS = 60_000;
/**
 * How often a wait looks at the store for a task that runs on another instance (tasks/result)
 * or for answers (a task waiting for input): soon at first, then less and less often.
 */
const WAIT_FIRST_MS = 100;
const WAIT_MAX_MS = 2_000;
const nextWait = (ms: number): number => Math.min(WAIT_MAX_MS, ms * 2);

export interface TaskServiceOptions {
  /** tasks.maxTtlMs: no task is kept longer; also the ttl of a task that asked for none. */
  maxTtlMs: number;
  /** pollInterval suggested to clients. */
  pollIntervalMs?: number;
  /** tasks.maxRunningPerCaller: an owner's tasks running at once (default 4). */
  maxRunningPerCaller?: number;
  /** tasks.maxStoredPerCaller: an owner's tasks kept, ended or not (default 100). */
  maxStoredPerCaller?: number;
  /** tasks.heartbeatIntervalMs: how often running tasks are marked alive and checked for cancels. */
  heartbeatMs?: number;
  /** tasks.sweepIntervalMs: how often expired ended tasks are deleted (0: never). */
  sweepIntervalMs?: number;
  store?: TaskStore;
}

export interface TaskStart {
  owner: string;
  tool: string;
  /** The ttl the client asked for (raised to MIN_TTL_MS, bounded by maxTtlMs). */
  ttlMs?: number | undefined;
  /** The work; its signal aborts when the task is cancelled. */
  run(signal: AbortSignal, taskId: string): Promise<TaskEnd>;
  /** Told of each status change of the task (notifications). */
  onChange?(task: TaskRecord): void;
}

export interface TaskService {
  readonly instance: string;
  readonly maxTtlMs: number;
  /** Use the shared state database from now on (HTTP with a state database). */
  useStore(store: TaskStore): void;
  /** Forward cancels of tasks running elsewhere (the cluster bus). */
  useForwarder(forward: (taskId: string) => Promise<void>): void;
  /** Throws an RpcError (-32000, `data.limit`) when the owner is at a limit: nothing is made. */
  start(input: TaskStart): Promise<TaskRecord>;
  get(id: string, owner: string): Promise<TaskRecord | null>;
  list(owner: string, offset: number, limit: number): Promise<TaskRecord[]>;
  /** Ends the task as cancelled (unless it ended already) and stops its work wherever it runs. */
  cancel(id: string, owner: string): Promise<TaskRecord | null>;
  /** A cancel forwarded by another instance: stops the work if it runs here. */
  stopLocal(id: string): void;
  /**
   * The task's work waits for input: the task is input_required with these requests (keys made
   * unique over the task's life) until tasks/update answered them all.
   */
  ask(
    id: string,
    requests: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
  /** tasks/update: the answers to outstanding requests (others ignored); null: unknown task. */
  answer(id: string, owner: string, responses: Record<string, unknown>): Promise<TaskRecord | null>;
  /** Resolves with the task once it ended (or null when it is gone); rejects when `signal` aborts. */
  waitEnd(id: string, owner: string, signal?: AbortSignal): Promise<TaskRecord | null>;
  /**
   * Shutdown: gives the tasks running here `graceMs` to end, then stops the rest (they end
   * failed, "The server shut down before the task ended.") and waits for their ends to be
   * recorded. The store stays in use until this resolves. With no grace the tasks are stopped
   * before it returns (before its first await).
   */
  drain(graceMs: number): Promise<void>;
  /** Drains with no grace and stops the heartbeat and the sweep. */
  close(): Promise<void>;
}

export function createTaskService(options: TaskServiceOptions): TaskService {
  let store = options.store ?? createMemoryTaskStore();
  let forward: ((taskId: string) => Promise<void>) | null = null;
  const instance = randomUUID();
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  /** Tasks running here: their stop and the listeners waiting for their end. */
  const running = new Map<string, { stop: AbortController; ended: Promise<void> }>();
  let beat: NodeJS.Timeout | null = null;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const staleMs = 4 * heartbeatMs;
  /** How many times each running task asked for input (keys stay unique over its life). */
  const rounds = new Map<string, number>();

  const keepAlive = (): void => {
    if (beat !== null || running.size === 0) return;
    beat = setInterval(() => {
      if (running.size === 0) {
        clearInterval(beat!);
        beat = null;
        return;
      }
      // A cancel asked on another instance (or whose bus message was lost), or a task ended
      // elsewhere, stops the work here.
      store
        .heartbeat(instance, [...running.keys()])
        .then((stop) => stop.forEach((id) => service.stopLocal(id)))
        .catch(() => undefined);
    }, heartbeatMs);
    beat.unref();
  };
  // Expired ended tasks are deleted and abandoned working ones failed, even if nobody reads them.
  const sweepMs = options.sweepIntervalMs ?? SWEEP_MS;
  let sweeping: NodeJS.Timeout | null =
    sweepMs > 0
      ? setInterval(() => void store.sweep(staleMs).catch(() => undefined), sweepMs)
      : null;
  sweeping?.unref();

  /** A working task no instance marked alive lately is failed (its instance is gone). */
  const settleAbandoned = async (task: TaskRecord | null): Promise<TaskRecord | null> => {
    if (!task || isTerminal(task.status) || running.has(task.id)) return task;
    if (Date.now() - task.heartbeatAt.getTime() < staleMs) return task;
    await store.sweep(staleMs);
    return store.get(task.id, task.owner);
  };

  const limits = [
    { key: 'tasks.maxRunningPerCaller', max: options.maxRunningPerCaller ?? 4, of: 'running' },
    { key: 'tasks.maxStoredPerCaller', max: options.maxStoredPerCaller ?? 100, of: 'stored' },
  ] as const;
  /**
   * Counted in the store, so the bounds hold across instances; two instances creating at the
   * same moment may each pass the count (a small overshoot, documented).
   */
  let closing: Promise<void> | null = null;
  /** Per owner, the last start still between its limit check and its insert. */
  const starting = new Map<string, Promise<unknown>>();
  const checkLimits = async (owner: string): Promise<void> => {
    const counts = await store.countOwned(owner, staleMs);
    for (const { key, max, of } of limits) {
      if (counts[of] < max) continue;
      const what = of === 'running' ? 'running' : 'kept (ended or not, within their ttl)';
      throw new RpcError(
        RpcCodes.RATE_LIMITED,
        `Too many tasks: you have ${counts[of]} ${what}, the limit is ${max} (${key}). ` +
          (of === 'running'
            ? 'Wait for one to end or cancel one, then try again.'
            : 'Try again once older tasks have outlived their ttl.'),
        { limit: key, max },
      );
    }
  };

  const service: TaskService = {
    instance,
    maxTtlMs: options.maxTtlMs,
    useStore(next) {
      store = next;
    },
    useForwarder(next) {
      forward = next;
    },

    async start(input) {
      const requested = input.ttlMs;
      const ttlMs = Math.max(
        Math.min(MIN_TTL_MS, options.maxTtlMs),
        Math.min(
          options.maxTtlMs,
          requested !== undefined && Number.isFinite(requested)
            ? Math.floor(requested)
            : options.maxTtlMs,
        ),
      );
      // One owner's starts on this instance take turns between the count and the insert, so
      // concurrent requests cannot all pass the same count (instances may still overlap).
      const owner = input.owner;
      const mine = (starting.get(owner) ?? Promise.resolve())
        .catch(() => undefined)
        .then(async () => {
          await checkLimits(owner);
          return store.create({
            id: randomUUID(),
            owner,
            tool: input.tool,
            ttlMs,
            pollIntervalMs,
            instance,
          });
        });
      starting.set(owner, mine);
      const created = await mine.finally(() => {
        if (starting.get(owner) === mine) starting.delete(owner);
      });
      const stop = new AbortController();
      const work = async (): Promise<void> => {
        let end: TaskEnd;
        try {
          end = await inSpan(
            `task ${input.tool}`,
            { 'pgmcp.task.id': created.id, 'gen_ai.tool.name': input.tool },
            () => input.run(stop.signal, created.id),
          );
        } catch (error) {
          end = {
            status: 'failed',
            error: {
              code: -32603,
              message: error instanceof Error ? error.message : String(error),
            },
          };
        }
        if (stop.signal.aborted) {
          end =
            stop.signal.reason === STOPPING
              ? {
                  status: 'failed',
                  error: { code: -32603, message: STOPPING.message },
                  statusMessage: STOPPING.message,
                }
              : { status: 'cancelled' };
        }
        const ended = await store.end(created.id, end).catch(() => null);
        if (ended && end.status === ended.status) input.onChange?.(ended);
      };
      // Started inside the creating request: the work continues its trace context.
      const ended = work().finally(() => {
        running.delete(created.id);
        rounds.delete(created.id);
      });
      running.set(created.id, { stop, ended });
      keepAlive();
      return created;
    },

    async get(id, owner) {
      return settleAbandoned(await store.get(id, owner));
    },

    list: (owner, offset, limit) => store.list(owner, offset, limit),

    async cancel(id, owner) {
      const asked = await store.requestCancel(id, owner);
      if (!asked) return null;
      if (isTerminal(asked.status)) return asked;
      const ended = await store.end(id, {
        status: 'cancelled',
        statusMessage: 'The task was cancelled by its caller.',
      });
      if (running.has(id)) service.stopLocal(id);
      else await forward?.(id).catch(() => undefined);
      return ended;
    },

    async ask(id, requests, signal) {
      const round = (rounds.get(id) ?? 0) + 1;
      rounds.set(id, round);
      const keyOf = (key: string): string => (round === 1 ? key : `${key}.${round}`);
      const wire = Object.fromEntries(Object.entries(requests).map(([k, r]) => [keyOf(k), r]));
      await store.askInput(id, wire);
      for (let wait = WAIT_FIRST_MS; ; wait = nextWait(wait)) {
        signal.throwIfAborted();
        const taken = await store.takeInput(id, Object.keys(wire));
        if (taken)
          return Object.fromEntries(Object.keys(requests).map((k) => [k, taken[keyOf(k)]]));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, wait);
          function done(): void {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
          }
          signal.addEventListener('abort', done, { once: true });
        });
      }
    },

    answer: (id, owner, responses) => store.answerInput(id, owner, responses),

    stopLocal(id) {
      running.get(id)?.stop.abort(new Error('The task was cancelled.'));
    },

    async waitEnd(id, owner, signal) {
      for (let wait = WAIT_FIRST_MS; ; wait = nextWait(wait)) {
        signal?.throwIfAborted();
        const task = await service.get(id, owner);
        if (!task || isTerminal(task.status)) return task;
        const local = running.get(id);
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(done, local ? 60_000 : wait);
          function done(): void {
            clearTimeout(timer);
            signal?.removeEventListener('abort', onAbort);
            resolve();
          }
          function onAbort(): void {
            clearTimeout(timer);
            reject(signal!.reason as Error);
          }
          signal?.addEventListener('abort', onAbort, { once: true });
          local?.ended.then(done, done);
        });
      }
    },

    async drain(graceMs) {
      const ends = (): Promise<void> =>
        Promise.all([...running.values()].map((r) => r.ended)).then(() => undefined);
      const within = (ms: number): Promise<void> =>
        Promise.race([ends(), new Promise<void>((r) => setTimeout(r, ms).unref())]);
      if (running.size > 0 && graceMs > 0) await within(graceMs);
      if (running.size === 0) return;
      for (const { stop } of running.values()) stop.abort(STOPPING);
      await within(STOP_SETTLE_MS);
    },

    close() {
      // Once: the HTTP server closes the tasks before the app does it again.
      closing ??= (async () => {
        if (sweeping !== null) clearInterval(sweeping);
        sweeping = null;
        await service.drain(0);
        if (beat !== null) clearInterval(beat);
        beat = null;
      })();
      return closing;
    },
  };
  return service;
}
