// resources/list, resources/templates/list, resources/read and (legacy) subscriptions.
import type { ResourceSpec } from '../../core/specs.js';
import { appsFor, appView, readAppView, type AppView } from '../apps.js';
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
  type Listed = Omit<ResourceSpec, 'read'> & { _meta?: AppView['_meta'] };
  // The registry's list with the MCP Apps views after it, made once per registry snapshot (the
  // snapshot is the visibility cache's key too).
  const withViews = new WeakMap<readonly ResourceSpec[], readonly Listed[]>();
  const listed = (views: readonly AppView[] | null): readonly Listed[] => {
    const own = registry.resources();
    if (!views) return own;
    let all = withViews.get(own);
    if (!all) withViews.set(own, (all = [...own, ...views]));
    return all;
  };

  return {
    async listResources(params, scope) {
      const apps = appsFor(options.apps, scope.clientCapabilities);
      const page = shared.listPage(
        'resources',
        'resources',
        listed(apps ? options.apps!.views : null),
        { required: ['uri', 'name'], optional: ['title', 'description', 'mimeType', '_meta'] },
        params,
        scope,
      );
      // With the views the list depends on the caller's capabilities: not for a shared cache.
      if (apps && page['cacheScope'] !== undefined) page['cacheScope'] = 'private';
      return page;
    },

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
      const notFound = resourceNotFound(scope.era, uri, `Resource not found: ${uri}`);
      const view = appView(options.apps, uri);
      if (view) {
        const read = await readAppView(options.apps!, view);
        if (!read) throw notFound;
        return { ...read, ...shared.cacheHints(scope, 'public') };
      }
      const direct = registry.resource(uri);
      const matched = direct ? undefined : registry.matchTemplate(uri);
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
