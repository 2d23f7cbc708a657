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

  it('says what a type error got: a nested list where an element was due, a string, null', () => {
    const check = compileValidator(
      {
        type: 'object',
        properties: {
          vals: { type: 'array', items: { type: ['integer', 'null'] } },
          'a/b': { type: 'integer' },
          flag: { type: 'boolean' },
        },
      },
      'tool t',
    );
    expect(check({ vals: [[1, 2], 3, 'x'] })).toEqual([
      'arguments.vals.0 must be integer,null (got an array)',
      'arguments.vals.2 must be integer,null (got a string)',
    ]);
    expect(check({ 'a/b': 1.5, flag: null })).toEqual([
      'arguments.a~1b must be integer (got a number)',
      'arguments.flag must be boolean (got null)',
    ]);
    expect(check([])).toEqual(['arguments must be object (got an array)']);
  });
});
