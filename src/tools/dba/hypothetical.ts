// Hypothetical indexes (HypoPG) live in the backend's memory, not in the catalog: a ROLLBACK
// does not remove them, and the connection goes back to the pool afterwards. So every use is
// bracketed: reset before, work inside a savepoint, and reset after — also after a failure,
// once the savepoint has been rolled back — so the next caller of the connection plans
// without them.
import type pg from 'pg';
import { quoteIdent } from '../../core/sql.js';

export interface IndexSpec {
  schema: string;
  table: string;
  columns: string[];
  /** Access method: btree, hash, gist, gin, brin … */
  using: string;
}

export const INDEX_METHODS = ['btree', 'hash', 'gist', 'gin', 'brin', 'spgist'] as const;

/** An index's table, columns and method, as the tools' input schemas take them. */
export const INDEX_SPEC_PROPERTIES = {
  table: {
    type: 'string',
    minLength: 1,
    description: 'Table name, optionally schema-qualified.',
  },
  columns: {
    type: 'array',
    minItems: 1,
    maxItems: 8,
    items: { type: 'string', minLength: 1 },
  },
  using: { type: 'string', enum: [...INDEX_METHODS], default: 'btree' },
};

/** The CREATE INDEX statement of a spec, every name quoted. */
export function indexDefinition(spec: IndexSpec, concurrently = false): string {
  const cols = spec.columns.map(quoteIdent).join(', ');
  return `CREATE INDEX${concurrently ? ' CONCURRENTLY' : ''} ON ${quoteIdent(spec.schema)}.${quoteIdent(spec.table)} USING ${spec.using} (${cols})`;
}

export interface Hypo {
  /** Creates a hypothetical index; returns its name and estimated size in bytes. */
  create(spec: IndexSpec): Promise<{ name: string; size: number }>;
  /** Drops every hypothetical index of this session. */
  reset(): Promise<void>;
}

/** Runs `work` with a HypoPG session on `client` (inside the call's transaction). */
export async function withHypo<T>(
  client: pg.ClientBase,
  hypopg: string,
  work: (hypo: Hypo) => Promise<T>,
): Promise<T> {
  const reset = async (): Promise<void> => {
    await client.query(`SELECT ${hypopg}.hypopg_reset()`);
  };
  const hypo: Hypo = {
    async create(spec) {
      const { rows } = await client.query<{ name: string; size: string }>(
        `SELECT h.indexname AS name, ${hypopg}.hypopg_relation_size(h.indexrelid)::int8 AS size
         FROM ${hypopg}.hypopg_create_index($1) h`,
        [indexDefinition(spec)],
      );
      return { name: rows[0]?.name ?? '', size: Number(rows[0]?.size ?? 0) };
    },
    reset,
  };
  await reset();
  await client.query('SAVEPOINT pgmcp_hypo');
  try {
    const result = await work(hypo);
    await reset();
    await client.query('RELEASE SAVEPOINT pgmcp_hypo');
    return result;
  } catch (error) {
    await client.query('ROLLBACK TO SAVEPOINT pgmcp_hypo');
    await reset();
    throw error;
  }
}

export interface PlanCost {
  cost: number;
  plan: Record<string, unknown>;
}

/**
 * EXPLAIN (FORMAT JSON) of a statement: its plan and total estimated cost. The ANALYZE option
 * must not be named at all: HypoPG leaves its indexes out of a plan whose EXPLAIN names it,
 * even as ANALYZE false (execute_explain's form).
 */
export async function explainCost(client: pg.ClientBase, sql: string): Promise<PlanCost> {
  const result = await client.query({
    text: `EXPLAIN (FORMAT JSON) ${sql}`,
    queryMode: 'extended',
  } as pg.QueryConfig);
  const value = (result.rows[0] as Record<string, unknown>)['QUERY PLAN'];
  const doc = (typeof value === 'string' ? JSON.parse(value) : value) as {
    Plan: Record<string, unknown>;
  }[];
  const root = doc[0]!;
  return { cost: Number(root.Plan['Total Cost'] ?? 0), plan: root as Record<string, unknown> };
}

/** Names of the indexes a plan uses (hypothetical ones are named `<oid>btree_table_col`). */
export function indexesUsed(plan: unknown): string[] {
  const out = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (typeof node !== 'object' || node === null) return;
    const name = (node as Record<string, unknown>)['Index Name'];
    if (typeof name === 'string') out.add(name);
    for (const value of Object.values(node)) walk(value);
  };
  walk(plan);
  return [...out];
}
