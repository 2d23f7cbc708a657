// A tools/call that becomes a task: whether it does (the era's rules and the tool's
// `taskSupport`), and the task's work — the same invocation step a direct call goes through,
// on a channel of its own that outlives the request (its progress and logs go to the legacy
// session's stream; cancelling the task aborts it, and the query with it).
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { CallContext, InputRequest, ToolSpec } from '../../core/specs.js';
import type { TaskEnd } from '../../core/tasks.js';
import type { ExchangeRecord } from '../../tools/handlers/exchange-log.js';
import { canUse, inScope } from '../../tools/gate.js';
import { invokeTool } from '../../tools/invoke.js';
import type { RequestChannel } from '../channel.js';
import { rpcErrorOf, toolError, toolErrorResult } from '../errors.js';
import { requireInputCapabilities } from '../input-required.js';
import { isObject, RpcCodes, RpcError } from '../jsonrpc.js';
import type { FeatureOptions, RequestScope, Shared } from '../methods/shared.js';
import { declaresTasks, missingTasksCapability, noTaskOwner, taskOwner } from './methods.js';
import type { TaskService } from './service.js';
import { legacyTask, modernTask, RELATED_TASK } from './wire.js';

/**
 * Null: answer directly. Otherwise a task, with the ttl the client asked for. Throws when the
 * tool and the request disagree (2025-11-25: -32601; 2026-07-28: -32021 for a required task),
 * and when a task is asked for by a caller nobody could own it as (-32602; 2026-07-28: only
 * for a tool that requires a task, any other runs directly).
 */
export function taskRequest(
  spec: ToolSpec | undefined,
  params: Record<string, unknown>,
  scope: RequestScope,
): { ttlMs: number | undefined } | null {
  if (!spec || !inScope(spec, scope.channel.principal) || !canUse(spec, scope.channel.principal))
    return null; // refused by the invocation step as any call is
  const support = spec.taskSupport;
  if (scope.era === 'modern') {
    // Server-directed: a tool that supports tasks runs as one for a client that declares them.
    if (support !== undefined && declaresTasks(scope)) {
      if (taskOwner(scope) !== null) return { ttlMs: undefined };
      if (support === 'required') throw noTaskOwner(spec.name, false);
      return null;
    }
    if (support === 'required') throw missingTasksCapability();
    return null;
  }
  const task = params['task'];
  if (task !== undefined && !isObject(task)) {
    throw new RpcError(RpcCodes.INVALID_PARAMS, 'params.task must be an object.');
  }
  if (task === undefined) {
    if (support === 'required') {
      throw new RpcError(
        RpcCodes.METHOD_NOT_FOUND,
        `The tool ${spec.name} runs only as a task: call it with params.task.`,
      );
    }
    return null;
  }
  if (support === undefined) {
    throw new RpcError(
      RpcCodes.METHOD_NOT_FOUND,
      `The tool ${spec.name} does not run as a task: call it without params.task.`,
    );
  }
  if (taskOwner(scope) === null) throw noTaskOwner(spec.name, true);
  const ttl = task['ttl'];
  if (ttl !== undefined && ttl !== null && (typeof ttl !== 'number' || !(ttl > 0))) {
    throw new RpcError(RpcCodes.INVALID_PARAMS, 'params.task.ttl must be a positive number.');
  }
  return { ttlMs: typeof ttl === 'number' ? ttl : undefined };
}

const noInput: CallContext['requestInput'] = () =>
  Promise.reject(
    new AppError(
      ErrorCodes.CAPABILITY_MISSING,
      'This call needs input from the client, which a task cannot ask for in protocol 2025-11-25: call the tool directly (without params.task).',
      { category: 'input' },
    ),
  );

function askThroughTask(
  tasks: TaskService,
  taskId: string,
  signal: AbortSignal,
  capabilities: Record<string, unknown>,
): CallContext['requestInput'] {
  return async <K extends string>(requests: Record<K, InputRequest>) => {
    requireInputCapabilities(requests, capabilities);
    return (await tasks.ask(taskId, requests, signal)) as Record<K, unknown>;
  };
}

/** The text of an error result, for the failed task's status message (bounded). */
function errorText(result: { content?: unknown }): string {
  const blocks = Array.isArray(result.content) ? (result.content as { text?: unknown }[]) : [];
  const text = blocks
    .map((b) => (typeof b.text === 'string' ? b.text : ''))
    .join(' ')
    .trim();
  return (text || 'The tool answered with an error.').slice(0, 1000);
}

