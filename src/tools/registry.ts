// The one catalog the protocol and REST layers serve: built-in tools, then routines and
// registry handlers (and, in the test-only fixture server, the conformance fixtures). Lists are kept in a deterministic
// order (by name) because clients cache tool lists in prompts.
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec } from '../core/specs.js';
import { compileValidator, type ArgumentValidator } from './validation.js';

export type CatalogKind = 'tools' | 'resources' | 'prompts';

/** The callers a change concerns. */
export type Audience = (principal: Principal) => boolean;

export interface RegisteredTool {
  spec: ToolSpec;
  validate: ArgumentValidator;
  /**
   * The check of a successful answer's structuredContent against the tool's outputSchema,
   * compiled at its first use (once per tool); null when the tool declares none.
   */
  checkOutput: ArgumentValidator | null;
}

/** The entry of a tool: its input check and, when it declares an outputSchema, its output check. */
function registered(spec: ToolSpec, eager: boolean): RegisteredTool {
  return {
    spec,
    validate: compileValidator(spec.inputSchema, `tool ${spec.name}`, { eager }),
    checkOutput:
      spec.outputSchema === undefined
        ? null
        : compileValidator(spec.outputSchema, `tool ${spec.name} (outputSchema)`, {
            eager: false,
            subject: 'structuredContent',
          }),
  };
}

export interface Registry {
  tools(): readonly ToolSpec[];
  tool(name: string): RegisteredTool | undefined;
  resources(): readonly ResourceSpec[];
  resource(uri: string): ResourceSpec | undefined;
  templates(): readonly ResourceTemplateSpec[];
  /** The template that claims this URI and the values of its variables. */
  matchTemplate(
    uri: string,
  ): { template: ResourceTemplateSpec; vars: Record<string, string> } | undefined;
  prompts(): readonly PromptSpec[];
  prompt(name: string): PromptSpec | undefined;

  /**
   * `compileOnFirstCall`: built-in tools (pgmcp's own code, whose schemas compile) leave their
   * input schema's compilation to their first call, which keeps it out of start-up.
   */
  addTool(spec: ToolSpec, options?: { compileOnFirstCall?: boolean }): void;
  removeTool(name: string): boolean;
  addResource(spec: ResourceSpec): void;
  removeResource(uri: string): boolean;
  addTemplate(spec: ResourceTemplateSpec): void;
  addPrompt(spec: PromptSpec): void;
  removePrompt(name: string): boolean;

  /**
   * Several removals and additions as one change: entries named in `remove` go first, then
   * `add` (so a replacement names the same key in both). An addition whose name is invalid,
   * still claimed, or whose inputSchema does not compile is skipped and reported, never thrown.
   * Emits at most ONE list_changed per kind, and none for a kind whose listed entries (what
   * tools/list etc. show) came out the same, e.g. a swap of implementations.
   */
  apply(batch: RegistryBatch): RegistryBatchResult;

  /**
   * Called after a list changed (for list_changed notifications). `audience`, when given, says
   * which callers the change concerns (the users of one database); others are not told.
   * Returns an unsubscribe.
   */
  onListChanged(listener: (kind: CatalogKind, audience?: Audience) => void): () => void;
  /** Called when a resource's content changed (for resources/updated notifications). */
  onResourceUpdated(listener: (uri: string) => void): () => void;
  resourceUpdated(uri: string): void;
}

/** The maps a batch touches: templates are a map of their own within the 'resources' kind. */
export type BatchSlot = 'tools' | 'resources' | 'templates' | 'prompts';

export interface RegistryBatch {
  tools?: { remove?: readonly string[]; add?: readonly ToolSpec[] };
  resources?: { remove?: readonly string[]; add?: readonly ResourceSpec[] };
  /** Keyed by uriTemplate; part of the 'resources' kind. */
  templates?: { remove?: readonly string[]; add?: readonly ResourceTemplateSpec[] };
  prompts?: { remove?: readonly string[]; add?: readonly PromptSpec[] };
  /**
   * Kinds to announce even when the listed views came out the same: who may see an entry
   * changed in a way its view cannot show (the roles behind a allows).
   */
  announce?: readonly CatalogKind[];
  /** Whom the batch's list_changed concerns (absent: everyone). */
  audience?: Audience;
}

