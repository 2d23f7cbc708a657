// server-stateless (2026-07-28) calls test_trigger_tool_change / test_trigger_prompt_change
// while a subscriptions/listen stream is open and expects notifications/{tools,prompts}/
// list_changed on it. Each call toggles one extra entry in the registry, so every call is a
// real change and the registry's onListChanged does the rest.
import { textResult } from '../../core/content.js';
import { EMPTY_OBJECT_SCHEMA } from '../../core/json-schema.js';
import type { PromptSpec, ToolSpec } from '../../core/specs.js';
import type { Registry } from '../registry.js';

export const DYNAMIC_TOOL_NAME = 'test_dynamic_tool';
export const DYNAMIC_PROMPT_NAME = 'test_dynamic_prompt';

export const dynamicTool: ToolSpec = {
  name: DYNAMIC_TOOL_NAME,
  description: 'Appears and disappears with each test_trigger_tool_change call.',
  inputSchema: EMPTY_OBJECT_SCHEMA,
  annotations: { readOnlyHint: true, openWorldHint: false },
  call: async () => textResult('The dynamic tool is present.'),
};

export const dynamicPrompt: PromptSpec = {
  name: DYNAMIC_PROMPT_NAME,
  description: 'Appears and disappears with each test_trigger_prompt_change call.',
  get: async () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'The dynamic prompt is present.' } }],
  }),
};

export function createListChangeTools(registry: Registry): ToolSpec[] {
  return [
    {
      name: 'test_trigger_tool_change',
      description: `Adds or removes the tool ${DYNAMIC_TOOL_NAME}, so the tool list changes (conformance: server-stateless).`,
      inputSchema: EMPTY_OBJECT_SCHEMA,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      async call() {
        if (registry.removeTool(DYNAMIC_TOOL_NAME))
          return textResult(`Removed the tool ${DYNAMIC_TOOL_NAME}.`);
        registry.addTool(dynamicTool);
        return textResult(`Added the tool ${DYNAMIC_TOOL_NAME}.`);
      },
    },
    {
      name: 'test_trigger_prompt_change',
      description: `Adds or removes the prompt ${DYNAMIC_PROMPT_NAME}, so the prompt list changes (conformance: server-stateless).`,
      inputSchema: EMPTY_OBJECT_SCHEMA,
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
      async call() {
        if (registry.removePrompt(DYNAMIC_PROMPT_NAME))
          return textResult(`Removed the prompt ${DYNAMIC_PROMPT_NAME}.`);
        registry.addPrompt(dynamicPrompt);
        return textResult(`Added the prompt ${DYNAMIC_PROMPT_NAME}.`);
      },
    },
  ];
}
