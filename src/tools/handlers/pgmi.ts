// An existing pgmi deployment served as it is (registry.mode: pgmi, or detected): its own
// api.mcp_handle_request(request jsonb, context jsonb) answers every list and call, with the
// caller's identity as `context` ({user_id, tenant_id}) — exactly what pgmi's HTTP gateway
// passes. pgmcp adds the transports, sessions, both protocol eras and authentication.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { ANONYMOUS, type Principal } from '../../core/principal.js';
import type {
  CallContext,
  PromptSpec,
  ResourceSpec,
  ResourceTemplateSpec,
  ToolSpec,
} from '../../core/specs.js';
import type { JsonSchema } from '../../core/json-schema.js';
import type { Database } from '../../db/database.js';
import { compileUriTemplate } from '../uri-template.js';
import {
  parseEnvelope,
  compileOutputCheck,
  envelopeError,
  toPromptResult,
  toResourceResult,
  toToolResult,
} from './convert.js';
import { withholdCredential } from '../../core/credential-shape.js';
import { screenError } from '../output-screen.js';
import type { ArgumentValidator } from '../validation.js';
import { isSignedIn } from './invocation.js';
import type { LoadedHandlers } from './loader.js';
import type { RegistryHandlerOptions } from './types.js';
import { PGMI_MARK } from './install.js';

/** Whether schema api holds pgmi's own dispatcher (not pgmcp's interface over the registry). */
export const DETECT_PGMI_SQL = `SELECT to_regprocedure('api.mcp_handle_request(jsonb,jsonb)') IS NOT NULL
  AND coalesce(obj_description(to_regnamespace('api'), 'pg_namespace'), '') NOT LIKE '${PGMI_MARK}%' AS pgmi`;

/** The identity pgmi's handlers read (auth.user_id, auth.tenant_id); NULL for anonymous. */
function contextOf(principal: Principal): string | null {
  if (principal.userId === null) return null;
  return JSON.stringify({ user_id: principal.userId, tenant_id: principal.tenantId });
}

/** Lists made with this identity show what needs a caller (pgmi hides it from anonymous). */
const LISTING: Principal = { ...ANONYMOUS, userId: 'pgmcp-listing' };

async function ask(
  db: Database,
  options: RegistryHandlerOptions,
  principal: Principal,
  method: string,
  params: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<unknown> {
  const request = { jsonrpc: '2.0', id: randomUUID(), method, params };
  return db.withTransaction(
    {
      readOnly: !options.allowWrites,
      timeoutMs: options.statementTimeoutMs,
      principal,
      ...(signal ? { signal } : {}),
    },
    async (client) =>
      (
        await client.query<{ envelope: unknown }>(
          'SELECT (api.mcp_handle_request($1::jsonb, $2::jsonb)).envelope AS envelope',
          [JSON.stringify(request), contextOf(principal)],
        )
      ).rows[0]?.envelope,
  );
}

type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * One list, asked on the listing connection. pgmi hides what needs a caller only while
 * auth.user_id IS NULL, which a pooled connection (where pgmcp has set it to '' for anonymous
 * callers) can no longer show: the anonymous lists are asked first on a fresh connection.
 */
async function list(
  client: Queryable,
  context: string | null,
  method: string,
  key: string,
): Promise<Array<Record<string, unknown>>> {
  const request = JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params: {} });
  const { rows } = await client.query<{ envelope: unknown }>(
    'SELECT (api.mcp_handle_request($1::jsonb, $2::jsonb)).envelope AS envelope',
    [request, context],
  );
  const envelope = parseEnvelope('list', method, rows[0]?.envelope);
  if ('error' in envelope) {
    // An older pgmi without resources/templates/list, say: nothing of that kind.
    if (envelope.error.code === -32601) return [];
    throw envelopeError(envelope.error);
  }
  const items = envelope.result[key];
  return Array.isArray(items)
    ? items.filter((i): i is Record<string, unknown> => typeof i === 'object' && i !== null)
    : [];
}

const LISTS = [
  ['tools/list', 'tools'],
  ['resources/list', 'resources'],
  ['resources/templates/list', 'resourceTemplates'],
  ['prompts/list', 'prompts'],
] as const;
type Listed = Record<
  (typeof LISTS)[number][1],
  Array<{ item: Record<string, unknown>; gated: boolean }>
>;

