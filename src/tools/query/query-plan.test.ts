// rowsWritten on plan shapes the PostgreSQL 15 of the integration tests does not produce.
import { describe, expect, it } from 'vitest';
import { rowsWritten, type PlanNode } from './query-plan.js';

const scan = (rows: number, relation: string): PlanNode => ({
  'Node Type': 'Seq Scan',
  'Parent Relationship': relation,
  'Plan Rows': rows,
});

describe('rowsWritten', () => {
  it('sums the per-table inputs of an inherited UPDATE before PostgreSQL 14', () => {
    const plan: PlanNode = {
      'Node Type': 'ModifyTable',
      'Plan Rows': 0,
      Plans: [
        { 'Node Type': 'Result', 'Parent Relationship': 'InitPlan', 'Plan Rows': 1 },
        scan(10, 'Member'),
        scan(20, 'Member'),
      ],
    };
    expect(rowsWritten(plan)).toBe(30);
  });

  it('counts every ModifyTable of the statement, those of data-modifying WITH clauses too', () => {
    const plan: PlanNode = {
      'Node Type': 'ModifyTable',
      'Plan Rows': 0,
      Plans: [
        {
          'Node Type': 'ModifyTable',
          'Parent Relationship': 'InitPlan',
          'Plan Rows': 5,
          Plans: [scan(5, 'Outer')],
        },
        scan(4, 'Outer'),
      ],
    };
    expect(rowsWritten(plan)).toBe(9);
  });

  it('takes the top node without a ModifyTable (CREATE TABLE AS, SELECT INTO)', () => {
    expect(rowsWritten(scan(12, 'Outer'))).toBe(12);
    expect(rowsWritten({})).toBe(0);
  });
});
