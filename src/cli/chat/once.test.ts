import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { errorMessageOf, networkMessage } from './api-client.js';
import { toJson } from './once.js';
import { oneLine } from './session.js';

describe('toJson (the --json shape)', () => {
  it('gathers the text, every tool step and the metadata of the answer', () => {
    const answer: UIMessage = {
      id: 'a1',
      role: 'assistant',
      metadata: { conversationId: 'conv_x', provider: 'openai', model: 'm' },
      parts: [
        { type: 'step-start' },
        {
          type: 'tool-query_database',
          toolCallId: 't1',
          state: 'output-available',
          input: { query: 'SELECT 1' },
          output: { isError: false, text: '1', structuredContent: { rows: [[1]] } },
        },
        {
          type: 'tool-query_database',
          toolCallId: 't2',
          state: 'output-denied',
          input: { query: 'DELETE FROM t' },
          approval: { id: 'ap1', approved: false },
        },
        { type: 'text', text: 'One.', state: 'done' },
        { type: 'text', text: 'Done.', state: 'done' },
      ],
    };
    expect(toJson('conv_fallback', [answer], null)).toEqual({
      conversationId: 'conv_x',
      text: 'One.\n\nDone.',
      steps: [
        {
          tool: 'query_database',
          input: { query: 'SELECT 1' },
          state: 'output-available',
          output: { isError: false, text: '1', structuredContent: { rows: [[1]] } },
        },
        {
          tool: 'query_database',
          input: { query: 'DELETE FROM t' },
          state: 'output-denied',
          approved: false,
        },
      ],
      metadata: { conversationId: 'conv_x', provider: 'openai', model: 'm' },
      error: null,
    });
  });

  it('keeps the error and the client id when no answer came', () => {
    expect(toJson('conv_1', [], 'no LLM provider is configured')).toEqual({
      conversationId: 'conv_1',
      text: '',
      steps: [],
      metadata: null,
      error: 'no LLM provider is configured',
    });
  });
});

describe('one-line errors', () => {
  it('unwraps JSON {error} bodies and flattens anything else to one line', () => {
    expect(errorMessageOf('{"error":"authentication required"}', 401)).toBe(
      'authentication required',
    );
    expect(errorMessageOf('{"success":false,"error":"Database not found"}')).toBe(
      'Database not found',
    );
    expect(errorMessageOf('<html>\n<body>Bad gateway</body>\n</html>', 502)).toBe(
      '<html> <body>Bad gateway</body> </html>',
    );
    expect(errorMessageOf('', 503)).toBe('the server answered 503');
    expect(oneLine(new Error('{"error":"unknown provider: nope"}'))).toBe('unknown provider: nope');
    expect(oneLine(new Error('first\nsecond'))).toBe('first second');
  });

  it('names the server and the cause of a network failure', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: { code: 'ECONNREFUSED' },
    });
    expect(networkMessage('http://127.0.0.1:9', refused)).toBe(
      'cannot reach http://127.0.0.1:9: ECONNREFUSED',
    );
  });
});
