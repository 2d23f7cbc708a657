import { describe, expect, it } from 'vitest';
import {
  analyzePlan,
  nodeLabel,
  renderPlanText,
  type ExplainDocument,
  type PlanNode,
} from './explain-analysis.js';

// Plans as EXPLAIN (FORMAT JSON, ANALYZE, BUFFERS) prints them (PostgreSQL 15), trimmed to
// the keys the analysis reads.
const seqScan = (over: Partial<PlanNode> = {}): PlanNode => ({
  'Node Type': 'Seq Scan',
  'Parent Relationship': 'Outer',
  'Parallel Aware': false,
  'Relation Name': 'big',
  Alias: 'b',
  'Startup Cost': 0,
  'Total Cost': 1218,
  'Plan Rows': 5,
  'Plan Width': 45,
  'Actual Startup Time': 0.006,
  'Actual Total Time': 2.034,
  'Actual Rows': 500,
  'Actual Loops': 1,
  Filter: '((v = 1) AND (w = 1))',
  'Rows Removed by Filter': 49500,
  'Shared Hit Blocks': 468,
  'Shared Read Blocks': 0,
  ...over,
});

const nestedLoopPlan: ExplainDocument = {
  Plan: {
    'Node Type': 'Sort',
    'Startup Cost': 1397.02,
    'Total Cost': 1397.03,
    'Plan Rows': 1,
    'Plan Width': 49,
    'Actual Startup Time': 82.942,
    'Actual Total Time': 82.946,
    'Actual Rows': 20,
    'Actual Loops': 1,
    'Sort Key': ['b.t'],
    'Sort Method': 'quicksort',
    'Sort Space Used': 26,
    'Sort Space Type': 'Memory',
    Plans: [
      {
        'Node Type': 'Nested Loop',
        'Parent Relationship': 'Outer',
        'Join Type': 'Inner',
        'Startup Cost': 0,
        'Total Cost': 1397.01,
        'Plan Rows': 1,
        'Plan Width': 49,
        'Actual Startup Time': 0.014,
        'Actual Total Time': 82.897,
        'Actual Rows': 20,
        'Actual Loops': 1,
        'Join Filter': '(s.id = b.id)',
        'Rows Removed by Join Filter': 999980,
        Plans: [
          seqScan({
            'Relation Name': 'small',
            Alias: 's',
            'Total Cost': 29,
            'Plan Rows': 2000,
            'Actual Rows': 2000,
            Filter: undefined,
            'Rows Removed by Filter': undefined,
          }),
          {
            'Node Type': 'Materialize',
            'Parent Relationship': 'Inner',
            'Startup Cost': 0,
            'Total Cost': 1218.03,
            'Plan Rows': 5,
            'Plan Width': 45,
            'Actual Startup Time': 0,
            'Actual Total Time': 0.017,
            'Actual Rows': 500,
            'Actual Loops': 2000,
            Plans: [seqScan()],
          },
        ],
      },
    ],
  },
  'Planning Time': 0.412,
  'Execution Time': 83.01,
};

const rows: Record<string, number> = { big: 50_000, small: 2_000 };
const tableRows = (name: string): number | null => rows[name] ?? null;

