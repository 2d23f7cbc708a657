// Each row of mcp.handler as a tool, resource, resource template or prompt spec whose calls go
// through invocation.ts. Rows that require auth are hidden from, and refused to, anonymous callers.
import type { Principal } from '../../core/principal.js';
import type {
  PromptArgumentSpec,
  PromptSpec,
  ResourceSpec,
  ResourceTemplateSpec,
  ToolSpec,
} from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { compileUriTemplate } from '../uri-template.js';
import { compileOutputCheck, toPromptResult, toResourceResult, toToolResult } from './convert.js';
import { isSignedIn, run } from './invocation.js';
import type { HandlerRow, RegistryHandlerOptions } from './types.js';

/** Sets allows on a spec of a requiresAuth row (hidden from anonymous callers). */
function gate<T extends { allows?(principal: Principal): boolean }>(row: HandlerRow, spec: T): T {
  if (row.requires_auth) spec.allows = isSignedIn;
  return spec;
}

/** Throws when the row's outputSchema does not compile (the loader skips such a row). */
export function toolSpec(db: Database, options: RegistryHandlerOptions, row: HandlerRow): ToolSpec {
  const checkOutput = row.output_schema
    ? compileOutputCheck(row.name, row.output_schema)
    : undefined;
  const spec: ToolSpec = {
    name: row.name,
    description: row.description ?? `SQL tool ${row.name}`,
    inputSchema: row.input_schema ?? { type: 'object' },
    call: (args, ctx) =>
      run(
        db,
        options,
        { method: 'tools/call', logName: row.name, row, args, uri: null },
        ctx,
        (response) => toToolResult(row.name, response, checkOutput),
        (result) => result.isError === true,
      ),
  };
  if (row.output_schema) spec.outputSchema = row.output_schema;
  if (row.tags.length > 0) spec.tags = row.tags;
  return gate(row, spec);
}

export function templateSpec(
  db: Database,
  options: RegistryHandlerOptions,
  row: HandlerRow,
): ResourceTemplateSpec {
  const uriTemplate = row.uri_template as string;
  const spec: ResourceTemplateSpec = {
    uriTemplate,
    name: row.name,
    match: compileUriTemplate(uriTemplate),
    read: (uri, vars, ctx) =>
      run(
        db,
        options,
        { method: 'resources/read', logName: uri, row, args: vars, uri },
        ctx,
        (response) => toResourceResult(row.name, uri, response),
      ),
  };
  if (row.description) spec.description = row.description;
  if (row.mime_type) spec.mimeType = row.mime_type;
  return gate(row, spec);
}

export function resourceFrom(
  db: Database,
  options: RegistryHandlerOptions,
  row: HandlerRow,
  into: ResourceSpec[],
): void {
  const uri = row.uri_template as string;
  const spec: ResourceSpec = {
    uri,
    name: row.name,
    read: (ctx) =>
      run(
        db,
        options,
        { method: 'resources/read', logName: uri, row, args: {}, uri },
        ctx,
        (response) => toResourceResult(row.name, uri, response),
      ),
  };
  if (row.description) spec.description = row.description;
  if (row.mime_type) spec.mimeType = row.mime_type;
  into.push(gate(row, spec));
}

export function promptSpec(
  db: Database,
  options: RegistryHandlerOptions,
  row: HandlerRow,
): PromptSpec {
  const spec: PromptSpec = {
    name: row.name,
    get: (args, ctx) =>
      run(
        db,
        options,
        { method: 'prompts/get', logName: row.name, row, args, uri: null },
        ctx,
        (response) => toPromptResult(row.name, response),
      ),
  };
  if (row.description) spec.description = row.description;
  if (row.arguments) {
    spec.arguments = row.arguments.map((a) => {
      const arg: PromptArgumentSpec = { name: a.name };
      if (typeof a.description === 'string') arg.description = a.description;
      if (typeof a.required === 'boolean') arg.required = a.required;
      return arg;
    });
  }
  return gate(row, spec);
}
