// The shared registry's view of several databases: one entry per built-in tool, resource,
// template and prompt, each of which picks its database per call (its `database` argument, the
// session's selection, the caller's bound database, the default) and hands the call to the
// same built-in bound to that database. query_database also understands the pgEdge-compatible inline
// forms, but only for configured databases. Two opt-in tools let the model list and select
// databases by name; hosts, users and passwords never reach it.
import type { ToolResult } from '../core/content.js';
import { AppError, ErrorCodes, isAppError } from '../core/errors.js';
import type { JsonSchema } from '../core/json-schema.js';
import type {
  CallContext,
  PromptSpec,
  ResourceSpec,
  ResourceTemplateSpec,
  ToolSpec,
} from '../core/specs.js';
import {
  unknownDatabaseReference,
  type DatabaseDirectory,
  type DatabaseTarget,
} from './databases.js';
import { roleGate } from './gate.js';
import type { Registry } from './registry.js';

export interface DatabaseRoutingOptions {
  /** Register list_database_connections and select_database_connection. */
  databaseTools: boolean;
  /** tools.<name>.roles, applied to the routed built-ins as registerBuiltins does. */
  toolRoles?: Readonly<Record<string, readonly string[]>>;
}

const ADVICE = {
  call: 'Try again later, or use another database (the database argument).',
  read: "Try again later, or select another database for the session (resources and prompts take no database argument: they read the session's selected database).",
} as const;

const pick = (
  directory: DatabaseDirectory,
  ctx: CallContext,
  requested?: string,
): DatabaseTarget => {
  const target = directory.resolve(ctx.principal, requested, ctx.database?.selected ?? null);
  ctx.database?.used(target.name);
  return target;
};

/**
 * Runs `work`; a database that cannot be reached is named in the error. `read`: a resource
 * or prompt, which takes no database argument, so the advice is to select another database.
 */
export async function onTarget<T>(
  target: DatabaseTarget,
  work: () => Promise<T>,
  kind: 'call' | 'read' = 'call',
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isAppError(error) && error.code === ErrorCodes.DB_UNAVAILABLE) {
      const reason = error.details?.['reason'];
      const why = typeof reason === 'string' ? ` (${reason})` : '';
      throw new AppError(
        ErrorCodes.DB_UNAVAILABLE,
        `Database unavailable: ${target.name} cannot be reached right now${why}. ${ADVICE[kind]}`,
        {
          category: 'unavailable',
          details: { ...error.details, database: target.name },
          cause: error,
        },
      );
    }
    throw error;
  }
}

/**
 * The schema with an optional `database` argument. Its description names no database: the
 * list is the same for every caller, and a caller limited to some databases must not learn
 * the others' names from it (list_database_connections shows a caller its own).
 */
export function withDatabaseArgument(schema: JsonSchema): JsonSchema {
  return withProperty(schema, 'database', {
    type: 'string',
    minLength: 1,
    description:
      "Which configured database to use, by name; default: the session's selected database.",
  });
}

/** `schema` with one more property (an object schema's other keys kept as they are). */
function withProperty(schema: JsonSchema, name: string, property: JsonSchema): JsonSchema {
  const properties = (schema['properties'] as Record<string, unknown> | undefined) ?? {};
  return { ...schema, properties: { ...properties, [name]: property } };
}

const text = (value: string): ToolResult => ({ content: [{ type: 'text', text: value }] });

/**
 * query_database's output schema with `database`: the answer to "set default database to …",
 * which runs no statement, still matches the schema the tool declares (a client that validates
 * refuses an answer without structuredContent).
 */
function withSelectedDatabase(schema: JsonSchema | undefined): JsonSchema | undefined {
  if (schema === undefined) return undefined;
  return withProperty(schema, 'database', {
    type: 'string',
    description:
      'Present when the query was "set default database to …": the database this session now uses by default (no statement ran).',
  });
}

// The pgEdge-compatible inline forms: "set default database to <url or name>" and "<question or SQL> at <url>".
const SET_DEFAULT = /^\s*set\s+default\s+database\s+to\s+(\S+?)\s*;?\s*$/i;
const AT_URL = /^([\s\S]*?)\s+at\s+(postgres(?:ql)?:\/\/\S+?)\s*;?\s*$/i;

