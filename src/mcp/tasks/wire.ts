// A task in each revision's wire form: 2025-11-25's experimental `tasks` (ttl, pollInterval;
// the result only through tasks/result) and the 2026-07-28 extension (ttlMs, pollIntervalMs;
// the outcome inlined in tasks/get).
import type { TaskRecord } from '../../core/tasks.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const common = (task: TaskRecord): Record<string, unknown> => {
  const out: Record<string, unknown> = {
    taskId: task.id,
    status: task.status,
    createdAt: task.createdAt.toISOString(),
    lastUpdatedAt: task.updatedAt.toISOString(),
  };
  if (task.statusMessage !== null) out['statusMessage'] = task.statusMessage;
  return out;
};

/** 2025-11-25: a Task. */
export function legacyTask(task: TaskRecord): Record<string, unknown> {
  return { ...common(task), ttl: task.ttlMs, pollInterval: task.pollIntervalMs };
}

/** 2026-07-28: a Task, with its outcome when `detailed` (tasks/get, notifications/tasks). */
export function modernTask(task: TaskRecord, detailed: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...common(task),
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
  };
  if (!detailed) return out;
  if (task.status === 'completed' && task.result) out['result'] = task.result;
  if (task.status === 'failed' && task.error) out['error'] = task.error;
  if (task.status === 'input_required') out['inputRequests'] = task.inputRequests ?? {};
  return out;
}
