import { describe, expect, it } from 'vitest';
import { chartShapeOf } from '../../src/lib/chart-shape';
import { resultOf } from './result-data';

describe('resultOf', () => {
  it("takes query_database's columns and rows as they are", () => {
    const result = resultOf({
      columns: [{ name: 'n', type: 'integer' }],
      rows: [[1], [2]],
      rowCount: 2,
      truncated: true,
      nextOffset: 2,
    });
    expect(result).toMatchObject({ columns: [{ name: 'n', type: 'integer' }], nextOffset: 2 });
  });

  it("types a routine's columns by its output schema, else by the values", () => {
    const schema = {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              region: { type: ['string', 'null'] },
              total: { type: ['number', 'string'] },
              day: { type: 'string', anyOf: [{ format: 'date' }, { pattern: 'x' }] },
            },
          },
        },
      },
    };
    const items = [
      { region: 'East', total: '20970.00', day: '2024-01-01', n: 3 },
      { region: 'North', total: '21450.00', day: '2024-01-02', n: 4 },
    ];
    const result = resultOf({ items, truncated: false }, schema)!;
    expect(result.columns).toEqual([
      { name: 'region', type: 'text' },
      { name: 'total', type: 'numeric' },
      { name: 'day', type: 'date' },
      { name: 'n', type: 'numeric' },
    ]);
    expect(result.rows[1]).toEqual(['North', '21450.00', '2024-01-02', 4]);
    expect(result.nextOffset).toBeNull();
    // Typed so, the rows chart as the web client would chart them.
    expect(chartShapeOf(result)?.kind).toBe('line');
  });

  it('shows a set of plain values as one column, and refuses what is not rows', () => {
    expect(resultOf({ items: [1, 2, 3] })?.columns).toEqual([{ name: 'value', type: 'numeric' }]);
    expect(resultOf({ value: 1 })).toBeNull();
    expect(resultOf(null)).toBeNull();
  });
});
