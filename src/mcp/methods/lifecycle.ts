// initialize (legacy), server/discover (modern) and logging/setLevel.
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

export function lifecycleMethods(
  options: FeatureOptions,
  shared: Shared,
): { initialize: Handler; discover: Handler; setLevel: Handler } {
  /** A host that declared MCP Apps is told the server has it too (when the views are built). */
  const capabilitiesFor = (client: Record<string, unknown>): Record<string, unknown> =>
    appsFor(options.apps, client)
      ? { ...CAPABILITIES, extensions: { [APPS_EXTENSION]: {} } }
      : CAPABILITIES;

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
        capabilities: capabilitiesFor(session.clientCapabilities),
        serverInfo: { ...options.serverInfo },
      };
      if (options.instructions) result['instructions'] = options.instructions;
      return result;
    },

    async discover(_params, scope) {
      const result: Record<string, unknown> = {
        supportedVersions: [...ALL_VERSIONS],
        capabilities: capabilitiesFor(scope.clientCapabilities),
        serverInfo: { ...options.serverInfo },
        ...shared.cacheHints(scope, 'public'),
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
