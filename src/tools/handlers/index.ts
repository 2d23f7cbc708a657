// Tools, resources and prompts from the SQL handler registry (schema mcp, installed by
// `pgmcp install`): each row of mcp.handler becomes a spec whose calls run the generated
// function mcp.handler_<type>_<name>(mcp.request) in one transaction with the caller's identity.
import { randomUUID } from 'node:crypto';
import { AppError, isAppError } from '../../core/errors.js';
import type { JsonSchema } from '../../core/json-schema.js';
import type { Principal } from '../../core/principal.js';
import { quoteIdent } from '../../core/sql.js';
import type {
  CallContext,
  PromptArgumentSpec,
  PromptSpec,
  ResourceSpec,
  ResourceTemplateSpec,
  ToolSpec,
} from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import { describeDbError } from '../../db/errors.js';
import type { Registry } from '../registry.js';
import { compileUriTemplate } from '../uri-template.js';
import { AUTH_REQUIRED_CODE, toPromptResult, toResourceResult, toToolResult } from './convert.js';
import type { ExchangeLog } from './exchange-log.js';

export { createExchangeLog, type ExchangeLog, type ExchangeRecord } from './exchange-log.js';
export { applyRegistryScripts, installedVersion, pgRunner, registryScripts } from './install.js';

export interface RegistryHandlerOptions {
  statementTimeoutMs: number;
  /** Read-write transactions only when the database is configured to allow writes. */
  allowWrites: boolean;
  exchangeLog?: ExchangeLog;
}

export interface HandlerRow {
  id: string;
  type: 'tool' | 'resource' | 'prompt';
  name: string;
  description: string | null;
  input_schema: JsonSchema | null;
  output_schema: JsonSchema | null;
  uri_template: string | null;
  mime_type: string | null;
  arguments: PromptArgumentSpec[] | null;
  tags: string[];
  requires_auth: boolean;
  function_name: string;
}

export interface LoadedHandlers {
  /** False when the registry is not installed in this database (nothing else is then set). */
  installed: boolean;
  version: number | null;
  tools: ToolSpec[];
  resources: ResourceSpec[];
  templates: ResourceTemplateSpec[];
  prompts: PromptSpec[];
}

const LOAD_SQL = `SELECT id::text, type, name, description, input_schema, output_schema, uri_template,
  mime_type, arguments, tags, requires_auth, function_name
FROM mcp.handler ORDER BY type, length(coalesce(uri_template, '')) DESC, name`;

export async function loadRegistryHandlers(
  db: Database,
  options: RegistryHandlerOptions,
  principal: Principal = anonymousLoader,
): Promise<LoadedHandlers> {
  const loaded: LoadedHandlers = {
    installed: false,
    version: null,
    tools: [],
    resources: [],
    templates: [],
    prompts: [],
  };
  const rows = await db.withTransaction(
    { readOnly: true, timeoutMs: options.statementTimeoutMs, principal },
    async (client) => {
      const present = await client.query<{ present: boolean }>(
        "SELECT to_regclass('mcp.handler') IS NOT NULL AND has_table_privilege('mcp.handler', 'SELECT') AS present",
      );
      if (!present.rows[0]?.present) return null;
      const version = await client.query<{ version: number | null }>(
        'SELECT max(version) AS version FROM mcp.schema_version',
      );
      loaded.version = version.rows[0]?.version ?? null;
      return (await client.query<HandlerRow>(LOAD_SQL)).rows;
    },
  );
  if (!rows) return loaded;
  loaded.installed = true;
  for (const row of rows) {
    if (row.type === 'tool') loaded.tools.push(toolSpec(db, options, row));
    else if (row.type === 'prompt') loaded.prompts.push(promptSpec(db, options, row));
    else if (row.uri_template?.includes('{')) loaded.templates.push(templateSpec(db, options, row));
    else resourceFrom(db, options, row, loaded.resources);
  }
  return loaded;
}

/**
 * Adds what was loaded to the registry. A name another source already claimed (a built-in tool,
 * say) is skipped and reported, so one bad row cannot stop the server from starting.
 */
export function addRegistryHandlers(
  registry: Registry,
  loaded: LoadedHandlers,
  onSkip: (what: string, error: Error) => void = () => undefined,
): number {
  let added = 0;
  const tryAdd = (what: string, add: () => void): void => {
    try {
      add();
      added++;
    } catch (error) {
      onSkip(what, error as Error);
    }
  };
  for (const t of loaded.tools) tryAdd(`tool ${t.name}`, () => registry.addTool(t));
  for (const r of loaded.resources) tryAdd(`resource ${r.uri}`, () => registry.addResource(r));
  for (const t of loaded.templates)
    tryAdd(`resource template ${t.uriTemplate}`, () => registry.addTemplate(t));
  for (const p of loaded.prompts) tryAdd(`prompt ${p.name}`, () => registry.addPrompt(p));
  return added;
}