export function registerDatabaseRouting(
  registry: Registry,
  directory: DatabaseDirectory,
  options: DatabaseRoutingOptions,
): void {
  const model = directory.get(directory.defaultName)!.registry;
  const gate = (name: string): Pick<ToolSpec, 'allows' | 'requiredRoles'> =>
    roleGate(options.toolRoles?.[name] ?? []);

  /** Makes the database the session's default; returns its name. */
  const selectByReference = (reference: string, ctx: CallContext): string => {
    const target = directory.match(reference);
    if (!target) throw unknownDatabaseReference(reference);
    directory.resolve(ctx.principal, target.name, null);
    if (!ctx.database) throw new Error('database selection needs a session');
    ctx.database.select(target.name);
    ctx.database.used(target.name);
    return target.name;
  };
  const selected = (name: string): string =>
    `Database: ${name}\n\nThis session now uses ${name} by default.`;

  for (const spec of model.tools()) {
    const name = spec.name;
    registry.addTool({
      ...spec,
      ...gate(name),
      inputSchema: withDatabaseArgument(spec.inputSchema),
      ...(name === 'query_database' && spec.outputSchema !== undefined
        ? { outputSchema: withSelectedDatabase(spec.outputSchema)! }
        : {}),
      async call(args, ctx) {
        const { database, ...rest } = args;
        let requested = typeof database === 'string' ? database : undefined;
        if (name === 'query_database' && typeof rest['query'] === 'string') {
          const query = rest['query'];
          const setDefault = SET_DEFAULT.exec(query);
          if (setDefault) {
            // The answer of a statement without rows, so it matches query_database's schema.
            const chosen = selectByReference(setDefault[1]!, ctx);
            return {
              content: [{ type: 'text', text: selected(chosen) }],
              structuredContent: {
                columns: [],
                rows: [],
                rowCount: 0,
                truncated: false,
                nextOffset: null,
                command: null,
                database: chosen,
              },
            };
          }
          const at = AT_URL.exec(query);
          if (at) {
            const target = directory.match(at[2]!);
            if (!target) throw unknownDatabaseReference(at[2]!);
            requested = target.name;
            rest['query'] = at[1]!;
          }
        }
        const target = pick(directory, ctx, requested);
        const tool = target.registry.tool(name)!;
        return onTarget(target, () => tool.spec.call(rest, ctx));
      },
    });
  }
  for (const spec of model.resources()) {
    const routed: ResourceSpec = {
      ...spec,
      read(ctx) {
        const target = pick(directory, ctx);
        return onTarget(target, () => target.registry.resource(spec.uri)!.read(ctx), 'read');
      },
    };
    registry.addResource(routed);
  }
  for (const spec of model.templates()) {
    const routed: ResourceTemplateSpec = {
      ...spec,
      read(uri, vars, ctx) {
        const target = pick(directory, ctx);
        const own = target.registry.templates().find((t) => t.uriTemplate === spec.uriTemplate)!;
        return onTarget(target, () => own.read(uri, vars, ctx), 'read');
      },
    };
    registry.addTemplate(routed);
  }
  for (const spec of model.prompts()) {
    const routed: PromptSpec = {
      ...spec,
      get(args, ctx) {
        const target = pick(directory, ctx);
        return onTarget(target, () => target.registry.prompt(spec.name)!.get(args, ctx), 'read');
      },
    };
    registry.addPrompt(routed);
  }

  if (!options.databaseTools) return;
  registry.addTool({
    name: 'list_database_connections',
    title: 'List databases',
    description:
      'List the databases this session may use, by name, and which one its calls use by default. Pass a name as the database argument of another tool, or to select_database_connection.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { title: 'List databases', readOnlyHint: true, openWorldHint: false },
    ...gate('list_database_connections'),
    async call(_args, ctx) {
      const current = directory.currentFor(ctx.principal, ctx.database?.selected ?? null);
      const visible = directory.visibleTo(ctx.principal);
      const databases = visible.map((t) => ({
        name: t.name,
        current: t.name === current,
        writable: t.allowWrites,
      }));
      const lines = visible.map(
        (t) =>
          `${t.name}${t.name === current ? ' (current)' : ''}${t.allowWrites ? ', writable' : ''}`,
      );
      return {
        content: [{ type: 'text', text: `Databases you may use:\n${lines.join('\n')}` }],
        structuredContent: { databases, current },
      };
    },
  });
  registry.addTool({
    name: 'select_database_connection',
    title: 'Select a database',
    description:
      "Make one of the configured databases (by name, from list_database_connections) this session's default for every later call.",
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, description: 'The database name.' } },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: { title: 'Select a database', readOnlyHint: false, idempotentHint: true },
    ...gate('select_database_connection'),
    async call(args, ctx) {
      const name = args['name'] as string;
      directory.resolve(ctx.principal, name, null);
      if (!directory.get(name)) throw unknownDatabaseReference(name);
      return text(selected(selectByReference(name, ctx)));
    },
  });
}
