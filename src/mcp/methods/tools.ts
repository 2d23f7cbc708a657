// tools/list and tools/call. An unknown or hidden tool is a protocol error raised before the
// tool runs; everything that goes wrong inside it becomes an isError result (mcp/errors.ts).
import type { ToolResult } from '../../core/content.js';
import { isExpectedFailure, logWithReference } from '../../core/error-table.js';
import { ErrorCodes } from '../../core/errors.js';
import type { ToolSpec } from '../../core/specs.js';
import { errorCodeOf, toolError, toolErrorResult } from '../errors.js';
import { isObject, RpcCodes, RpcError } from '../jsonrpc.js';
import { paginate } from '../pagination.js';
import { prebuild } from '../serialize.js';
import { requireString, usable, type FeatureOptions, type Handler, type Shared } from './shared.js';

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

/**
 * Why a successful answer does not match the tool's outputSchema (MCP: a tool that declares
 * one answers conforming structuredContent), or null when it does or was a failure.
 */
function outputIssues(
  check: ((value: unknown) => string[] | null) | null,
  result: ToolResult,
): string[] | null {
  if (check === null || result.isError === true) return null;
  if (result.structuredContent === undefined) return ['structuredContent is missing'];
  try {
    return check(result.structuredContent);
  } catch (error) {
    // An outputSchema that does not compile: no client can validate the answer either.
    return [(error as Error).message];
  }
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
    return tool;
  };
  /**
   * Pages of the whole (ungated) tools list in wire form, built and serialized once: the
   * registry hands out the same list until it changes, so the list is the cache key.
   */
  const pages = new WeakMap<readonly ToolSpec[], Map<string, Record<string, unknown>[]>>();
  const toolPage = (
    list: readonly ToolSpec[],
    cursor: unknown,
    items: readonly ToolSpec[],
  ): Record<string, unknown>[] => {
    if (list !== registry.tools()) return items.map(wireTool); // filtered for this caller
    let byCursor = pages.get(list);
    if (!byCursor) pages.set(list, (byCursor = new Map()));
    const key = typeof cursor === 'string' ? cursor : '';
    let page = byCursor.get(key);
    if (!page) byCursor.set(key, (page = prebuild(items.map(wireTool))));
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
      const tools = toolPage(items, params['cursor'], page.items);
      return { tools, ...page.next, ...shared.cacheHints(scope, shown.cacheScope) };
    },

    async callTool(params, scope) {
      const name = requireString(params, 'name');
      const entry = registry.tool(name);
      usable('tool', name, entry?.spec, scope.channel.principal);
      const args = params['arguments'] ?? {};
      const invalid = (why: string) => {
        // Recorded (and the chat agent's calls too) as PGMCP301, like a tool's own input error.
        if (scope.note) scope.note.errorCode = ErrorCodes.TOOL_INPUT_INVALID;
        return {
          ...toolError(`Invalid arguments for ${name}: ${why}.`, ErrorCodes.TOOL_INPUT_INVALID),
        };
      };
      if (!isObject(args)) return invalid('arguments must be an object');
      const issues = entry!.validate(args);
      if (issues) return invalid(issues.join('; '));
      try {
        const outcome = await shared.withContext(
          params,
          scope,
          { method: 'tools/call', name, args },
          (ctx) => entry!.spec.call(args, ctx),
        );
        if ('inputRequired' in outcome) return outcome.inputRequired;
        const issues = outputIssues(entry!.checkOutput, outcome.value);
        if (!issues) return { ...outcome.value };
        // A bug of the tool: the answer would make a validating client throw, so it is not
        // sent; the caller gets a tool error with the reference the log holds.
        const ref = logWithReference(
          options.logger,
          { tool: name, issues: issues.slice(0, 5) },
          'tool answer does not match its outputSchema',
        );
        if (scope.note) scope.note.errorCode = ErrorCodes.INTERNAL;
        return {
          ...toolError(
            `Internal error: the answer of ${name} does not match its outputSchema, so it was not sent (reference ${ref}). This is a bug; the server log has the details.`,
            ErrorCodes.INTERNAL,
          ),
        };
      } catch (error) {
        if (!isExpectedFailure(error)) throw error;
        if (scope.note) scope.note.errorCode = errorCodeOf(error);
        return { ...toolErrorResult(error, entry!.spec.outputSchema !== undefined) };
      }
    },
  };
}
