// Tasks: a tool call that answers at once with a handle and runs on, its status and its outcome
// kept where every instance can read them (the state database; memory where there is none).
// The protocol's two wire forms are the MCP layer's (mcp/tasks); this is what is stored.

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export interface TaskRecord {
  id: string;
  /** Whose it is (`ownerKey`): no other caller reads, lists or cancels it. */
  owner: string;
  /** The tool it runs. */
  tool: string;
  status: TaskStatus;
  statusMessage: string | null;
  createdAt: Date;
  updatedAt: Date;
  ttlMs: number;
  pollIntervalMs: number;
  /** The tool's result (completed). */
  result: Record<string, unknown> | null;
  /** The JSON-RPC error (failed). */
  error: Record<string, unknown> | null;
  /** input_required: the requests the client has yet to answer, by key (tasks/update answers). */
  inputRequests: Record<string, unknown> | null;
  /** Answers delivered by tasks/update that the running work has not taken yet, by key. */
  inputResponses: Record<string, unknown> | null;
  /** The instance running it and when it last said it was alive (working tasks). */
  instance: string;
  heartbeatAt: Date;
  /** A cancel was asked for; the running instance stops the work. */
  cancelRequested: boolean;
}

export interface NewTask {
  id: string;
  owner: string;
  tool: string;
  ttlMs: number;
  pollIntervalMs: number;
  instance: string;
}

/** How a task ends: only the first end counts (a cancelled task stays cancelled). */
export type TaskEnd =
  | { status: 'completed'; result: Record<string, unknown>; statusMessage?: string }
  | {
      status: 'failed';
      error: Record<string, unknown>;
      /** 2025-11-25: a tool's own error result (isError), still what tasks/result answers. */
      result?: Record<string, unknown>;
      statusMessage?: string;
    }
  | { status: 'cancelled'; statusMessage?: string };

export interface TaskStore {
  /** Durable once it resolves: a get from any instance finds it. */
  create(task: NewTask): Promise<TaskRecord>;
  /**
   * The task if it exists, is the owner's and is visible: it has not outlived its ttl, or it is
   * still running (a working task stays reachable, so that it can be cancelled, until it ends).
   */
  get(id: string, owner: string): Promise<TaskRecord | null>;
  /** The owner's tasks, newest first, from an offset. */
  list(owner: string, offset: number, limit: number): Promise<TaskRecord[]>;
  /** Ends a task that is not ended yet; the task as it is afterwards (null: gone). */
  end(id: string, end: TaskEnd): Promise<TaskRecord | null>;
  /** Marks a cancel as asked for (not yet ended); reaches a running task past its ttl too. */
  requestCancel(id: string, owner: string): Promise<TaskRecord | null>;
  /** The work waits for input: status input_required, these requests outstanding (added). */
  askInput(id: string, requests: Record<string, unknown>): Promise<void>;
  /**
   * tasks/update: keeps the answers to outstanding requests (others are ignored) and takes
   * their keys off the outstanding ones. Null: no such task of this owner.
   */
  answerInput(
    id: string,
    owner: string,
    responses: Record<string, unknown>,
  ): Promise<TaskRecord | null>;
  /**
   * The running work takes the answers to `keys` once all are there (then the task is working
   * again); null while some are missing.
   */
  takeInput(id: string, keys: readonly string[]): Promise<Record<string, unknown> | null>;
  /**
   * The owner's tasks still running (working or input_required, marked alive within `staleMs`)
   * and those stored (every visible one): what tasks.maxRunningPerCaller / maxStoredPerCaller
   * bound.
   */
  countOwned(owner: string, staleMs: number): Promise<{ running: number; stored: number }>;
  /**
   * The running instance is alive: its working tasks' heartbeat is now. Answers which of
   * `running` (the tasks this instance runs) must stop: a cancel was asked for, they ended
   * elsewhere (cancelled, failed by a sweep) or they are gone.
   */
  heartbeat(instance: string, running: readonly string[]): Promise<string[]>;
  /**
   * Working tasks whose instance said nothing since `staleMs` are failed (the instance
   * stopped while running them); the expired ones that ended are deleted (never a running one).
   */
  sweep(staleMs: number): Promise<void>;
}

/** The caller a task belongs to, as ownerKey reads it (a Principal fits). */
export interface TaskCaller {
  kind: string;
  userId: string | null;
  tokenId?: string | undefined;
  tenantId: string | null;
  claims?: Readonly<Record<string, unknown>>;
}

/**
 * The caller a task belongs to: the identity (its kind, tenant, the OAuth issuer, the token or
 * user), or the kept session of an anonymous caller. The parts are a JSON array, so no value
 * can run into the next. Null: nobody to own a task (an anonymous caller without a kept
 * session, an identity without a user id): such a caller gets no task.
 */
