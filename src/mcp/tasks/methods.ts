// tasks/get, tasks/result, tasks/list and tasks/cancel (2025-11-25), and tasks/get, tasks/update
// and tasks/cancel (2026-07-28, only for a request that declares the extension). A task is
// the caller's own: another caller's is unknown, exactly as one that never existed.
import { isTerminal, ownerKey, type TaskRecord } from '../../core/tasks.js';
import { RpcCodes, RpcError } from '../jsonrpc.js';
import { isObject } from '../jsonrpc.js';
import type { Handler, RequestScope } from '../methods/index.js';
import type { TaskService } from './service.js';
import { legacyTask, modernTask, RELATED_TASK, TASKS_EXTENSION } from './wire.js';

const PAGE = 50;

/**
 * Whose tasks the request's caller makes and sees; null: nobody's (an anonymous caller without
 * a kept session, an identity without a user id), so it makes none and sees none.
 */
export function taskOwner(scope: RequestScope): string | null {
  const session = scope.channel.session;
  return ownerKey(scope.channel.principal, session && !session.oneRequest ? session.id : null);
}

/** A task asked for by a caller nobody can own it as (tools.md, "Who sees a task"). */
export function noTaskOwner(tool: string, legacy: boolean): RpcError {
  const how = legacy
    ? 'call it without params.task, or open a session (initialize with an Accept header that admits text/event-stream, then Mcp-Session-Id) or authenticate'
    : 'authenticate (a token, a user, OAuth) and call again';
  return new RpcError(
    RpcCodes.INVALID_PARAMS,
    `The tool ${tool} cannot run as a task for this caller: a task belongs to an identity or a kept session, and this request has neither. To go on, ${how}.`,
    { reason: 'no_task_owner' },
  );
}

/** Whether the request declared the tasks extension (2026-07-28). */
export function declaresTasks(scope: RequestScope): boolean {
  const extensions = scope.clientCapabilities['extensions'];
  return isObject(extensions) && isObject(extensions[TASKS_EXTENSION]);
}

export function missingTasksCapability(): RpcError {
  return new RpcError(
    RpcCodes.MISSING_CAPABILITY,
    `This needs the ${TASKS_EXTENSION} extension: declare it in the request's client capabilities.`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

function taskIdOf(params: Record<string, unknown>): string {
  const id = params['taskId'];
  if (typeof id !== 'string' || id === '' || id.length > 200) {
    throw new RpcError(RpcCodes.INVALID_PARAMS, 'params.taskId must be a non-empty string.');
  }
  return id;
}

function unknownTask(id: string): RpcError {
  return new RpcError(
    RpcCodes.INVALID_PARAMS,
    `Unknown task: ${id.slice(0, 200)}. It never existed, is not yours, or outlived its ttl.`,
  );
}

export interface TaskMethods {
  get: Handler;
  result: Handler;
  list: Handler;
  cancel: Handler;
  update: Handler;
}

export function taskMethods(tasks: TaskService): TaskMethods {
  const found = async (params: Record<string, unknown>, scope: RequestScope) => {
    if (scope.era === 'modern' && !declaresTasks(scope)) throw missingTasksCapability();
    const id = taskIdOf(params);
    const owner = taskOwner(scope);
    const task = owner === null ? null : await tasks.get(id, owner);
    if (!task) throw unknownTask(id);
    return task;
  };
  const failure = (task: TaskRecord): RpcError => {
    const error = task.error ?? {};
    return new RpcError(
      typeof error['code'] === 'number' ? error['code'] : RpcCodes.INTERNAL_ERROR,
      typeof error['message'] === 'string' ? error['message'] : 'The task failed.',
      error['data'],
    );
  };
  return {
    async get(params, scope) {
      const task = await found(params, scope);
      return scope.era === 'modern' ? modernTask(task, true) : legacyTask(task);
    },

    async result(params, scope) {
      const task = await found(params, scope);
      const signal = scope.channel.signal;
      const ended = isTerminal(task.status)
        ? task
        : await tasks.waitEnd(task.id, task.owner, signal);
      if (!ended) throw unknownTask(task.id);
      const related = { [RELATED_TASK]: { taskId: ended.id } };
      // A 2025-11-25 task whose tool answered isError is failed, and its result is that answer.
      if ((ended.status === 'completed' || ended.status === 'failed') && ended.result) {
        const meta = isObject(ended.result['_meta']) ? ended.result['_meta'] : {};
        return { ...ended.result, _meta: { ...meta, ...related } };
      }
      if (ended.status === 'cancelled') {
        throw new RpcError(RpcCodes.INVALID_PARAMS, `Task ${ended.id} was cancelled.`, related);
      }
      throw failure(ended);
    },

    async list(params, scope) {
      const cursor = params['cursor'];
      let offset = 0;
      if (cursor !== undefined) {
        offset = typeof cursor === 'string' && /^\d{1,9}$/.test(cursor) ? Number(cursor) : -1;
        if (offset < 0) throw new RpcError(RpcCodes.INVALID_PARAMS, 'Invalid cursor.');
      }
      const owner = taskOwner(scope);
      const page = owner === null ? [] : await tasks.list(owner, offset, PAGE + 1);
      const out: Record<string, unknown> = { tasks: page.slice(0, PAGE).map(legacyTask) };
      if (page.length > PAGE) out['nextCursor'] = String(offset + PAGE);
      return out;
    },

    async cancel(params, scope) {
      const task = await found(params, scope);
      if (scope.era === 'legacy' && isTerminal(task.status)) {
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Task ${task.id} already ended (${task.status}); it cannot be cancelled.`,
        );
      }
      const after = (await tasks.cancel(task.id, task.owner)) ?? task;
      // It ended before the cancel took (completed a moment ago, failed): not cancelled.
      if (after.status !== 'cancelled') {
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Task ${task.id} already ended (${after.status}); it cannot be cancelled.`,
        );
      }
      return scope.era === 'modern' ? {} : legacyTask(after);
    },

    async update(params, scope) {
      const task = await found(params, scope);
      const responses = params['inputResponses'];
      if (!isObject(responses)) {
        throw new RpcError(RpcCodes.INVALID_PARAMS, 'params.inputResponses must be an object.');
      }
      // Answers to requests not outstanding are ignored, as the extension says.
      await tasks.answer(task.id, task.owner, responses);
      return {};
    },
  };
}