describe('explain analysis', () => {
  it('finds the large sequential scan, the misestimate and the nested loop', () => {
    const findings = analyzePlan(nestedLoopPlan, { tableRows });
    expect(findings.map((f) => f.kind)).toEqual([
      'seq_scan',
      'misestimate',
      'nested_loop',
      'summary',
    ]);
    const [scan, mis, loop, summary] = findings;
    expect(scan!.message).toBe(
      'Sequential scan on big (~50,000 rows) with Filter ((v = 1) AND (w = 1)) keeps 500 rows; an index on the filtered column(s) would let PostgreSQL skip the rest.',
    );
    expect(scan!.node).toBe('Seq Scan on big b');
    // The scan is misjudged (5 vs 500); the Materialize above it only inherits the error.
    expect(mis!.node).toBe('Seq Scan on big b');
    expect(mis!.message).toBe(
      'Seq Scan on big b: estimated 5 rows, actually 500 (100× more). Stale or missing statistics mislead the planner: run ANALYZE on big, or add extended statistics (CREATE STATISTICS) for correlated columns.',
    );
    expect(loop!.node).toBe('Nested Loop');
    expect(loop!.message).toContain('runs its inner side (Materialize) 2,000 times');
    expect(loop!.message).toContain('not an index lookup');
    expect(summary).toEqual({
      kind: 'summary',
      message:
        'Total estimated cost 1,397.03 for ~1 rows; actual 20 rows; planning 0.41 ms; execution 83.01 ms.',
      node: 'Sort',
    });
  });

  it('judges table size by the catalog estimate, else by what the scan read', () => {
    const small = analyzePlan(
      { Plan: seqScan({ 'Relation Name': 'small', Alias: 'small' }) },
      {
        tableRows,
        misestimateFactor: 1e9,
      },
    );
    expect(small.map((f) => f.kind)).toEqual(['summary']);
    const unknown = analyzePlan(
      { Plan: seqScan({ 'Relation Name': 'other' }) },
      {
        tableRows,
        misestimateFactor: 1e9,
      },
    );
    expect(unknown[0]).toMatchObject({ kind: 'seq_scan' });
    expect(unknown[0]!.message).toContain('(~50,000 rows)');
    const lowered = analyzePlan(
      { Plan: seqScan({ 'Relation Name': 'small' }) },
      {
        tableRows,
        largeTableRows: 1_000,
        misestimateFactor: 1e9,
      },
    );
    expect(lowered[0]!.kind).toBe('seq_scan');
  });

  it('says a scan without a filter reads the whole table, and estimates without ANALYZE', () => {
    const plan: ExplainDocument = {
      Plan: {
        'Node Type': 'Seq Scan',
        'Relation Name': 'big',
        Alias: 'big',
        'Startup Cost': 0,
        'Total Cost': 968,
        'Plan Rows': 50000,
        'Plan Width': 45,
      },
    };
    const findings = analyzePlan(plan, { tableRows });
    expect(findings[0]!.message).toContain('without a filter: it reads the whole table');
    expect(findings[1]!.message).toBe('Total estimated cost 968 for ~50,000 rows.');
    // Without ANALYZE there are no misestimates and no per-loop numbers.
    expect(findings.some((f) => f.kind === 'misestimate')).toBe(false);
  });

  it('reports sorts and hashes that spill to disk', () => {
    const plan: ExplainDocument = {
      Plan: {
        'Node Type': 'Hash Join',
        'Join Type': 'Inner',
        'Total Cost': 5000,
        'Plan Rows': 10,
        'Actual Rows': 10,
        'Actual Loops': 1,
        'Hash Cond': '(c.t = b.t)',
        Plans: [
          {
            'Node Type': 'Sort',
            'Parent Relationship': 'Outer',
            'Plan Rows': 50000,
            'Actual Rows': 50000,
            'Actual Loops': 1,
            'Sort Key': ['c.t'],
            'Sort Method': 'external merge',
            'Sort Space Used': 2976,
            'Sort Space Type': 'Disk',
          },
          {
            'Node Type': 'Hash',
            'Parent Relationship': 'Inner',
            'Plan Rows': 500,
            'Actual Rows': 500,
            'Actual Loops': 1,
            'Hash Buckets': 1024,
            'Original Hash Buckets': 1024,
            'Hash Batches': 4,
            'Original Hash Batches': 1,
            'Peak Memory Usage': 40,
          },
        ],
      },
      'Execution Time': 40.5,
    };
    const findings = analyzePlan(plan, { tableRows });
    expect(findings.map((f) => f.kind)).toEqual(['sort_spill', 'hash_spill', 'summary']);
    expect(findings[0]!.message).toBe(
      'Sort spilled to disk (external merge, 2,976 kB on c.t). Raise work_mem for this query, sort fewer rows (filter first, LIMIT), or add an index that returns rows in this order.',
    );
    expect(findings[1]!.message).toContain('needed 4 batches (more than planned; spilled to disk)');
    expect(findings[2]!.node).toBe('Hash Join');
  });

  it('ignores nodes that never ran and small misestimates', () => {
    const plan: ExplainDocument = {
      Plan: {
        'Node Type': 'Append',
        'Plan Rows': 10,
        'Actual Rows': 10,
        'Actual Loops': 1,
        Plans: [
          { 'Node Type': 'Result', 'Plan Rows': 1, 'Actual Rows': 0, 'Actual Loops': 0 },
          { 'Node Type': 'Result', 'Plan Rows': 2, 'Actual Rows': 60, 'Actual Loops': 1 },
        ],
      },
    };
    expect(analyzePlan(plan, { tableRows }).map((f) => f.kind)).toEqual(['summary']);
  });

  it('names nodes the way the text format does', () => {
    expect(
      nodeLabel({
        'Node Type': 'Index Scan',
        'Index Name': 'big_id_idx',
        'Relation Name': 'big',
        Alias: 'b',
      }),
    ).toBe('Index Scan using big_id_idx on big b');
    expect(nodeLabel({ 'Node Type': 'Hash Join', 'Join Type': 'Left' })).toBe('Hash Left Join');
    expect(nodeLabel({ 'Node Type': 'Nested Loop', 'Join Type': 'Anti' })).toBe(
      'Nested Loop Anti Join',
    );
    expect(nodeLabel({ 'Node Type': 'Aggregate', Strategy: 'Hashed' })).toBe('HashAggregate');
    expect(
      nodeLabel({
        'Node Type': 'Seq Scan',
        'Parallel Aware': true,
        'Relation Name': 't',
        Alias: 't',
      }),
    ).toBe('Parallel Seq Scan on t');
  });

  it('renders the plan as indented text', () => {
    expect(renderPlanText(nestedLoopPlan)).toBe(
      [
        'Sort  (cost=1397.02..1397.03 rows=1 width=49) (actual time=82.942..82.946 rows=20 loops=1)',
        '  Sort Key: b.t',
        '  Sort Method: quicksort  Memory: 26kB',
        '  ->  Nested Loop  (cost=0.00..1397.01 rows=1 width=49) (actual time=0.014..82.897 rows=20 loops=1)',
        '        Join Filter: (s.id = b.id)',
        '        Rows Removed by Join Filter: 999980',
        '        ->  Seq Scan on small s  (cost=0.00..29.00 rows=2000 width=45) (actual time=0.006..2.034 rows=2000 loops=1)',
        '              Buffers: shared hit=468',
        '        ->  Materialize  (cost=0.00..1218.03 rows=5 width=45) (actual time=0.000..0.017 rows=500 loops=2000)',
        '              ->  Seq Scan on big b  (cost=0.00..1218.00 rows=5 width=45) (actual time=0.006..2.034 rows=500 loops=1)',
        '                    Filter: ((v = 1) AND (w = 1))',
        '                    Rows Removed by Filter: 49500',
        '                    Buffers: shared hit=468',
        'Planning Time: 0.412 ms',
        'Execution Time: 83.010 ms',
      ].join('\n'),
    );
  });
});
