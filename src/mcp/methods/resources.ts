// resources/list, resources/templates/list, resources/read and (legacy) subscriptions.
import { resourceNotFound } from '../errors.js';
import {
  canUse,
  inScope,
  deniedError,
  requireString,
  type FeatureOptions,
  type Handler,
  type Shared,
} from './shared.js';

export function resourceMethods(
  options: FeatureOptions,
  shared: Shared,
): {
  listResources: Handler;
  listTemplates: Handler;
  readResource: Handler;
  subscribe: Handler;
  unsubscribe: Handler;
} {
  const { registry } = options;

  return {
    listResources: async (params, scope) =>
      shared.listPage(
        'resources',
        'resources',
        registry.resources(),
        { required: ['uri', 'name'], optional: ['title', 'description', 'mimeType'] },
        params,
        scope,
      ),

    listTemplates: async (params, scope) =>
      shared.listPage(
        'templates',
        'resourceTemplates',
        registry.templates(),
        { required: ['uriTemplate', 'name'], optional: ['title', 'description', 'mimeType'] },
        params,
        scope,
      ),

    async readResource(params, scope) {
      const uri = requireString(params, 'uri');
      const direct = registry.resource(uri);
      const matched = direct ? undefined : registry.matchTemplate(uri);
      const notFound = resourceNotFound(scope.era, uri, `Resource not found: ${uri}`);
      if (!direct && !matched) throw notFound;
      const principal = scope.channel.principal;
      if (!inScope(direct ?? matched!.template, principal)) throw notFound;
      if (!canUse(direct ?? matched!.template, principal)) {
        throw deniedError('resource', uri, principal);
      }
      // A template that matched the URI's shape may still find nothing there (mcp/errors.ts).
      const outcome = await shared.withContext(
        params,
        scope,
        { method: 'resources/read', name: uri, args: {}, resourceUri: uri },
        (ctx) => (direct ? direct.read(ctx) : matched!.template.read(uri, matched!.vars, ctx)),
      );
      if ('inputRequired' in outcome) return outcome.inputRequired;
      return { ...outcome.value, ...shared.cacheHints(scope, 'private') };
    },

    async subscribe(params, scope) {
      scope.channel.session?.subscriptions.add(requireString(params, 'uri'));
      return {};
    },

    async unsubscribe(params, scope) {
      scope.channel.session?.subscriptions.delete(requireString(params, 'uri'));
      return {};
    },
  };
}
