// GET /api/tools, /api/resources, /api/prompts and /api/tables: what the caller may use, as thin
// views of the registry (the same entries MCP lists), for clients that do not speak MCP — the
// terminal client's /list and its tab completion of table names. Entries the caller may not
// use are left out.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ANONYMOUS, type Principal } from '../core/principal.js';
import type { Registry } from '../tools/registry.js';
import { TABLE_TEMPLATE } from '../tools/resources/catalog-resources.js';

interface Gated {
  allows?(principal: Principal): boolean;
  inScope?(principal: Principal): boolean;
}

const usable = (spec: Gated, principal: Principal): boolean =>
  (spec.inScope === undefined || spec.inScope(principal)) &&
  (spec.allows === undefined || spec.allows(principal));

const principalOf = (request: FastifyRequest): Principal => request.principal ?? ANONYMOUS;

const TEXT = { type: 'string' } as const;

const list = (key: string, item: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  ({
    response: {
      200: {
        type: 'object',
        required: [key, ...Object.keys(extra)],
        properties: { [key]: { type: 'array', items: item }, ...extra },
      },
    },
  }) as const;

const TOOL_VIEW = {
  type: 'object',
  required: ['name', 'description'],
  properties: { name: TEXT, title: TEXT, description: TEXT },
};
const RESOURCE_VIEW = {
  type: 'object',
  required: ['uri', 'name'],
  properties: { uri: TEXT, name: TEXT, title: TEXT, description: TEXT, mimeType: TEXT },
};
const TEMPLATE_VIEW = {
  type: 'object',
  required: ['uriTemplate', 'name'],
  properties: { uriTemplate: TEXT, name: TEXT, title: TEXT, description: TEXT, mimeType: TEXT },
};
const PROMPT_VIEW = {
  type: 'object',
  required: ['name', 'arguments'],
  properties: {
    name: TEXT,
    title: TEXT,
    description: TEXT,
    arguments: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name'],
        properties: { name: TEXT, description: TEXT, required: { type: 'boolean' } },
      },
    },
  },
};

export function registerCatalogRoutes(scope: FastifyInstance, registry: Registry): void {
  scope.get(
    '/tools',
    { schema: { summary: 'The tools the caller may call.', ...list('tools', TOOL_VIEW) } },
    async (request) => {
      const principal = principalOf(request);
      return {
        tools: registry
          .tools()
          .filter((t) => usable(t, principal))
          .map(({ name, title, description }) => ({ name, title, description })),
      };
    },
  );

  scope.get(
    '/resources',
    {
      schema: {
        summary: 'The resources and resource templates the caller may read.',
        ...list('resources', RESOURCE_VIEW, { templates: { type: 'array', items: TEMPLATE_VIEW } }),
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return {
        resources: registry
          .resources()
          .filter((r) => usable(r, principal))
          .map(({ uri, name, title, description, mimeType }) => ({
            uri,
            name,
            title,
            description,
            mimeType,
          })),
        templates: registry
          .templates()
          .filter((t) => usable(t, principal))
          .map(({ uriTemplate, name, title, description, mimeType }) => ({
            uriTemplate,
            name,
            title,
            description,
            mimeType,
          })),
      };
    },
  );

  scope.get(
    '/prompts',
    { schema: { summary: 'The prompts the caller may get.', ...list('prompts', PROMPT_VIEW) } },
    async (request) => {
      const principal = principalOf(request);
      return {
        prompts: registry
          .prompts()
          .filter((p) => usable(p, principal))
          .map(({ name, title, description, arguments: args }) => ({
            name,
            title,
            description,
            arguments: (args ?? []).map((a) => ({
              name: a.name,
              description: a.description,
              required: a.required,
            })),
          })),
      };
    },
  );

  // Table names for completion, through the pg://table template's own completion (the catalog
  // the caller's reads go through); none when that template is not there or not theirs.
  scope.get(
    '/tables',
    {
      schema: {
        summary: 'Names of the tables the caller can see, for completion.',
        response: {
          200: {
            type: 'object',
            required: ['tables'],
            properties: { tables: { type: 'array', items: TEXT } },
          },
        },
      },
    },
    async (request) => {
      const template = registry.templates().find((t) => t.uriTemplate === TABLE_TEMPLATE);
      if (!template?.complete || !usable(template, principalOf(request))) return { tables: [] };
      const { values } = await template.complete('table', '', {});
      return { tables: values };
    },
  );
}
