// resources/list, resources/templates/list, resources/read and (legacy) subscriptions.
import { paginate } from '../pagination.js';
import { resourceNotFound } from '../errors.js';
import {
  canUse,
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
  const { registry, signer } = options;
  const pageSize = options.pageSize ?? 100;

  return {
    async listResources(params, scope) {
      const shown = shared.visible(registry.resources(), scope.channel.principal);
      const page = paginate(signer, 'resources', shown.items, params['cursor'], pageSize);
      const resources = page.items.map((r) => {
        const item: Record<string, unknown> = { uri: r.uri, name: r.name };
        if (r.title !== undefined) item['title'] = r.title;
        if (r.description !== undefined) item['description'] = r.description;
        if (r.mimeType !== undefined) item['mimeType'] = r.mimeType;
        return item;
      });
      return { resources, ...page.next, ...shared.cacheHints(scope, shown.cacheScope) };
    },

    async listTemplates(params, scope) {
      const shown = shared.visible(registry.templates(), scope.channel.principal);
      const page = paginate(signer, 'templates', shown.items, params['cursor'], pageSize);
      const resourceTemplates = page.items.map((t) => {
        const item: Record<string, unknown> = { uriTemplate: t.uriTemplate, name: t.name };
        if (t.title !== undefined) item['title'] = t.title;
        if (t.description !== undefined) item['description'] = t.description;
        if (t.mimeType !== undefined) item['mimeType'] = t.mimeType;
        return item;
      });
      return { resourceTemplates, ...page.next, ...shared.cacheHints(scope, shown.cacheScope) };
    },

    async readResource(params, scope) {
      const uri = requireString(params, 'uri');
      const direct = registry.resource(uri);
      const matched = direct ? undefined : registry.matchTemplate(uri);
      const notFound = resourceNotFound(scope.era, uri, `Resource not found: ${uri}`);
      if (!direct && !matched) throw notFound;
      const principal = scope.channel.principal;
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
