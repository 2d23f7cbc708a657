// MCP Apps (the extension io.modelcontextprotocol/ui): the ui:// views pgmcp serves and which
// tools link to them. A host that declares the extension gets the views in resources/list and a
// `_meta.ui.resourceUri` on the linked tools; every other client gets the lists it always got.
// The views are single HTML files built from web/apps by `npm run build -w web` (web/dist-apps).
// A checkout without that build has no views: findAppViews says so once at startup, and the
// server then behaves as if the extension did not exist (no views, links or declaration).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packagePath } from '../core/package-path.js';
import type { ResourceReadResult } from '../core/content.js';
import type { ToolSpec } from '../core/specs.js';
import { isObject } from './jsonrpc.js';

export const APPS_EXTENSION = 'io.modelcontextprotocol/ui';
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';

/**
 * What each view may reach beyond itself: nothing. Empty lists are the extension's own
 * "no external origins", so a host builds a CSP with connect-src 'none' and no outside
 * scripts, styles, images, fonts or frames. Each file also carries the same policy in a meta tag.
 * The one permission asked for is writing to the clipboard (the grid's Copy).
 */
const UI_META = Object.freeze({
  ui: Object.freeze({
    csp: Object.freeze({ connectDomains: [], resourceDomains: [], frameDomains: [] }),
    permissions: Object.freeze({ clipboardWrite: {} }),
    prefersBorder: true,
  }),
});

export interface AppView {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
  _meta: typeof UI_META;
  /** The built file under web/dist-apps. */
  file: string;
}

const view = (name: string, title: string, description: string): AppView => ({
  uri: `ui://pgmcp/${name}`,
  name,
  title,
  description,
  mimeType: APP_MIME_TYPE,
  _meta: UI_META,
  file: `${name}.html`,
});

export const RESULT_GRID = view(
  'result-grid',
  'Result grid',
  'Rows of a query_database or @mcp routine result: sort, filter, copy, CSV download, and the next page fetched through the host. A result with a time or category column and numbers also shows as a chart.',
);
export const RESULT_CHART = view(
  'result-chart',
  'Result chart',
  'A result with a time or category column and numeric columns as a line or bar chart, the rows a tab away.',
);
export const PLAN_VIEWER = view(
  'plan-viewer',
  'EXPLAIN plan',
  'The plan of execute_explain or explain_query as a tree with costs, rows and times, the findings of the analysis marked on their nodes.',
);

export const APP_VIEWS: readonly AppView[] = [RESULT_GRID, RESULT_CHART, PLAN_VIEWER];

/**
 * Whether the client declared the extension with our MIME type: the extension's capability
 * names the view types a host renders (`mimeTypes`), and one that does not list
 * `text/html;profile=mcp-app` cannot show ours.
 */
export function supportsApps(clientCapabilities: Record<string, unknown>): boolean {
  const extensions = clientCapabilities['extensions'];
  if (!isObject(extensions)) return false;
  const declared = extensions[APPS_EXTENSION];
  if (!isObject(declared)) return false;
  const types = declared['mimeTypes'];
  return Array.isArray(types) && types.includes(APP_MIME_TYPE);
}

/** The built views this server can serve: all three, read from `dir`. */
export interface AppViews {
  readonly views: readonly AppView[];
  readonly dir: string;
}

/** The directory `npm run build -w web` writes the views to. */
export const DEFAULT_APPS_DIR = packagePath('web/dist-apps');

/**
 * Checks (once, at startup) that every view is built in `dir`. Without them the server leaves
 * MCP Apps out entirely, and says why in one log line.
 */
export function findAppViews(
  dir: string = DEFAULT_APPS_DIR,
  logger?: { warn(message: string): void },
): AppViews | null {
  const missing = APP_VIEWS.filter((v) => !existsSync(join(dir, v.file))).map((v) => v.file);
  if (missing.length === 0) return { views: APP_VIEWS, dir };
  logger?.warn(
    `MCP Apps views are off: ${missing.join(', ')} not found in ${dir} (run \`npm run build -w web\`, then restart pgmcp).`,
  );
  return null;
}

/** Whether this request gets MCP Apps: the views are built and the client declared it. */
export function appsFor(
  apps: AppViews | null | undefined,
  clientCapabilities: Record<string, unknown>,
): apps is AppViews {
  return apps != null && supportsApps(clientCapabilities);
}

/**
 * The view a tool's results are shown in, if any: query_database and the @mcp routines that
 * return rows in the grid (the chart is a tab of it), the two EXPLAIN tools in the plan viewer.
 */
export function viewOf(spec: ToolSpec): AppView | null {
  if (spec.name === 'query_database') return RESULT_GRID;
  if (spec.name === 'execute_explain' || spec.name === 'explain_query') return PLAN_VIEWER;
  const derived = (spec as { derived?: { shape?: { kind?: string; set?: boolean } } }).derived;
  if (derived?.shape?.set === true) return RESULT_GRID;
  return null;
}

/** A tool's wire form with its view linked (a copy; the cached plain form stays as it is). */
export function withViewLink(
  tool: Record<string, unknown>,
  spec: ToolSpec,
): Record<string, unknown> {
  const linked = viewOf(spec);
  if (!linked) return tool;
  const meta = isObject(tool['_meta']) ? tool['_meta'] : {};
  return { ...tool, _meta: { ...meta, ui: { resourceUri: linked.uri } } };
}

/** The view at `uri`, if the server has its views. */
export function appView(apps: AppViews | null | undefined, uri: string): AppView | undefined {
  return apps?.views.find((v) => v.uri === uri);
}

const loaded = new Map<string, string>();

/**
 * resources/read of a view: the built HTML, read once. Undefined when the file has gone since
 * startup (the caller answers "resource not found" then, as for any missing resource).
 */
export async function readAppView(
  apps: AppViews,
  found: AppView,
): Promise<ResourceReadResult | undefined> {
  const path = join(apps.dir, found.file);
  let html = loaded.get(path);
  if (html === undefined) {
    try {
      html = await readFile(path, 'utf8');
    } catch {
      return undefined;
    }
    loaded.set(path, html);
  }
  const content = { uri: found.uri, mimeType: APP_MIME_TYPE, text: html, _meta: found._meta };
  return { contents: [content] };
}
