import { describe, expect, it } from 'vitest';
import { asQueryResult, sortRows, toCsv, toTsv } from './table-data';

const result = asQueryResult({
  columns: [
    { name: 'name', type: 'text' },
    { name: 'total', type: 'numeric' },
  ],
  rows: [
    ['b, "quoted"', '10.5'],
    ['a', '9'],
    [null, '100'],
  ],
  rowCount: 3,
  truncated: false,
})!;

describe('table data', () => {
  it('sorts numbers as numbers, text by locale, empty cells last', () => {
    expect(sortRows(result.rows, 1, 'numeric', 'ascending').map((r) => r[1])).toEqual([
      '9',
      '10.5',
      '100',
    ]);
    expect(sortRows(result.rows, 1, 'numeric', 'descending').map((r) => r[1])).toEqual([
      '100',
      '10.5',
      '9',
    ]);
    expect(sortRows(result.rows, 0, 'text', 'ascending').map((r) => r[0])).toEqual([
      'a',
      'b, "quoted"',
      null,
    ]);
    expect(sortRows(result.rows, 0, 'text', 'descending').map((r) => r[0])).toEqual([
      'b, "quoted"',
      'a',
      null,
    ]);
  });

  it('writes RFC 4180 CSV and tab-separated text', () => {
    expect(toCsv(result)).toBe('name,total\r\n"b, ""quoted""",10.5\r\na,9\r\n,100\r\n');
    expect(toTsv(result)).toBe('name\ttotal\nb, "quoted"\t10.5\na\t9\n\t100');
  });

  it('writes no CSV or copied cell a spreadsheet would run as a formula', () => {
    const risky = asQueryResult({
      columns: [{ name: '=HEADER()', type: 'text' }],
      rows: [
        ['=HYPERLINK("http://x","y")'],
        ['+1+2'],
        ['-2+3'],
        ['@SUM(A1)'],
        ['\t=1'],
        ['-12.5'],
        ['+3'],
        ['-1e5'],
        ['a=b'],
      ],
      rowCount: 9,
    })!;
    expect(toCsv(risky).split('\r\n')).toEqual([
      "'=HEADER()",
      '"\'=HYPERLINK(""http://x"",""y"")"',
      "'+1+2",
      "'-2+3",
      "'@SUM(A1)",
      "'\t=1",
      '-12.5',
      '+3',
      '-1e5',
      'a=b',
      '',
    ]);
    // Copy (tab-separated) goes through the same guard; the tab inside a cell becomes a space.
    expect(toTsv(risky).split('\n')).toEqual([
      "'=HEADER()",
      '\'=HYPERLINK("http://x","y")',
      "'+1+2",
      "'-2+3",
      "'@SUM(A1)",
      "' =1",
      '-12.5',
      '+3',
      '-1e5',
      'a=b',
    ]);
  });

  it('accepts rows as objects and refuses what is not a result', () => {
    const fromObjects = asQueryResult({ columns: [{ name: 'x', type: 'int4' }], rows: [{ x: 1 }] });
    expect(fromObjects?.rows).toEqual([[1]]);
    expect(asQueryResult({ text: 'no rows here' })).toBeNull();
    expect(asQueryResult(null)).toBeNull();
  });
});
