import { beforeAll, describe, expect, it } from 'vitest';
import { tryParse } from '../common/parse-tree.js';
import { loadSqlParser } from '../sql-guard.js';
import {
  candidatesOf,
  columnUses,
  coveredBy,
  leadingColumns,
  mergeCandidates,
  type TableInScope,
} from './candidates.js';

const orders: TableInScope = {
  schema: 'public',
  name: 'orders',
  refs: ['o', 'orders'],
  columns: new Set(['id', 'customer_id', 'status', 'created_at']),
};
const customers: TableInScope = {
  schema: 'public',
  name: 'customers',
  refs: ['c', 'customers'],
  columns: new Set(['id', 'region']),
};

function candidates(sql: string, tables: TableInScope[]): string[] {
  const parsed = tryParse(sql);
  if (!parsed.ok) throw new Error(parsed.message);
  return candidatesOf(columnUses(parsed.tree, tables)).map((c) => `${c.table}(${c.columns})`);
}

describe('index candidates from a statement', () => {
  beforeAll(() => loadSqlParser());

  it('equality columns first, then a range or sort column after them', () => {
    expect(
      candidates(
        "SELECT id FROM orders WHERE customer_id = $1 AND created_at > '2026-01-01' ORDER BY status",
        [orders],
      ),
    ).toEqual([
      'orders(customer_id)',
      'orders(created_at)',
      'orders(status)',
      'orders(customer_id,created_at)',
      'orders(customer_id,status)',
    ]);
  });

  it('ties columns to tables by alias, and unqualified ones to the one table that has them', () => {
    expect(
      candidates(
        "SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id WHERE region = 'north'",
        [orders, customers],
      ),
    ).toEqual([
      'customers(id)',
      'customers(region)',
      'customers(id,region)',
      'orders(customer_id)',
    ]);
  });

  it('leaves out ambiguous columns, IN lists and IS NULL count as equality', () => {
    expect(
      candidates('SELECT 1 FROM orders o, customers c WHERE id = 1', [orders, customers]),
    ).toEqual([]);
    expect(
      candidates('SELECT 1 FROM orders WHERE status IN ($1, $2) AND customer_id IS NULL', [orders]),
    ).toEqual(['orders(status)', 'orders(customer_id)', 'orders(status,customer_id)']);
  });

  it('never proposes what the leading columns of an existing index cover', () => {
    const existing = [
      { schema: 'public', table: 'orders', columns: leadingColumns(['customer_id', 'created_at']) },
      { schema: 'public', table: 'orders', columns: leadingColumns([null, 'status']) },
    ];
    const spec = (columns: string[]) => ({
      schema: 'public',
      table: 'orders',
      columns,
      using: 'btree',
    });
    expect(coveredBy(spec(['customer_id']), existing)).toBe(true);
    expect(coveredBy(spec(['customer_id', 'created_at']), existing)).toBe(true);
    expect(coveredBy(spec(['created_at']), existing)).toBe(false);
    expect(coveredBy(spec(['status']), existing)).toBe(false); // behind an expression
    expect(
      mergeCandidates(
        [[spec(['customer_id']), spec(['status'])], [spec(['status'])]],
        existing,
      ).map((s) => s.columns),
    ).toEqual([['status']]);
  });
});
