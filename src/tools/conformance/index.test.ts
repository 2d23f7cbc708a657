import { describe, expect, it } from 'vitest';
import { createFakeContext } from '../../testing/fake-context.js';
import { createRegistry, type CatalogKind } from '../registry.js';
import { DYNAMIC_PROMPT_NAME, DYNAMIC_TOOL_NAME, registerConformanceFixtures } from './index.js';

// Every name a pinned suite version calls (0.1.16 and 0.2.0-alpha.12, both wires).
const EXPECTED_TOOLS = [
  'json_schema_2020_12_tool',
  'test_audio_content',
  'test_elicitation',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
  'test_embedded_resource',
  'test_error_handling',
  'test_header_param',
  'test_image_content',
  'test_input_required_result_capabilities',
  'test_input_required_result_elicitation',
  'test_input_required_result_list_roots',
  'test_input_required_result_multi_round',
  'test_input_required_result_multiple_inputs',
  'test_input_required_result_request_state',
  'test_input_required_result_sampling',
  'test_input_required_result_tampered_state',
  'test_logging_tool',
  'test_missing_capability',
  'test_multiple_content_types',
  'test_reconnection',
  'test_sampling',
  'test_simple_text',
  'test_streaming_elicitation',
  'test_tool_with_logging',
  'test_tool_with_progress',
  'test_trigger_prompt_change',
  'test_trigger_tool_change',
];

const EXPECTED_PROMPTS = [
  'test_input_required_result_prompt',
  'test_prompt_with_arguments',
  'test_prompt_with_embedded_resource',
  'test_prompt_with_image',
  'test_simple_prompt',
];

function registryWithFixtures() {
  const registry = createRegistry();
  registerConformanceFixtures(registry);
  return registry;
}

describe('registerConformanceFixtures', () => {
  it('registers exactly the fixtures the suites call, in name order', () => {
    const registry = registryWithFixtures();
    expect(registry.tools().map((t) => t.name)).toEqual(EXPECTED_TOOLS);
    expect(registry.prompts().map((p) => p.name)).toEqual(EXPECTED_PROMPTS);
    expect(registry.resources().map((r) => r.uri)).toEqual([
      'test://static-binary',
      'test://static-text',
      'test://watched-resource',
    ]);
    expect(registry.templates().map((t) => t.uriTemplate)).toEqual(['test://template/{id}/data']);
  });

  it('lists tools that satisfy tools-list: name rules, description, object inputSchema', () => {
    for (const tool of registryWithFixtures().tools()) {
      expect(tool.name).toMatch(/^[A-Za-z0-9_.-]{1,128}$/);
      expect(tool.description.length).toBeGreaterThan(0);
      expect(tool.inputSchema.type).toBe('object');
    }
  });

  it('lists prompts that all have a description', () => {
    for (const prompt of registryWithFixtures().prompts())
      expect(prompt.description?.length ?? 0).toBeGreaterThan(0);
  });

  it('resolves the template and leaves the not-found URI unclaimed', () => {
    const registry = registryWithFixtures();
    expect(registry.matchTemplate('test://template/123/data')?.vars).toEqual({ id: '123' });
    const missing = 'test://nonexistent-resource-for-conformance-testing';
    expect(registry.resource(missing)).toBeUndefined();
    expect(registry.matchTemplate(missing)).toBeUndefined();
  });

  it('refuses to register twice', () => {
    const registry = registryWithFixtures();
    expect(() => registerConformanceFixtures(registry)).toThrow(/claimed twice/);
  });
});

describe('list-change triggers', () => {
  it('each tool trigger toggles the dynamic tool and fires a tools list change', async () => {
    const registry = registryWithFixtures();
    const changes: CatalogKind[] = [];
    registry.onListChanged((kind) => changes.push(kind));
    const trigger = registry.tool('test_trigger_tool_change')!.spec;
    const { ctx } = createFakeContext();

    await trigger.call({}, ctx);
    expect(registry.tool(DYNAMIC_TOOL_NAME)).toBeDefined();
    const dynamic = registry.tool(DYNAMIC_TOOL_NAME)!.spec;
    expect(dynamic.description.length).toBeGreaterThan(0);
    expect(await dynamic.call({}, ctx)).toEqual({
      content: [{ type: 'text', text: 'The dynamic tool is present.' }],
    });
    await trigger.call({}, ctx);
    expect(registry.tool(DYNAMIC_TOOL_NAME)).toBeUndefined();
    expect(changes).toEqual(['tools', 'tools']);
  });

  it('each prompt trigger toggles the dynamic prompt and fires a prompts list change', async () => {
    const registry = registryWithFixtures();
    const changes: CatalogKind[] = [];
    registry.onListChanged((kind) => changes.push(kind));
    const trigger = registry.tool('test_trigger_prompt_change')!.spec;
    const { ctx } = createFakeContext();

    const added = await trigger.call({}, ctx);
    expect(added.content[0]).toMatchObject({ text: `Added the prompt ${DYNAMIC_PROMPT_NAME}.` });
    expect(registry.prompt(DYNAMIC_PROMPT_NAME)?.description).toBeTruthy();
    const removed = await trigger.call({}, ctx);
    expect(removed.content[0]).toMatchObject({
      text: `Removed the prompt ${DYNAMIC_PROMPT_NAME}.`,
    });
    expect(changes).toEqual(['prompts', 'prompts']);
  });
});

describe('argument validation compiled by the registry', () => {
  it('accepts {} for every no-argument fixture (the harness may omit arguments)', () => {
    const registry = registryWithFixtures();
    const withArgs = new Set([
      'json_schema_2020_12_tool',
      'test_elicitation',
      'test_header_param',
      'test_sampling',
    ]);
    for (const tool of registry.tools()) {
      const issues = registry.tool(tool.name)!.validate({});
      if (withArgs.has(tool.name)) expect(issues, tool.name).not.toBeNull();
      else expect(issues, tool.name).toBeNull();
    }
  });
});
