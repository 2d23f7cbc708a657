// read_resource: the pg:// resources for clients that only call tools. Reads go through the
// same registry (or the reader the protocol layer hands in), so a resource answers the same
// whichever way it is asked for.
import type { ContentBlock, ResourceReadResult } from '../../core/content.js';
import type { CallContext, ToolSpec } from '../../core/specs.js';
import type { Registry } from '../registry.js';
import { toTsv } from '../tsv.js';
import { invalidInput, readOnlyAnnotations, resourceNotFound } from '../common/support.js';

export type ResourceReader = (uri: string, ctx: CallContext) => Promise<ResourceReadResult>;

/** Reads a URI from the registry: a resource by exact URI, else the first matching template. */
export function registryReader(registry: Registry): ResourceReader {
  return async (uri, ctx) => {
    const direct = registry.resource(uri);
    if (direct) return direct.read(ctx);
    const matched = registry.matchTemplate(uri);
    if (matched) return matched.template.read(uri, matched.vars, ctx);
    throw resourceNotFound(
      uri,
      `Resource not found: ${uri}. Call read_resource with list=true to see the resources and templates.`,
    );
  };
}

const DESCRIPTION = [
  'Read a pgmcp resource by URI, or list them with list=true: server information (pg://system_info), settings (pg://settings), activity and statistics (pg://stat/activity, pg://stat/replication, pg://stat/database), and templates for one schema (pg://schema/{schema}) or one table (pg://table/{schema}/{table}).',
  'Use it when your client cannot read MCP resources itself. For columns of many tables at once, get_schema_info is shorter.',
  'Example: {"uri": "pg://table/public/orders"} or {"list": true}.',
].join(' ');

export function createReadResourceTool(registry: Registry, read: ResourceReader): ToolSpec {
  return {
    name: 'read_resource',
    title: 'Read a resource',
    description: DESCRIPTION,
    inputSchema: {
      type: 'object',
      properties: {
        uri: { type: 'string', minLength: 1, description: 'Resource URI, e.g. pg://system_info.' },
        list: {
          type: 'boolean',
          default: false,
          description: 'List the resources and resource templates instead of reading one.',
        },
      },
      additionalProperties: false,
    },
    annotations: readOnlyAnnotations('Read a resource'),
    async call(args, ctx) {
      const uri = args['uri'] as string | undefined;
      if (args['list'] === true) {
        const resources = registry.resources().map((r) => ({
          uri: r.uri,
          name: r.name,
          mimeType: r.mimeType ?? null,
          description: r.description ?? null,
        }));
        const templates = registry.templates().map((t) => ({
          uriTemplate: t.uriTemplate,
          name: t.name,
          mimeType: t.mimeType ?? null,
          description: t.description ?? null,
        }));
        const text = [
          'Resources:',
          toTsv(
            ['uri', 'name', 'description'],
            resources.map((r) => [r.uri, r.name, r.description]),
          ),
          '',
          'Resource templates (fill in the {variables}):',
          toTsv(
            ['uri_template', 'name', 'description'],
            templates.map((t) => [t.uriTemplate, t.name, t.description]),
          ),
        ].join('\n');
        return { content: [{ type: 'text', text }], structuredContent: { resources, templates } };
      }
      if (uri === undefined) {
        throw invalidInput('Pass uri (e.g. "pg://system_info") or list=true.');
      }
      const result = await read(uri, ctx);
      const content: ContentBlock[] = result.contents.map((c) =>
        'text' in c ? { type: 'text', text: c.text } : { type: 'resource', resource: c },
      );
      return { content };
    },
  };
}
