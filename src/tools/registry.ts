// The one catalog the protocol and REST layers serve: built-in tools, conformance
// fixtures, and later routines and registry handlers. Lists are kept in a deterministic
// order (by name) because clients cache tool lists in prompts.
import { AppError, ErrorCodes } from '../core/errors.js';
import type { PromptSpec, ResourceSpec, ResourceTemplateSpec, ToolSpec } from '../core/specs.js';
import { compileValidator, type ArgumentValidator } from './validation.js';

export type CatalogKind = 'tools' | 'resources' | 'prompts';

export interface RegisteredTool {
  spec: ToolSpec;
  validate: ArgumentValidator;
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

  addTool(spec: ToolSpec): void;
  removeTool(name: string): boolean;
  addResource(spec: ResourceSpec): void;
  removeResource(uri: string): boolean;
  addTemplate(spec: ResourceTemplateSpec): void;
  addPrompt(spec: PromptSpec): void;
  removePrompt(name: string): boolean;

  /** Called after a list changed (for list_changed notifications). Returns an unsubscribe. */
  onListChanged(listener: (kind: CatalogKind) => void): () => void;
  /** Called when a resource's content changed (for resources/updated notifications). */
  onResourceUpdated(listener: (uri: string) => void): () => void;
  resourceUpdated(uri: string): void;
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
  const listListeners = new Set<(kind: CatalogKind) => void>();
  const updateListeners = new Set<(uri: string) => void>();
  // Sorted snapshots, rebuilt only when a list changes.
  let toolList: ToolSpec[] | null = null;
  let resourceList: ResourceSpec[] | null = null;
  let templateList: ResourceTemplateSpec[] | null = null;
  let promptList: PromptSpec[] | null = null;

  const changed = (kind: CatalogKind): void => {
    if (kind === 'tools') toolList = null;
    if (kind === 'resources') resourceList = templateList = null;
    if (kind === 'prompts') promptList = null;
    for (const listener of listListeners) listener(kind);
  };

  const claimed = (kind: string, name: string): AppError =>
    new AppError(ErrorCodes.CONFIG_INVALID, `The ${kind} name "${name}" is claimed twice.`, {
      category: 'config',
      details: { name },
    });

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

    addTool(spec) {
      if (!TOOL_NAME.test(spec.name)) {
        throw new AppError(
          ErrorCodes.CONFIG_INVALID,
          `Tool name "${spec.name}" must be 1-128 characters of A-Z a-z 0-9 _ . -`,
          { category: 'config' },
        );
      }
      if (tools.has(spec.name)) throw claimed('tool', spec.name);
      tools.set(spec.name, {
        spec,
        validate: compileValidator(spec.inputSchema, `tool ${spec.name}`),
      });
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
