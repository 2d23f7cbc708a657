import { describe, expect, it } from 'vitest';
import { compileValidator } from './validation.js';

describe('compileValidator', () => {
  it('compiles the same schema with an $id again (a reload, a second database)', () => {
    const schema = () => ({
      $id: 'https://example.org/kv.json',
      type: 'object',
      properties: { n: { $ref: '#/$defs/count' } },
      required: ['n'],
      $defs: { count: { type: 'integer', minimum: 0 } },
    });
    const first = compileValidator(schema(), 'tool kv');
    const second = compileValidator(schema(), 'tool kv');
    // Both keep working after ajv has let go of the schema: refs were resolved when compiled.
    for (const check of [first, second]) {
      expect(check({ n: 3 })).toBeNull();
      expect(check({ n: -1 })).toEqual(['arguments.n must be >= 0']);
      expect(check({})).toEqual(["arguments must have required property 'n'"]);
    }
  });
});
