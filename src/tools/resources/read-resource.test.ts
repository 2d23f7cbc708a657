import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../core/errors.js';
import { createFakeContext } from '../../testing/fake-context.js';
import { createRegistry } from '../registry.js';
import { compileUriTemplate } from '../uri-template.js';
import { createReadResourceTool, registryReader } from './read-resource.js';

function setup() {
  const registry = createRegistry();
  registry.addResource({
    uri: 'pg://system_info',
    name: 'system_info',
    description: 'Server facts.',
    mimeType: 'application/json',
    read: async () => ({
      contents: [{ uri: 'pg://system_info', mimeType: 'application/json', text: '{"v":1}' }],
    }),
  });
  registry.addTemplate({
    uriTemplate: 'pg://table/{schema}/{table}',
    name: 'table',
    description: 'One table.',
    mimeType: 'application/json',
    match: compileUriTemplate('pg://table/{schema}/{table}'),
    read: async (uri, vars) => ({
      contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(vars) }],
    }),
  });
  const tool = createReadResourceTool(registry, registryReader(registry));
  registry.addTool(tool);
  return { registry, tool };
}

describe('read_resource', () => {
  it('reads resources and templates through the registry', async () => {
    const { tool } = setup();
    const { ctx } = createFakeContext();
    expect(await tool.call({ uri: 'pg://system_info' }, ctx)).toEqual({
      content: [{ type: 'text', text: '{"v":1}' }],
    });
    expect(await tool.call({ uri: 'pg://table/public/my%20table' }, ctx)).toEqual({
      content: [{ type: 'text', text: '{"schema":"public","table":"my table"}' }],
    });
  });

  it('lists resources and templates', async () => {
    const { tool } = setup();
    const result = await tool.call({ list: true }, createFakeContext().ctx);
    expect((result.content[0] as { text: string }).text).toBe(
      [
        'Resources:',
        'uri\tname\tdescription',
        'pg://system_info\tsystem_info\tServer facts.',
        '',
        'Resource templates (fill in the {variables}):',
        'uri_template\tname\tdescription',
        'pg://table/{schema}/{table}\ttable\tOne table.',
      ].join('\n'),
    );
    expect(result.structuredContent).toEqual({
      resources: [
        {
          uri: 'pg://system_info',
          name: 'system_info',
          mimeType: 'application/json',
          description: 'Server facts.',
        },
      ],
      templates: [
        {
          uriTemplate: 'pg://table/{schema}/{table}',
          name: 'table',
          mimeType: 'application/json',
          description: 'One table.',
        },
      ],
    });
  });

  it('says what is wrong with a missing or unknown URI', async () => {
    const { tool } = setup();
    const { ctx } = createFakeContext();
    await expect(tool.call({ uri: 'pg://nothing' }, ctx)).rejects.toMatchObject({
      code: ErrorCodes.RESOURCE_NOT_FOUND,
      category: 'not_found',
      details: { uri: 'pg://nothing' },
    });
    await expect(tool.call({}, ctx)).rejects.toMatchObject({ category: 'input' });
  });

  it('has a closed input schema and read-only annotations', () => {
    const { tool } = setup();
    expect(tool.inputSchema['additionalProperties']).toBe(false);
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
  });
});
