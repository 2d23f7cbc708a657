import { describe, expect, it } from 'vitest';
import type { PromptSpec, ToolSpec } from '../../core/specs.js';
import { WITHHELD } from '../credentials.js';
import {
  screenPromptMetadata,
  screenResourceMetadata,
  screenToolMetadata,
} from './metadata-screen.js';

const MD5 = 'md5' + '0123456789abcdef'.repeat(2);
const call = async () => ({ content: [] });
const tool = (over: Partial<ToolSpec>): ToolSpec => ({
  name: 't',
  description: 'A tool.',
  inputSchema: { type: 'object', properties: { role: { type: 'string' } } },
  call,
  ...over,
});

describe('screenToolMetadata', () => {
  it('returns a tool with nothing to withhold as it is', () => {
    const spec = tool({ tags: ['a'], outputSchema: { type: 'object' } });
    expect(screenToolMetadata(spec)).toBe(spec);
  });

  it('withholds what is only shown, in place, and keeps the rest of the spec', () => {
    const spec = tool({
      title: `hash ${MD5}`,
      description: `Looks up a role.\nhash: ${MD5}`,
      inputSchema: {
        type: 'object',
        description: `for example ${MD5}`,
        properties: {
          role: { type: 'string', default: MD5, examples: [MD5, 'alice'], enum: ['alice', 'bob'] },
        },
      },
      tags: ['roles', MD5],
    });
    const screened = screenToolMetadata(spec);
    expect(screened).toEqual({
      name: 't',
      title: WITHHELD,
      description: `Looks up a role.\n${WITHHELD}`,
      inputSchema: {
        type: 'object',
        description: WITHHELD,
        properties: {
          role: {
            type: 'string',
            default: WITHHELD,
            examples: [WITHHELD, 'alice'],
            enum: ['alice', 'bob'],
          },
        },
      },
      tags: ['roles', WITHHELD],
      call,
    });
    expect(spec.description).toBe(`Looks up a role.\nhash: ${MD5}`); // not touched
  });

  it('refuses a tool whose schema decides with a credential (enum, pattern, property name)', () => {
    const enumOf = tool({
      inputSchema: { type: 'object', properties: { h: { type: 'string', enum: [MD5] } } },
    });
    expect(() => screenToolMetadata(enumOf)).toThrow(/input schema reads like a credential/);
    const pattern = tool({
      outputSchema: { type: 'object', properties: { c: { pattern: '^host=\\S+ password=\\S+$' } } },
    });
    expect(() => screenToolMetadata(pattern)).toThrow(/output schema reads like a credential/);
    // A property named like an annotation is still a schema: its enum decides.
    const named = tool({
      inputSchema: {
        type: 'object',
        properties: {
          description: { type: 'string', enum: [MD5] },
          title: { type: 'string', pattern: 'password=\\S+' },
        },
      },
    });
    expect(() => screenToolMetadata(named)).toThrow(/input schema reads like a credential/);
    const nested = tool({
      inputSchema: {
        type: 'object',
        $defs: { default: { const: { deep: [MD5] } } },
        properties: { x: { $ref: '#/$defs/default' } },
      },
    });
    expect(() => screenToolMetadata(nested)).toThrow(/input schema reads like a credential/);
    const key = tool({
      inputSchema: { type: 'object', properties: { [MD5]: { type: 'string' } } },
    });
    expect(() => screenToolMetadata(key)).toThrow(/not served/);
  });
});

describe('screenPromptMetadata and screenResourceMetadata', () => {
  const get = async () => ({ messages: [] });

  it('withholds descriptions, and passes what a pgmi row left null or out', () => {
    const args = [
      { name: 'role', description: `e.g. ${MD5}` },
      { name: 'other', description: null },
      { description: 'no name' },
    ] as unknown as PromptSpec['arguments'];
    const screened = screenPromptMetadata({ name: 'p', description: MD5, arguments: args, get });
    expect(screened.description).toBe(WITHHELD);
    expect(screened.arguments).toEqual([
      { name: 'role', description: WITHHELD },
      { name: 'other', description: null },
      { description: 'no name' },
    ]);
    const plain: PromptSpec = { name: 'p', arguments: [{ name: 'role' }], get };
    expect(screenPromptMetadata(plain)).toBe(plain);
  });

  it('refuses a prompt whose argument name reads like a credential', () => {
    expect(() => screenPromptMetadata({ name: 'p', arguments: [{ name: MD5 }], get })).toThrow(
      /argument name reads like a credential/,
    );
  });

  it('refuses a handler whose name or URI reads like a credential', () => {
    const read = async () => ({ contents: [] });
    expect(() => screenToolMetadata(tool({ name: MD5 }))).toThrow(/^its name reads like/);
    expect(() => screenResourceMetadata({ uri: `x://${MD5}`, name: 'a', read })).toThrow(
      /^its URI reads like/,
    );
  });

  it('withholds a resource description line', () => {
    const read = async () => ({ contents: [] });
    const spec = { uri: 'x://a', name: 'a', description: `one\npassword=hunter2 host=db`, read };
    expect(screenResourceMetadata(spec)).toEqual({ ...spec, description: `one\n${WITHHELD}` });
  });
});