/**
 * How a tool's result ends its task. 2025-11-25: a result with isError fails the task (its
 * text the status message) and tasks/result still answers that result; the 2026-07-28
 * extension inlines any result in a completed task.
 */
function resultEnd(result: Record<string, unknown>, legacy: boolean): TaskEnd {
  if (!legacy || result['isError'] !== true) return { status: 'completed', result };
  const message = errorText(result);
  return {
    status: 'failed',
    statusMessage: message,
    error: { code: RpcCodes.INTERNAL_ERROR, message },
    result,
  };
}

/** A notification's params with `_meta[RELATED_TASK]` naming the task. */
function relatedTo(params: Record<string, unknown> | undefined, taskId: string) {
  const p = params ?? {};
  const meta = isObject(p['_meta']) ? p['_meta'] : {};
  return { ...p, _meta: { ...meta, [RELATED_TASK]: { taskId } } };
}

/** Creates the task and starts its work; the answer is the task handle in the era's form. */
export async function startToolTask(
  options: FeatureOptions,
  shared: Shared,
  name: string,
  params: Record<string, unknown>,
  scope: RequestScope,
  ttlMs: number | undefined,
): Promise<Record<string, unknown>> {
  const tasks = options.tasks!;
  const { registry } = options;
  const principal = scope.channel.principal;
  const session = scope.channel.session?.oneRequest ? null : scope.channel.session;
  const args = params['arguments'] ?? {};
  const legacy = scope.era === 'legacy';
  const owner = taskOwner(scope);
  if (owner === null) throw noTaskOwner(name, legacy); // taskRequest refused it already
  // The creating request is not the tool call: the task's run records that, when it ends.
  if (scope.note) scope.note.recorded = true;
  const task = await tasks.start({
    owner,
    tool: name,
    ttlMs,
    onChange: (t) => {
      if (legacy) session?.notify('notifications/tasks/status', legacyTask(t));
    },
    run: async (signal, taskId): Promise<TaskEnd> => {
      const channel: RequestChannel = {
        session,
        principal,
        inFlight: null,
        // Progress and log messages of the task's work name the task they belong to.
        notify: (method, p) => session?.notify(method, relatedTo(p, taskId)),
        request: (method, p, s) => scope.channel.request(method, p, s),
        signal,
      };
      const note: NonNullable<RequestScope['note']> = {};
      const taskScope: RequestScope = { ...scope, channel, note };
      try {
        const outcome = await invokeTool({
          registry,
          name,
          args: params['arguments'],
          principal,
          run: (call) =>
            shared.withContext(
              params,
              taskScope,
              { method: 'tools/call', name, args },
              call,
              // 2026-07-28: the task waits in input_required; tasks/update brings the answers.
              // 2025-11-25: the request's stream is gone, so a task asks for nothing.
              legacy ? noInput : askThroughTask(tasks, taskId, signal, scope.clientCapabilities),
            ),
          ...(options.logger ? { log: options.logger } : {}),
          ...(options.onToolCall
            ? {
                record: {
                  sink: (record: ExchangeRecord) =>
                    options.onToolCall!({ ...record, era: scope.era }),
                  database: () => note.database,
                },
              }
            : {}),
        });
        switch (outcome.kind) {
          case 'ok':
            return resultEnd({ ...outcome.result }, legacy);
          case 'tool-error':
            return resultEnd(
              { ...toolErrorResult(outcome.error, outcome.spec.outputSchema !== undefined) },
              legacy,
            );
          case 'internal':
            return {
              status: 'failed',
              error: { code: RpcCodes.INTERNAL_ERROR, message: outcome.message },
            };
          case 'input-required':
            return {
              status: 'completed',
              result: {
                ...toolError('The tool needs input a task cannot ask for; call it directly.'),
              },
            };
          case 'refused':
            return {
              status: 'failed',
              error: { code: RpcCodes.INVALID_PARAMS, message: `The tool ${name} was refused.` },
            };
        }
      } catch (error) {
        const { body } = rpcErrorOf(error, options.logger, { method: 'tools/call' });
        return { status: 'failed', error: { ...body } };
      }
    },
  });
  return legacy ? { task: legacyTask(task) } : { resultType: 'task', ...modernTask(task, false) };
}