const anonymousLoader: Principal = Object.freeze({
  kind: 'anonymous',
  userId: null,
  tenantId: null,
  roles: [],
  scopes: [],
  claims: {},
});

// ---------------------------------------------------------------------------------------------

interface Invocation {
  method: 'tools/call' | 'resources/read' | 'prompts/get';
  /** What the exchange log names: the tool or prompt name, or the URI read. */
  logName: string;
  row: HandlerRow;
  args: Record<string, unknown>;
  uri: string | null;
}

/** requiresAuth handlers need a caller with a user id: to run them, and to see them listed. */
const isSignedIn = (principal: Principal): boolean => principal.userId !== null;

/** Sets visibleTo on a spec of a requiresAuth row (hidden from anonymous callers). */
function gate<T extends { visibleTo?(principal: Principal): boolean }>(
  row: HandlerRow,
  spec: T,
): T {
  if (row.requires_auth) spec.visibleTo = isSignedIn;
  return spec;
}

function authRequired(row: HandlerRow): AppError {
  return new AppError(
    AUTH_REQUIRED_CODE,
    `Authentication required: the ${row.type} ${row.name} needs a signed-in caller.`,
    { category: 'auth' },
  );
}

/** Runs the generated function in one transaction and returns the envelope it built. */
async function invoke(
  db: Database,
  options: RegistryHandlerOptions,
  call: Invocation,
  ctx: CallContext,
): Promise<unknown> {
  const { row } = call;
  if (row.requires_auth && !isSignedIn(ctx.principal)) throw authRequired(row);
  const context = {
    user_id: ctx.principal.userId,
    tenant_id: ctx.principal.tenantId,
    claims: ctx.principal.claims,
  };
  const sql = `SELECT mcp.${quoteIdent(row.function_name)}(ROW($1::jsonb, $2::text, $3::jsonb, $4::text)::mcp.request) AS response`;
  const response = await db.withTransaction(
    {
      readOnly: !options.allowWrites,
      timeoutMs: options.statementTimeoutMs,
      principal: ctx.principal,
      signal: ctx.signal,
    },
    async (client) =>
      (
        await client.query<{ response: unknown }>(sql, [
          JSON.stringify(call.args),
          call.uri,
          JSON.stringify(context),
          randomUUID(),
        ])
      ).rows[0]?.response,
  );
  if (response === null || response === undefined) {
    throw new AppError(
      'PGMCP202',
      `The ${row.type} handler ${row.name} returned NULL; it must RETURN one of the mcp.*_result builders.`,
      { category: 'database' },
    );
  }
  return response;
}

/** invoke + convert, with database errors made readable and every outcome logged. */
async function run<T>(
  db: Database,
  options: RegistryHandlerOptions,
  call: Invocation,
  ctx: CallContext,
  convert: (response: unknown) => T,
  failed: (result: T) => boolean = () => false,
): Promise<T> {
  const started = performance.now();
  const log = (outcome: 'ok' | 'error', errorCode: string | null): void =>
    options.exchangeLog?.record({
      principal: ctx.principal,
      method: call.method,
      name: call.logName,
      durationMs: performance.now() - started,
      outcome,
      errorCode,
      args: call.args,
    });
  try {
    const result = convert(await invoke(db, options, call, ctx));
    log(failed(result) ? 'error' : 'ok', null);
    return result;
  } catch (error) {
    const sqlstate = isAppError(error) ? error.details?.['sqlstate'] : undefined;
    log(
      'error',
      isAppError(error) ? String(sqlstate ?? error.details?.['rpcCode'] ?? error.code) : null,
    );
    if (isAppError(error) && error.category !== 'internal' && sqlstate) {
      throw new AppError(error.code, describeDbError(error), {
        category: error.category,
        details: error.details,
        cause: error,
      });
    }
    throw error;
  }
}

function toolSpec(db: Database, options: RegistryHandlerOptions, row: HandlerRow): ToolSpec {
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
        (response) => toToolResult(row.name, response),
        (result) => result.isError === true,
      ),
  };
  if (row.output_schema) spec.outputSchema = row.output_schema;
  return gate(row, spec);
}

function templateSpec(
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

function resourceFrom(
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

function promptSpec(db: Database, options: RegistryHandlerOptions, row: HandlerRow): PromptSpec {
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