/** Every list twice (anonymous, then with an identity), in read-only transactions of their own. */
async function listAll(db: Database, options: RegistryHandlerOptions): Promise<Listed> {
  const client = db.openClient();
  await client.connect();
  try {
    const run = async (context: string | null) => {
      await client.query('BEGIN READ ONLY');
      try {
        await client.query("SELECT set_config('statement_timeout', $1, true)", [
          String(options.statementTimeoutMs),
        ]);
        const out: Array<Array<Record<string, unknown>>> = [];
        for (const [method, key] of LISTS) out.push(await list(client, context, method, key));
        return out;
      } finally {
        await client.query('ROLLBACK');
      }
    };
    const open = await run(null);
    const all = await run(contextOf(LISTING));
    const name = (i: Record<string, unknown>) => String(i['name'] ?? i['uri'] ?? i['uriTemplate']);
    const result = {} as Listed;
    LISTS.forEach(([, key], n) => {
      const anonymous = new Set(open[n]!.map(name));
      result[key] = all[n]!.map((item) => ({ item, gated: !anonymous.has(name(item)) }));
    });
    return result;
  } finally {
    await client.end();
  }
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

export async function loadPgmiHandlers(
  db: Database,
  options: RegistryHandlerOptions,
): Promise<LoadedHandlers> {
  const loaded: LoadedHandlers = {
    installed: true,
    version: null,
    tools: [],
    resources: [],
    templates: [],
    prompts: [],
  };
  const listed = await listAll(db, options);
  const call = <T>(
    method: string,
    params: Record<string, unknown>,
    ctx: CallContext,
    convert: (v: unknown) => T,
  ) =>
    ask(db, options, ctx.principal, method, params, ctx.signal)
      .then(convert)
      .catch((error: unknown) => {
        // A raised error can carry database values too (convert screened the answers).
        throw screenError(error);
      });
  const gate = <S extends { allows?(p: Principal): boolean }>(spec: S, gated: boolean): S => {
    if (gated) spec.allows = isSignedIn;
    return spec;
  };

  for (const { item, gated } of listed.tools) {
    const name = text(item['name']);
    if (!name) continue;
    const schema = item['inputSchema'];
    const output = item['outputSchema'];
    let checkOutput: ArgumentValidator | undefined;
    try {
      checkOutput =
        typeof output === 'object' && output !== null
          ? compileOutputCheck(name, output as JsonSchema)
          : undefined;
    } catch (error) {
      (loaded.skipped ??= []).push({
        what: `tool ${withholdCredential(name)}`,
        error: error as Error,
      });
      continue;
    }
    const spec: ToolSpec = {
      name,
      description: text(item['description']) ?? `pgmi tool ${name}`,
      // A tool served over MCP always has an object schema, whatever pgmi registered.
      inputSchema:
        typeof schema === 'object' && schema !== null && 'type' in schema
          ? (schema as JsonSchema)
          : { type: 'object', ...(schema as object | null) },
      call: (args, ctx) =>
        call('tools/call', { name, arguments: args }, ctx, (v) =>
          toToolResult(name, v, checkOutput),
        ),
    };
    if (typeof item['outputSchema'] === 'object' && item['outputSchema'] !== null)
      spec.outputSchema = item['outputSchema'] as JsonSchema;
    const tags = (item['_meta'] as { tags?: unknown } | undefined)?.tags;
    if (Array.isArray(tags)) spec.tags = tags.filter((t): t is string => typeof t === 'string');
    loaded.tools.push(gate(spec, gated));
  }
  for (const { item, gated } of listed.resources) {
    const uri = text(item['uri']);
    if (!uri) continue;
    const spec: ResourceSpec = {
      uri,
      name: text(item['name']) ?? uri,
      read: (ctx) => call('resources/read', { uri }, ctx, (v) => toResourceResult(uri, uri, v)),
    };
    if (text(item['description'])) spec.description = text(item['description'])!;
    if (text(item['mimeType'])) spec.mimeType = text(item['mimeType'])!;
    loaded.resources.push(gate(spec, gated));
  }
  for (const { item, gated } of listed.resourceTemplates) {
    const uriTemplate = text(item['uriTemplate']);
    if (!uriTemplate) continue;
    const spec: ResourceTemplateSpec = {
      uriTemplate,
      name: text(item['name']) ?? uriTemplate,
      match: compileUriTemplate(uriTemplate),
      read: (uri, _vars, ctx) =>
        call('resources/read', { uri }, ctx, (v) => toResourceResult(uriTemplate, uri, v)),
    };
    if (text(item['description'])) spec.description = text(item['description'])!;
    if (text(item['mimeType'])) spec.mimeType = text(item['mimeType'])!;
    loaded.templates.push(gate(spec, gated));
  }
  for (const { item, gated } of listed.prompts) {
    const name = text(item['name']);
    if (!name) continue;
    const spec: PromptSpec = {
      name,
      get: (args, ctx) =>
        call('prompts/get', { name, arguments: args }, ctx, (v) => toPromptResult(name, v)),
    };
    if (text(item['description'])) spec.description = text(item['description'])!;
    if (Array.isArray(item['arguments']))
      spec.arguments = item['arguments'] as PromptSpec['arguments'] & object;
    loaded.prompts.push(gate(spec, gated));
  }
  return loaded;
}
