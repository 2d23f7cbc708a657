import { describe, expect, it } from 'vitest';
import { messageText, partsOf, roleOf, shortText } from './chat-message.js';

describe('chat message helpers', () => {
  it('read string content, model parts and UI parts alike', () => {
    expect(messageText({ role: 'user', content: 'hello' })).toBe('hello');
    expect(
      messageText({
        role: 'assistant',
        content: [
          { type: 'text', text: 'a' },
          { type: 'tool-call', toolName: 'x' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('a\nb');
    expect(messageText({ role: 'user', parts: [{ type: 'text', text: 'ui' }] })).toBe('ui');
    expect(partsOf({ role: 'user', content: [1, null, { type: 'text' }] })).toHaveLength(1);
  });

  it('treat odd shapes as empty rather than throwing', () => {
    for (const odd of [null, undefined, 3, 'text', [], { role: 7 }, { content: { text: 'x' } }]) {
      expect(roleOf(odd)).toBe('');
      expect(messageText(odd)).toBe('');
    }
  });

  it('shortText folds whitespace and cuts at a word', () => {
    expect(shortText('  a \n\t b  ', 10)).toBe('a b');
    expect(shortText('Show me every user who signed up last week', 20)).toBe('Show me every user…');
    expect(shortText('x'.repeat(30), 10)).toBe(`${'x'.repeat(9)}…`);
  });
});
