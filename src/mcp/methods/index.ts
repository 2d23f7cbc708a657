// The MCP method handlers, one file per method group, shared by both eras.
import { completionMethods } from './completion.js';
import { CAPABILITIES, lifecycleMethods, TASK_CAPABILITIES } from './lifecycle.js';
import { promptMethods } from './prompts.js';
import { resourceMethods } from './resources.js';
import { createShared, type FeatureOptions, type Handler } from './shared.js';
import { toolMethods } from './tools.js';
import { taskMethods, type TaskMethods } from '../tasks/methods.js';

export type { FeatureOptions, Handler, RequestScope } from './shared.js';

export interface Features {
  capabilities: Record<string, unknown>;
  serverInfo: { name: string; version: string };
  initialize: Handler;
  setLevel: Handler;
  subscribe: Handler;
  unsubscribe: Handler;
  discover: Handler;
  listTools: Handler;
  callTool: Handler;
  listResources: Handler;
  listTemplates: Handler;
  readResource: Handler;
  listPrompts: Handler;
  getPrompt: Handler;
  complete: Handler;
  /** Null without a task service. */
  tasks: TaskMethods | null;
}

export function createFeatures(options: FeatureOptions): Features {
  const shared = createShared(options);
  return {
    capabilities: options.tasks ? TASK_CAPABILITIES : CAPABILITIES,
    serverInfo: { name: options.serverInfo.name, version: options.serverInfo.version },
    ...lifecycleMethods(options, shared),
    ...toolMethods(options, shared),
    ...resourceMethods(options, shared),
    ...promptMethods(options, shared),
    ...completionMethods(options),
    tasks: options.tasks ? taskMethods(options.tasks) : null,
  };
}
