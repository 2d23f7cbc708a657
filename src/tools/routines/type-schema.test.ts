// Arrays in the type table: a result may have up to six dimensions whatever the declared type
// (PostgreSQL keeps no dimension count in the type), so its schema nests without $ref; an
// argument stays one-dimensional.
import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { PgTypeDescriptor } from '../../catalog/routines.js';
import { MAX_ARRAY_DIMENSIONS, schemaForType } from './type-schema.js';

const require = createRequire(import.meta.url);
const addFormats = require('ajv-formats') as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

const type = (oid: number, name: string, extra: Partial<PgTypeDescriptor> = {}) =>
  [
    oid,
    {
      oid,
      schema: 'pg_catalog',
      name,
      sql: name,
      kind: 'base',
      elementOid: null,
      baseOid: null,
      typmod: -1,
      labels: [],
      attributes: [],
      ...extra,
    } satisfies PgTypeDescriptor,
  ] as const;
const TYPES = new Map<number, PgTypeDescriptor>([
  type(23, 'int4', { sql: 'integer' }),
  type(20, 'int8', { sql: 'bigint' }),
  type(25, 'text'),
  type(114, 'json'),
  type(1007, '_int4', { sql: 'integer[]', kind: 'array', elementOid: 23 }),
  type(1016, '_int8', { sql: 'bigint[]', kind: 'array', elementOid: 20 }),
  type(1009, '_text', { sql: 'text[]', kind: 'array', elementOid: 25 }),
  type(199, '_json', { sql: 'json[]', kind: 'array', elementOid: 114 }),
  type(9000, 'pair', {
    schema: 'app',
    sql: 'app.pair',
    kind: 'composite',
    attributes: [
      { name: 'id', typeOid: 23, typmod: -1 },
      { name: 'grid', typeOid: 1007, typmod: -1 },
    ],
  }),
  type(9001, '_pair', { schema: 'app', sql: 'app.pair[]', kind: 'array', elementOid: 9000 }),
]);

const valid = (oid: number, direction: 'input' | 'output', value: unknown): boolean =>
  ajv.validate(schemaForType(TYPES, oid, direction), value);

/** A value of `dimensions` nested arrays, two items a level, around `leaf`. */
const nested = (dimensions: number, leaf: unknown): unknown =>
  dimensions === 0 ? leaf : [nested(dimensions - 1, leaf), nested(dimensions - 1, leaf)];

/** How many array levels deep a schema's items go. */
function levels(schema: Record<string, unknown>): number {
  if (schema['type'] !== 'array') return 0;
  const items = schema['items'] as Record<string, unknown>;
  const choices = (items['anyOf'] as Record<string, unknown>[] | undefined) ?? [items];
  return 1 + Math.max(...choices.map(levels));
}

describe('array schemas', () => {
  it('a result: elements or deeper arrays, up to six dimensions, spelled out without $ref', () => {
    const schema = schemaForType(TYPES, 1007, 'output');
    expect(JSON.stringify(schema)).not.toContain('$ref');
    expect(levels(schema)).toBe(MAX_ARRAY_DIMENSIONS);
    expect(MAX_ARRAY_DIMENSIONS).toBe(6);
    for (let d = 1; d <= 6; d++) expect(valid(1007, 'output', nested(d, 7)), `${d}-D`).toBe(true);
    expect(valid(1007, 'output', nested(7, 7))).toBe(false);
    expect(valid(1007, 'output', [])).toBe(true);
    expect(
      valid(1007, 'output', [
        [1, null],
        [null, 4],
      ]),
    ).toBe(true);
    // The element type is checked on every level.
    expect(valid(1007, 'output', [1, 'x'])).toBe(false);
    expect(valid(1007, 'output', [1.5])).toBe(false);
    expect(valid(1007, 'output', [[1], [2 ** 31]])).toBe(false);
    expect(valid(1007, 'output', nested(6, 'x'))).toBe(false);
    expect(valid(1007, 'output', [{ a: 1 }])).toBe(false);
    // Compact: the element once per level, its description once.
    expect(JSON.stringify(schema).length).toBeLessThan(800);
  });

  it('a one-dimensional result is held to the element schema as before', () => {
    const schema = schemaForType(TYPES, 1007, 'output');
    const items = schema['items'] as { anyOf: Record<string, unknown>[] };
    expect(items.anyOf[0]).toEqual({
      type: ['integer', 'null'],
      minimum: -2147483648,
      maximum: 2147483647,
    });
  });

  it('int8 and text arrays of several dimensions: strings past 2^53, NULLs', () => {
    expect(
      valid(1016, 'output', [
        [1, '9007199254740993'],
        ['-9223372036854775808', null],
      ]),
    ).toBe(true);
    expect(valid(1016, 'output', [['12x']])).toBe(false);
    const int8 = JSON.stringify(schemaForType(TYPES, 1016, 'output'));
    expect(int8.match(/int8: a JSON integer/g)).toHaveLength(1);
    expect(valid(1009, 'output', [[['a', null]], [[null, 'b']]])).toBe(true);
    expect(valid(1009, 'output', [['a', 1]])).toBe(false);
  });

  it('a composite with an array field, and an array of composites, nest too', () => {
    expect(
      valid(9000, 'output', {
        id: 1,
        grid: [
          [1, 2],
          [3, 4],
        ],
      }),
    ).toBe(true);
    expect(valid(9000, 'output', { id: 1, grid: [['x']] })).toBe(false);
    expect(valid(9001, 'output', [[{ id: 1, grid: [1] }], [null]])).toBe(true);
    expect(valid(9001, 'output', [[{ id: 1 }]])).toBe(false);
  });

  it('json[]: any JSON element already, so one level', () => {
    expect(schemaForType(TYPES, 199, 'output')).toEqual({
      type: 'array',
      items: { description: 'any JSON value' },
    });
    expect(valid(199, 'output', [[1, { a: [2] }]])).toBe(true);
  });

  it('an argument is one-dimensional: a nested list is refused', () => {
    expect(schemaForType(TYPES, 1007, 'input')).toEqual({
      type: 'array',
      items: { type: ['integer', 'null'], minimum: -2147483648, maximum: 2147483647 },
    });
    expect(valid(1007, 'input', [1, null, 3])).toBe(true);
    expect(
      valid(1007, 'input', [
        [1, 2],
        [3, 4],
      ]),
    ).toBe(false);
    expect(valid(1016, 'input', [['1']])).toBe(false);
  });
});
