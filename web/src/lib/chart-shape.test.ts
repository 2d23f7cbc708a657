import { describe, expect, it } from 'vitest';
import { chartShapeOf, niceTicks } from './chart-shape';

describe('chart shape', () => {
  it('draws a series over time as a line, in date order', () => {
    const shape = chartShapeOf({
      columns: [
        { name: 'month', type: 'date' },
        { name: 'orders', type: 'bigint' },
      ],
      rows: [
        ['2024-02-01', '7'],
        ['2024-01-01', '5'],
        ['2024-03-01T00:00:00Z', '9'],
      ],
    });
    expect(shape).toEqual({
      kind: 'line',
      xLabel: 'month',
      labels: ['2024-01', '2024-02', '2024-03'],
      series: [{ name: 'orders', values: [5, 7, 9] }],
    });
  });

  it('draws categories with a number as bars', () => {
    const shape = chartShapeOf({
      columns: [
        { name: 'status', type: 'text' },
        { name: 'count', type: 'integer' },
      ],
      rows: [
        ['open', 3],
        ['closed', 12],
      ],
    });
    expect(shape?.kind).toBe('bar');
    expect(shape?.series[0]?.values).toEqual([3, 12]);
  });

  it('draws an increasing number against values as a line', () => {
    const shape = chartShapeOf({
      columns: [
        { name: 'year', type: 'int4' },
        { name: 'revenue', type: 'numeric' },
        { name: 'cost', type: 'numeric' },
      ],
      rows: [
        [2022, '1.5'],
        [2023, '2.5'],
      ].map((r) => [...r, '1']),
    });
    expect(shape?.kind).toBe('line');
    expect(shape?.series.map((s) => s.name)).toEqual(['revenue', 'cost']);
  });

  it('leaves rows that are neither a series nor categories as a table', () => {
    // One row, no numbers, or ids in no order: no chart.
    expect(
      chartShapeOf({
        columns: [
          { name: 'a', type: 'text' },
          { name: 'n', type: 'int4' },
        ],
        rows: [['x', 1]],
      }),
    ).toBeNull();
    expect(
      chartShapeOf({
        columns: [
          { name: 'a', type: 'text' },
          { name: 'b', type: 'text' },
        ],
        rows: [
          ['x', 'y'],
          ['z', 'w'],
        ],
      }),
    ).toBeNull();
    expect(
      chartShapeOf({
        columns: [
          { name: 'id', type: 'int4' },
          { name: 'n', type: 'int4' },
        ],
        rows: [
          [3, 1],
          [1, 2],
        ],
      }),
    ).toBeNull();
  });

  it('picks round ticks covering the range', () => {
    expect(niceTicks(0, 9)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(0, 100, 4)).toEqual([0, 50, 100]);
  });
});
