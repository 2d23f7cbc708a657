import { describe, expect, it } from 'vitest';
import { normalizeModels, normalizeProviders, toUiMessages } from './endpoints';

describe('endpoint answers', () => {
  it('reads providers and models in either spelling', () => {
    expect(
      normalizeProviders({
        providers: [
          { name: 'openai', type: 'openai', default_model: 'gpt-4o', is_default: true },
          { name: 'local', defaultModel: 'llama3' },
          'bare',
          { nope: 1 },
        ],
      }),
    ).toEqual([
      { name: 'openai', type: 'openai', defaultModel: 'gpt-4o', isDefault: true },
      { name: 'local', defaultModel: 'llama3', isDefault: false },
      { name: 'bare' },
    ]);
    expect(normalizeModels({ models: ['a', { id: 'b' }, { name: 'c' }, 3] })).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('turns stored messages into UI messages', () => {
    const parts = [{ type: 'text', text: 'hi' }];
    expect(
      toUiMessages([
        { id: 'm1', role: 'user', parts },
        { role: 'assistant', content: 'hello' },
        { role: 'tool', content: 'x' },
      ]),
    ).toEqual([
      { id: 'm1', role: 'user', parts },
      { id: 'stored-1', role: 'assistant', parts: [{ type: 'text', text: 'hello' }] },
    ]);
  });
});
