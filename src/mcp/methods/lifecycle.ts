// initialize (legacy), server/discover (modern) and logging/setLevel.
import { TASKS_EXTENSION } from '../tasks/wire.js';
import { LOG_LEVELS, type LogLevel } from '../../core/specs.js';
import { APPS_EXTENSION, appsFor } from '../apps.js';
import { isObject, RpcCodes, RpcError } from '../jsonrpc.js';
import { ALL_VERSIONS, negotiateLegacy } from '../versions.js';
import type { FeatureOptions, Handler, Shared } from './shared.js';

export const CAPABILITIES = Object.freeze({
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
});

/** With tasks: 2025-11-25's experimental `tasks` capability (tools/call, list, cancel). */
export const TASK_CAPABILITIES = Object.freeze({
  ...CAPABILITIES,
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
});

/**
 * What the server declares: 2025-11-25's `tasks` slot in the session era, the tasks extension
 * in 2026-07-28 (the `tasks` slot is 2025-11-25's only), and MCP Apps to a host that declared
 * it (when the views are built); others get what they always got.
 */
function capabilitiesFor(
  options: FeatureOptions,
  client: Record<string, unknown>,
  modern: boolean,
): Record<string, unknown> {
  const tasks = options.tasks !== undefined;
  const base = tasks && !modern ? TASK_CAPABILITIES : CAPABILITIES;
  const extensions: Record<string, unknown> = {};
  if (tasks && modern) extensions[TASKS_EXTENSION] = {};
  // Apps only when the views are built (mcp/apps.ts findAppViews) and the host declared them.
  if (appsFor(options.apps, client)) extensions[APPS_EXTENSION] = {};
  return Object.keys(extensions).length > 0 ? { ...base, extensions } : base;
}

export function lifecycleMethods(
  options: FeatureOptions,
  shared: Shared,
): { initialize: Handler; discover: Handler; setLevel: Handler } {
  return {
    async initialize(params, scope) {
      const session = scope.channel.session;
      if (!session)
        throw new RpcError(
          RpcCodes.INVALID_REQUEST,
          'initialize needs a connection that keeps a session.',
        );
      const version = negotiateLegacy(params['protocolVersion']);
      session.protocolVersion = version;
      session.clientCapabilities = isObject(params['capabilities']) ? params['capabilities'] : {};
      session.clientInfo = isObject(params['clientInfo']) ? params['clientInfo'] : null;
      const result: Record<string, unknown> = {
        protocolVersion: version,
        capabilities: capabilitiesFor(options, session.clientCapabilities, false),
        serverInfo: { ...options.serverInfo },
      };
      if (options.instructions) result['instructions'] = options.instructions;
      return result;
    },

    async discover(_params, scope) {
      const result: Record<string, unknown> = {
        supportedVersions: [...ALL_VERSIONS],
        capabilities: capabilitiesFor(options, scope.clientCapabilities, true),
        serverInfo: { ...options.serverInfo },
        ...shared.cacheHints(
          scope,
          appsFor(options.apps, scope.clientCapabilities) ? 'private' : 'public',
        ),
      };
      if (options.instructions) result['instructions'] = options.instructions;
      return result;
    },

    async setLevel(params, scope) {
      const level = params['level'];
      if (!LOG_LEVELS.includes(level as LogLevel)) {
        throw new RpcError(
          RpcCodes.INVALID_PARAMS,
          `Unknown log level ${JSON.stringify(level)}; use one of ${LOG_LEVELS.join(', ')}.`,
        );
      }
      if (scope.channel.session) scope.channel.session.logLevel = level as LogLevel;
      return {};
    },
  };
}
