import { describe, expect, it } from 'vitest';
import type { PgTypeDescriptor, RoutineDescriptor } from '../../catalog/routines.js';
import { deriveRoutine, RoutineNotSupported, toSnakeCase } from './derive.js';
import { buildCall } from './call.js';

const base = (
  oid: number,
  name: string,
  extra: Partial<PgTypeDescriptor> = {},
): PgTypeDescriptor => ({
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
});
const TYPES = new Map<number, PgTypeDescriptor>([
  [23, base(23, 'int4', { sql: 'integer' })],
  [25, base(25, 'text')],
  [1007, base(1007, '_int4', { sql: 'integer[]', kind: 'array', elementOid: 23 })],
  [2249, base(2249, 'record', { kind: 'pseudo' })],
]);

function routine(extra: Partial<RoutineDescriptor>): RoutineDescriptor {
  return {
    oid: 1,
    schema: 'app',
    name: 'fn',
    kind: 'function',
    volatility: 'stable',
    returnsSet: false,
    returnTypeOid: 23,
    arguments: [],
    securityDefiner: false,
    pinsSearchPath: false,
    executable: true,
    comment: '@mcp',
    annotations: { name: null, description: null, authorize: null, tags: [] },
    ...extra,
  };
}

describe('routine tools', () => {
  it('names tools in snake_case', () => {
    expect(toSnakeCase('getUserById')).toBe('get_user_by_id');
    expect(toSnakeCase('Order Totals')).toBe('order_totals');
  });

  it('builds calls from catalog names and placeholders only', () => {
    const d = deriveRoutine(
      routine({
        name: 'Weird"Name',
        annotations: { name: 'weird', description: null, authorize: null, tags: [] },
        arguments: [
          { name: 'a', mode: 'in', typeOid: 25, hasDefault: false },
          { name: 'rest', mode: 'variadic', typeOid: 1007, hasDefault: true },
        ],
      }),
      TYPES,
      { allowWrites: false },
    );
    expect(d.inputSchema['required']).toEqual(['a']);
    const call = buildCall(d, TYPES, { a: "x'); DROP TABLE t; --", rest: [1, 2] });
    expect(call.text).toBe(
      'SELECT pg_catalog.to_json(r.value) FROM "app"."Weird""Name"("a" => $1::text, VARIADIC "rest" => $2::integer[]) AS r(value)',
    );
    expect(call.values).toEqual(["x'); DROP TABLE t; --", [1, 2]]);
  });

  it('refuses anonymous records and invalid names', () => {
    expect(() =>
      deriveRoutine(routine({ returnTypeOid: 2249 }), TYPES, { allowWrites: false }),
    ).toThrow(RoutineNotSupported);
    const bad = routine({
      annotations: { name: 'has space', description: null, authorize: null, tags: [] },
    });
    expect(() => deriveRoutine(bad, TYPES, { allowWrites: false })).toThrow(/tool name/);
  });

  it('runs VOLATILE read-write only when writes are allowed', () => {
    const v = routine({ volatility: 'volatile' });
    expect(deriveRoutine(v, TYPES, { allowWrites: false }).readOnly).toBe(true);
    expect(deriveRoutine(v, TYPES, { allowWrites: true }).readOnly).toBe(false);
    expect(deriveRoutine(routine({}), TYPES, { allowWrites: true }).readOnly).toBe(true);
  });
});

describe('NpgsqlRest annotations on routine tools', () => {
  it('warns that @rate_limiter does not reach tools/call, keeps the tool, and carries @tags', async () => {
    const { parseRoutineComment } = await import('../../catalog/routines.js');
    const { deriveRoutineTools } = await import('./index.js');
    const annotations = parseRoutineComment('@mcp Totals.\n@rate_limiter per_user\n@tags orders')!;
    expect(annotations).toMatchObject({ rateLimiter: 'per_user', tags: ['orders'] });
    const { tools, warnings } = deriveRoutineTools(
      null as never, // no call is made: deriving needs no database
      { routines: [routine({ name: 'totals', annotations })], types: TYPES },
      { allowWrites: false, statementTimeoutMs: 1000 },
    );
    expect(tools.map((t) => [t.name, t.tags])).toEqual([['totals', ['orders']]]);
    expect(warnings).toEqual([expect.stringContaining('@rate_limiter per_user')]);
    expect(warnings[0]).toContain('rateLimit.requestsPerMinute');
  });
});