export function ownerKey(caller: TaskCaller, sessionId: string | null): string | null {
  if (caller.kind === 'anonymous') {
    return sessionId ? JSON.stringify(['session', sessionId]) : null;
  }
  const who = caller.tokenId
    ? ['token', caller.tokenId]
    : caller.userId
      ? ['user', caller.userId]
      : null;
  if (who === null) return null;
  const iss = caller.kind === 'oauth' ? caller.claims?.['iss'] : undefined;
  const issuer = typeof iss === 'string' ? iss : null;
  return JSON.stringify([caller.kind, caller.tenantId, issuer, ...who]);
}

/** Tasks in this process only (stdio without a shared state database, tests). */
export function createMemoryTaskStore(now: () => number = Date.now): TaskStore {
  const tasks = new Map<string, TaskRecord>();
  const alive = (t: TaskRecord | undefined): t is TaskRecord =>
    t !== undefined && (t.createdAt.getTime() + t.ttlMs > now() || !isTerminal(t.status));
  const copy = (t: TaskRecord): TaskRecord => ({ ...t });
  return {
    async create(task) {
      const at = new Date(now());
      const record: TaskRecord = {
        ...task,
        status: 'working',
        statusMessage: null,
        createdAt: at,
        updatedAt: at,
        result: null,
        error: null,
        inputRequests: null,
        inputResponses: null,
        heartbeatAt: at,
        cancelRequested: false,
      };
      tasks.set(task.id, record);
      return copy(record);
    },
    async get(id, owner) {
      const t = tasks.get(id);
      return alive(t) && t.owner === owner ? copy(t) : null;
    },
    async list(owner, offset, limit) {
      return [...tasks.values()]
        .filter((t) => alive(t) && t.owner === owner)
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
        .slice(offset, offset + limit)
        .map(copy);
    },
    async end(id, end) {
      const t = tasks.get(id);
      if (!t) return null;
      if (!isTerminal(t.status)) {
        t.status = end.status;
        t.statusMessage = end.statusMessage ?? null;
        t.updatedAt = new Date(now());
        if (end.status !== 'cancelled') t.result = end.result ?? null;
        if (end.status === 'failed') t.error = end.error;
      }
      return copy(t);
    },
    async requestCancel(id, owner) {
      const t = tasks.get(id);
      if (!alive(t) || t.owner !== owner) return null;
      if (!isTerminal(t.status)) t.cancelRequested = true;
      return copy(t);
    },
    async askInput(id, requests) {
      const t = tasks.get(id);
      if (!t || isTerminal(t.status)) return;
      t.status = 'input_required';
      t.inputRequests = { ...(t.inputRequests ?? {}), ...requests };
      t.updatedAt = new Date(now());
    },
    async answerInput(id, owner, responses) {
      const t = tasks.get(id);
      if (!alive(t) || t.owner !== owner) return null;
      const outstanding = { ...(t.inputRequests ?? {}) };
      const kept = { ...(t.inputResponses ?? {}) };
      for (const [key, value] of Object.entries(responses)) {
        if (!Object.hasOwn(outstanding, key)) continue;
        kept[key] = value;
        delete outstanding[key];
      }
      t.inputRequests = Object.keys(outstanding).length > 0 ? outstanding : null;
      t.inputResponses = kept;
      return copy(t);
    },
    async takeInput(id, keys) {
      const t = tasks.get(id);
      const kept = t?.inputResponses ?? {};
      if (!t || !keys.every((k) => Object.hasOwn(kept, k))) return null;
      const out: Record<string, unknown> = {};
      const rest = { ...kept };
      for (const key of keys) {
        out[key] = kept[key];
        delete rest[key];
      }
      t.inputResponses = rest;
      if (t.status === 'input_required' && t.inputRequests === null) {
        t.status = 'working';
        t.updatedAt = new Date(now());
      }
      return out;
    },
    async countOwned(owner, staleMs) {
      const owned = [...tasks.values()].filter((t) => alive(t) && t.owner === owner);
      const running = owned.filter(
        (t) => !isTerminal(t.status) && now() - t.heartbeatAt.getTime() < staleMs,
      );
      return { running: running.length, stored: owned.length };
    },
    async heartbeat(instance, running) {
      for (const t of tasks.values()) {
        if (t.instance === instance && !isTerminal(t.status)) t.heartbeatAt = new Date(now());
      }
      return running.filter((id) => {
        const t = tasks.get(id);
        return !t || isTerminal(t.status) || t.cancelRequested;
      });
    },
    async sweep(staleMs) {
      for (const [id, t] of tasks) {
        if (!alive(t)) tasks.delete(id);
        else if (!isTerminal(t.status) && now() - t.heartbeatAt.getTime() >= staleMs) {
          const message = 'The server instance running this task stopped before it ended.';
          t.status = 'failed';
          t.statusMessage = message;
          t.error = { code: -32603, message };
          t.updatedAt = new Date(now());
        }
      }
    },
  };
}
