// query_database's answer is built in one pass: the TSV text and the structured rows from the
// same masked and screened values, the rows read off the wire reused as the structured rows.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { PipelineResult } from '../../db/pipeline.js';
import { formatResult } from './query-format.js';

const field = (name: string, dataTypeID: number, tableID = 0, columnID = 0): pg.FieldDef =>
  ({
    name,
    dataTypeID,
    tableID,
    columnID,
    dataTypeSize: -1,
    dataTypeModifier: -1,
    format: 'text',
  }) as pg.FieldDef;

// Only built-in types below: the type names are known without asking the database.
const lookup = {
  query: () => Promise.reject(new Error('no lookup expected')),
};

describe('formatResult', () => {
  it('builds the text and the structured rows in one pass, without a second copy of the rows', async () => {
    const when = new Date('2026-11-28T05:00:00.000Z');
    const rows: unknown[][] = [
      [1, 'a\tb\nc\\d', 'alice@example.com', when, Buffer.from('hi')],
      [2, null, 'bob@example.com', null, null],
      [3, 'md5' + '0123456789abcdef'.repeat(2), null, when, null],
    ];
    const result: PipelineResult = {
      fields: [
        field('id', 23),
        field('note', 25),
        field('email', 25, 4242, 3),
        field('at', 1184),
        field('raw', 17),
      ],
      rows,
      truncatedBy: 'rows',
      valuesCut: false,
      command: 'SELECT',
      rowCount: 3,
    };
    const answer = await formatResult(
      lookup,
      result,
      {
        attrs: new Set(['4242:3']),
        referenced: true,
        computed: [false, false, true, false, false],
      },
      { database: 'db', offset: 10, maxResultBytes: 1000 },
    );
    const text = answer.content[0]!.type === 'text' ? answer.content[0]!.text : '';
    expect(text.split('\n')).toEqual([
      'Database: db',
      '',
      'id\tnote\temail\tat\traw',
      '1\ta\\tb\\nc\\\\d\t****\t2026-11-28T05:00:00.000Z\t\\\\x6869',
      '2\t\t****\t\t',
      '3\t[credential withheld]\t\t2026-11-28T05:00:00.000Z\t',
      '',
      '3 rows (from offset 10); more available — use offset=13.',
      expect.stringMatching(/^1 value withheld as /),
    ]);
    const structured = answer.structuredContent as { rows: unknown[][]; nextOffset: number };
    expect(structured.rows).toEqual([
      [1, 'a\tb\nc\\d', '****', '2026-11-28T05:00:00.000Z', '\\x6869'],
      [2, null, '****', null, null],
      [3, '[credential withheld]', null, '2026-11-28T05:00:00.000Z', null],
    ]);
    expect(structured.nextOffset).toBe(13);
    // The rows read off the wire are the structured rows: one copy of the result, not two.
    expect(structured.rows).toBe(rows);
  });
});