export interface RegistryBatchResult {
  /** The kinds whose lists changed (one list_changed each was emitted). */
  changed: CatalogKind[];
  skipped: { kind: BatchSlot; key: string; error: Error }[];
}

export type AnySpec = ToolSpec | ResourceSpec | ResourceTemplateSpec | PromptSpec;

/** The entry a registry holds under `key` in one slot (a tool's spec, a template by its URI). */
export function specIn(registry: Registry, slot: BatchSlot, key: string): AnySpec | undefined {
  switch (slot) {
    case 'tools':
      return registry.tool(key)?.spec;
    case 'resources':
      return registry.resource(key);
    case 'templates':
      return registry.templates().find((t) => t.uriTemplate === key);
    case 'prompts':
      return registry.prompt(key);
  }
}

/** Data that travels with some specs but never appears in a list. */
const UNLISTED_KEYS = new Set(['derived', 'source']);

/**
 * What a list shows of an entry (its data fields, and whether allows restricts it), as a
 * string: two entries with the same view look the same to a client.
 */
export function listedView(
  spec: ToolSpec | ResourceSpec | ResourceTemplateSpec | PromptSpec,
): string {
  const plain = spec as unknown as Record<string, unknown>;
  const view: Record<string, unknown> = { restricted: typeof spec.allows === 'function' };
  for (const key of Object.keys(plain).sort()) {
    if (typeof plain[key] !== 'function' && !UNLISTED_KEYS.has(key)) view[key] = plain[key];
  }
  return JSON.stringify(view);
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

function sortedByName<T>(map: Map<string, T>, key: (v: T) => string): T[] {
  return [...map.values()].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

export function createRegistry(): Registry {
  const tools = new Map<string, RegisteredTool>();
  const resources = new Map<string, ResourceSpec>();
  const templates = new Map<string, ResourceTemplateSpec>();
  const prompts = new Map<string, PromptSpec>();
  const listListeners = new Set<(kind: CatalogKind, audience?: Audience) => void>();
  const updateListeners = new Set<(uri: string) => void>();
  // Sorted snapshots, rebuilt only when a list changes.
  let toolList: ToolSpec[] | null = null;
  let resourceList: ResourceSpec[] | null = null;
  let templateList: ResourceTemplateSpec[] | null = null;
  let promptList: PromptSpec[] | null = null;

  const changed = (kind: CatalogKind, audience?: Audience): void => {
    if (kind === 'tools') toolList = null;
    if (kind === 'resources') resourceList = templateList = null;
    if (kind === 'prompts') promptList = null;
    for (const listener of listListeners) listener(kind, audience);
  };

  const claimed = (kind: string, name: string): AppError =>
    new AppError(ErrorCodes.CONFIG_INVALID, `The ${kind} name "${name}" is claimed twice.`, {
      category: 'config',
      details: { name },
    });

  const checkToolName = (name: string): void => {
    if (!TOOL_NAME.test(name)) {
      throw new AppError(
        ErrorCodes.CONFIG_INVALID,
        `Tool name "${name}" must be 1-128 characters of A-Z a-z 0-9 _ . -`,
        { category: 'config' },
      );
    }
  };

  /** Remove-then-add on one map; returns whether its listed entries changed. */
  const applyTo = <T extends ToolSpec | ResourceSpec | ResourceTemplateSpec | PromptSpec, V>(
    kind: BatchSlot,
    map: Map<string, V>,
    keyOf: (spec: T) => string,
    wrap: (spec: T) => V,
    unwrap: (value: V) => T,
    change: { remove?: readonly string[]; add?: readonly T[] } | undefined,
    skipped: RegistryBatchResult['skipped'],
  ): boolean => {
    if (!change) return false;
    const before = new Map<string, string>();
    for (const key of change.remove ?? []) {
      const old = map.get(key);
      if (old === undefined) continue;
      before.set(key, listedView(unwrap(old)));
      map.delete(key);
    }
    const after = new Map<string, string>();
    for (const spec of change.add ?? []) {
      const key = keyOf(spec);
      try {
        if (map.has(key)) throw claimed(kind.replace(/s$/, ''), key);
        map.set(key, wrap(spec));
        after.set(key, listedView(spec));
      } catch (error) {
        skipped.push({ kind, key, error: error as Error });
      }
    }
    if (before.size !== after.size) return true;
    for (const [key, view] of before) if (after.get(key) !== view) return true;
    return false;
  };

  return {
    tools: () => (toolList ??= sortedByName(tools, (t) => t.spec.name).map((t) => t.spec)),
    tool: (name) => tools.get(name),
    resources: () => (resourceList ??= sortedByName(resources, (r) => r.uri)),
    resource: (uri) => resources.get(uri),
    templates: () => (templateList ??= sortedByName(templates, (t) => t.uriTemplate)),
    matchTemplate(uri) {
      for (const template of templates.values()) {
        const vars = template.match(uri);
        if (vars) return { template, vars };
      }
      return undefined;
    },
    prompts: () => (promptList ??= sortedByName(prompts, (p) => p.name)),
    prompt: (name) => prompts.get(name),

    addTool(spec, options = {}) {
      checkToolName(spec.name);
      if (tools.has(spec.name)) throw claimed('tool', spec.name);
      tools.set(spec.name, registered(spec, options.compileOnFirstCall !== true));
      changed('tools');
    },
    removeTool(name) {
      const removed = tools.delete(name);
      if (removed) changed('tools');
      return removed;
    },
    addResource(spec) {
      if (resources.has(spec.uri)) throw claimed('resource', spec.uri);
      resources.set(spec.uri, spec);
      changed('resources');
    },
    removeResource(uri) {
      const removed = resources.delete(uri);
      if (removed) changed('resources');
      return removed;
    },
    addTemplate(spec) {
      if (templates.has(spec.uriTemplate)) throw claimed('resource template', spec.uriTemplate);
      templates.set(spec.uriTemplate, spec);
      changed('resources');
    },
    addPrompt(spec) {
      if (prompts.has(spec.name)) throw claimed('prompt', spec.name);
      prompts.set(spec.name, spec);
      changed('prompts');
    },
    removePrompt(name) {
      const removed = prompts.delete(name);
      if (removed) changed('prompts');
      return removed;
    },
    apply(batch) {
      const skipped: RegistryBatchResult['skipped'] = [];
      const self = <T>(v: T): T => v;
      const toolsChanged = applyTo<ToolSpec, RegisteredTool>(
        'tools',
        tools,
        (t) => t.name,
        (spec) => {
          checkToolName(spec.name);
          return registered(spec, true);
        },
        (t) => t.spec,
        batch.tools,
        skipped,
      );
      const resourcesChanged = applyTo<ResourceSpec, ResourceSpec>(
        'resources',
        resources,
        (r) => r.uri,
        self,
        self,
        batch.resources,
        skipped,
      );
      const templatesChanged = applyTo<ResourceTemplateSpec, ResourceTemplateSpec>(
        'templates',
        templates,
        (t) => t.uriTemplate,
        self,
        self,
        batch.templates,
        skipped,
      );
      const promptsChanged = applyTo<PromptSpec, PromptSpec>(
        'prompts',
        prompts,
        (p) => p.name,
        self,
        self,
        batch.prompts,
        skipped,
      );
      // Snapshots are rebuilt even when nothing listed changed: a swapped entry is a new object.
      if (batch.tools) toolList = null;
      if (batch.resources || batch.templates) resourceList = templateList = null;
      if (batch.prompts) promptList = null;
      const changedKinds: CatalogKind[] = [];
      const forced = new Set(batch.announce ?? []);
      if (toolsChanged || forced.has('tools')) changedKinds.push('tools');
      if (resourcesChanged || templatesChanged || forced.has('resources'))
        changedKinds.push('resources');
      if (promptsChanged || forced.has('prompts')) changedKinds.push('prompts');
      for (const kind of changedKinds) changed(kind, batch.audience);
      return { changed: changedKinds, skipped };
    },
    onListChanged(listener) {
      listListeners.add(listener);
      return () => listListeners.delete(listener);
    },
    onResourceUpdated(listener) {
      updateListeners.add(listener);
      return () => updateListeners.delete(listener);
    },
    resourceUpdated(uri) {
      for (const listener of updateListeners) listener(uri);
    },
  };
}
