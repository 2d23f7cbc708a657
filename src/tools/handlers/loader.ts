// Reads mcp.handler (when the registry is installed and readable) into specs, and adds them to
// the registry.
import { ANONYMOUS, type Principal } from '../../core/principal.js';
import type { PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec } from '../../core/specs.js';
import type { Database } from '../../db/database.js';
import type { Registry } from '../registry.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { DETECT_PGMI_SQL, loadPgmiHandlers } from './pgmi.js';
import { promptSpec, resourceFrom, templateSpec, toolSpec } from './handler-specs.js';
import { withholdCredential } from '../../core/credential-shape.js';
import {
  screenPromptMetadata,
  screenResourceMetadata,
  screenToolMetadata,
} from './metadata-screen.js';
import type { HandlerRow, RegistryHandlerOptions } from './types.js';

export interface LoadedHandlers {
  /** False when the registry is not installed in this database (nothing else is then set). */
  installed: boolean;
  version: number | null;
  tools: ToolSpec[];
  resources: ResourceSpec[];
  templates: ResourceTemplateSpec[];
  prompts: PromptSpec[];
  /** Handlers left out, each with why (metadata that reads like a credential: metadata-screen.ts). */
  skipped?: { what: string; error: Error }[];
}

const LOAD_SQL = `SELECT id::text, type, name, description, input_schema, output_schema, uri_template,
  mime_type, arguments, tags, requires_auth, function_name
FROM mcp.handler ORDER BY type, length(coalesce(uri_template, '')) DESC, name`;

export async function loadRegistryHandlers(
  db: Database,
  options: RegistryHandlerOptions,
  principal: Principal = ANONYMOUS,
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
      // An existing pgmi deployment is served through its own dispatcher (registry.mode).
      if (options.mode !== 'mcp') {
        const detected = await client.query<{ pgmi: boolean }>(DETECT_PGMI_SQL);
        if (detected.rows[0]?.pgmi) return 'pgmi' as const;
        if (options.mode === 'pgmi') {
          throw new AppError(
            ErrorCodes.PGMI_NOT_FOUND,
            'registry.mode is pgmi, but this database has no pgmi dispatcher api.mcp_handle_request(jsonb, jsonb) of its own.',
            { category: 'config' },
          );
        }
      }
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
  if (rows === 'pgmi') return screenMetadata(await loadPgmiHandlers(db, options));
  if (!rows) return loaded;
  loaded.installed = true;
  for (const row of rows) {
    if (row.type === 'tool') {
      try {
        loaded.tools.push(toolSpec(db, options, row));
      } catch (error) {
        (loaded.skipped ??= []).push({
          what: `tool ${withholdCredential(row.name)}`,
          error: error as Error,
        });
      }
    } else if (row.type === 'prompt') loaded.prompts.push(promptSpec(db, options, row));
    else if (row.uri_template?.includes('{')) loaded.templates.push(templateSpec(db, options, row));
    else resourceFrom(db, options, row, loaded.resources);
  }
  return screenMetadata(loaded);
}

/**
 * What the handlers show in the lists, screened for credentials (metadata-screen.ts); a handler
 * whose metadata cannot be served is left out and listed in `skipped`.
 */
function screenMetadata(loaded: LoadedHandlers): LoadedHandlers {
  const skipped: { what: string; error: Error }[] = [...(loaded.skipped ?? [])];
  const screenAll = <T>(items: T[], screen: (item: T) => T, what: (item: T) => string): T[] => {
    const out: T[] = [];
    for (const item of items) {
      try {
        out.push(screen(item));
      } catch (error) {
        skipped.push({ what: what(item), error: error as Error });
      }
    }
    return out;
  };
  const screened: LoadedHandlers = {
    ...loaded,
    tools: screenAll(loaded.tools, screenToolMetadata, (t) => `tool ${withholdCredential(t.name)}`),
    resources: screenAll(
      loaded.resources,
      screenResourceMetadata,
      (r) => `resource ${withholdCredential(r.name)}`,
    ),
    templates: screenAll(
      loaded.templates,
      screenResourceMetadata,
      (t) => `resource ${withholdCredential(t.name)}`,
    ),
    prompts: screenAll(
      loaded.prompts,
      screenPromptMetadata,
      (p) => `prompt ${withholdCredential(p.name)}`,
    ),
  };
  if (skipped.length > 0) screened.skipped = skipped;
  return screened;
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
  for (const { what, error } of loaded.skipped ?? []) onSkip(what, error);
  return added;
}
