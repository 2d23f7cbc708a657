// The fixtures the official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16 and
// 0.2.0-alpha.12) calls by name, registered when pgmcp runs with --conformance. What the suites
// check beyond these fixtures is in docs/conformance-checklist.md.
import type { Registry } from '../registry.js';
import { clientRequestTools } from './client-requests.js';
import { inputRequiredPrompt, inputRequiredTools } from './input-required.js';
import { createListChangeTools } from './list-changes.js';
import { conformancePrompts } from './prompts.js';
import { conformanceResources, conformanceTemplates } from './resources.js';
import { contentTools } from './tools.js';

export { DYNAMIC_PROMPT_NAME, DYNAMIC_TOOL_NAME } from './list-changes.js';

/** Registers every conformance tool, resource, template and prompt; throws if a name is taken. */
export function registerConformanceFixtures(registry: Registry): void {
  for (const tool of [
    ...contentTools,
    ...clientRequestTools,
    ...inputRequiredTools,
    ...createListChangeTools(registry),
  ]) {
    registry.addTool(tool);
  }
  for (const resource of conformanceResources) registry.addResource(resource);
  for (const template of conformanceTemplates) registry.addTemplate(template);
  for (const prompt of [...conformancePrompts, inputRequiredPrompt]) registry.addPrompt(prompt);
}
