// tools/list and tools/call. A call runs through the invocation step the chat agent shares
// (tools/invoke.ts); this edge only gives its outcome MCP's wire form. An unknown or hidden tool
// is a protocol error raised before the tool runs; everything that goes wrong inside it becomes
// an isError result (mcp/errors.ts).
import { ErrorCodes } from '../../core/errors.js';
import type { ToolSpec } from '../../core/specs.js';
import type { ExchangeRecord } from '../../tools/handlers/exchange-log.js';
import { invokeTool } from '../../tools/invoke.js';
import { appsFor, withViewLink } from '../apps.js';
import { toolError, toolErrorResult } from '../errors.js';
import { RpcCodes, RpcError } from '../jsonrpc.js';
import { paginate } from '../pagination.js';
import { prebuild } from '../serialize.js';
import { startToolTask, taskRequest } from '../tasks/call.js';
import {
  deniedError,
  requireString,
  type FeatureOptions,
  type Handler,
  type RequestScope,
  type Shared,
  unknownError,
} from './shared.js';

/** `params.tags` of tools/list: tools with at least one of them; absent or empty: all tools. */
function tagFilter(tags: unknown): Set<string> | null {
  if (tags === undefined || tags === null) return null;
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string')) {
    throw new RpcError(
      RpcCodes.INVALID_PARAMS,
      'tools/list: params.tags must be an array of strings.',
    );
  }
  return tags.length > 0 ? new Set(tags as string[]) : null;
}

export function toolMethods(
  options: FeatureOptions,
  shared: Shared,
): { listTools: Handler; callTool: Handler } {
  const { registry, signer } = options;
  const pageSize = options.pageSize ?? 100;
  const suffix = options.toolDescriptionSuffix?.trim();

  const wireTool = (spec: ToolSpec): Record<string, unknown> => {
    const tool: Record<string, unknown> = {
      name: spec.name,
      description: suffix ? `${spec.description} ${suffix}` : spec.description,
      inputSchema: spec.inputSchema,
    };
    if (spec.title !== undefined) tool['title'] = spec.title;
    if (spec.outputSchema !== undefined) tool['outputSchema'] = spec.outputSchema;
    if (spec.annotations !== undefined) tool['annotations'] = spec.annotations;
    if (spec.tags !== undefined && spec.tags.length > 0) tool['_meta'] = { tags: spec.tags };
    if (spec.taskSupport !== undefined && options.tasks)
      tool['execution'] = { taskSupport: spec.taskSupport };
    return tool;
  };
  /**
   * inputBeforeTask: runs the tool up to its first question. Unanswered, the input_required
   * result is the answer; answered, the tool is stopped there and null says "create the task"
   * (its run starts again from the top, with the answers this request brought).
   */
  const askBeforeTask = async (
    params: Record<string, unknown>,
    scope: RequestScope,
    name: string,
  ): Promise<Record<string, unknown> | null> => {
    const answered = new BeforeTask();
    const outcome = await invokeTool({
      registry,
      name,
      args: params['arguments'],
      principal: scope.channel.principal,
      run: (call) =>
        shared.withContext(
          params,
          scope,
          { method: 'tools/call', name, args: params['arguments'] ?? {} },
          (ctx) =>
            call({
              ...ctx,
              requestInput: async (requests) => {
                await ctx.requestInput(requests);
                throw answered;
              },
            }),
        ),
    }).catch((error: unknown) => {
      if (error === answered) return null;
      throw error;
    });
    return outcome?.kind === 'input-required' ? outcome.inputRequired : null;
  };

  /** A host that declares MCP Apps also gets each tool's view link (mcp/apps.ts). */
  const wireFor =
    (apps: boolean) =>
    (spec: ToolSpec): Record<string, unknown> =>
      apps ? withViewLink(wireTool(spec), spec) : wireTool(spec);
  /**
   * Pages of the whole (ungated) tools list in wire form, built and serialized once: the
   * registry hands out the same list until it changes, so the list is the cache key.
   */
  const pages = new WeakMap<readonly ToolSpec[], Map<string, Record<string, unknown>[]>>();
  const toolPage = (
    list: readonly ToolSpec[],
    cursor: unknown,
    items: readonly ToolSpec[],
    apps: boolean,
  ): Record<string, unknown>[] => {
    if (list !== registry.tools()) return items.map(wireFor(apps)); // filtered for this caller
    let byCursor = pages.get(list);
    if (!byCursor) pages.set(list, (byCursor = new Map()));
    const key = `${apps ? 'apps:' : ''}${typeof cursor === 'string' ? cursor : ''}`;
    let page = byCursor.get(key);
    if (!page) byCursor.set(key, (page = prebuild(items.map(wireFor(apps)))));
    return page;
  };

  return {
    async listTools(params, scope) {
      const shown = shared.visible(registry.tools(), scope.channel.principal);
      const wanted = tagFilter(params['tags']);
      // A filtered list is a new array, so toolPage builds it rather than using the cache.
      const items = wanted
        ? shown.items.filter((t) => t.tags?.some((x) => wanted.has(x)))
        : shown.items;
      const page = paginate(signer, 'tools', items, params['cursor'], pageSize);
      const apps = appsFor(options.apps, scope.clientCapabilities);
      const tools = toolPage(items, params['cursor'], page.items, apps);
      // With the view links the list depends on the caller's capabilities: not for a shared cache.
      const cacheScope = apps ? 'private' : shown.cacheScope;
      return { tools, ...page.next, ...shared.cacheHints(scope, cacheScope) };
    },

    async callTool(params, scope) {
      const name = requireString(params, 'name');
      const principal = scope.channel.principal;
      const args = params['arguments'] ?? {};
      const note = scope.note;
      if (options.tasks) {
        const spec = registry.tool(name)?.spec;
        const task = taskRequest(spec, params, scope);
        if (task && spec?.inputBeforeTask && scope.era === 'modern') {
          const asked = await askBeforeTask(params, scope, name);
          if (asked) return asked;
        }
        if (task) return startToolTask(options, shared, name, params, scope, task.ttlMs);
      }
      const outcome = await invokeTool({
        registry,
        name,
        args: params['arguments'],
        principal,
        run: (call) =>
          shared.withContext(params, scope, { method: 'tools/call', name, args }, call),
        ...(options.logger ? { log: options.logger } : {}),
        // The invocation step records the call (the chat agent's are recorded the same way);
        // the dispatcher records only the tools/call requests that never reached it.
        ...(options.onToolCall && note
          ? {
              record: {
                sink: (record: ExchangeRecord) => {
                  note.recorded = true;
                  // The era, as the dispatcher's records carry it (the metrics count by it).
                  options.onToolCall!({ ...record, era: scope.era });
                },
                database: () => note.database,
              },
            }
          : {}),
      });
      // MCP's wire form of the outcome.
      switch (outcome.kind) {
        case 'refused':
          throw outcome.reason === 'unknown'
            ? unknownError('tool', name)
            : deniedError('tool', name, principal, outcome.spec?.requiredRoles);
        case 'input-required':
          return outcome.inputRequired;
        case 'ok':
          return { ...outcome.result };
        case 'tool-error':
          return { ...toolErrorResult(outcome.error, outcome.spec.outputSchema !== undefined) };
        case 'internal':
          return { ...toolError(outcome.message, ErrorCodes.INTERNAL) };
      }
    },
  };
}

/** Thrown at an inputBeforeTask tool's first answered question: the task is created next. */
class BeforeTask {}
