// Who judges what a statement reads: the access policy and the credential wall as one judge of
// relations and columns, and the names a parse tree reads (relations) and calls (functions).
import type { AccessPolicy } from '../access-policy.js';
import { SECRET_RELATION_NAMES, secretColumn } from '../credentials.js';
import { nameParts, visitNodes } from '../common/parse-tree.js';

/** The policy and the credential wall, as one judge of relations and columns. */
export interface Judge {
  policy: AccessPolicy;
  /** Why the table may not be read at all, or null. */
  tableDenied(schema: string, table: string): string | null;
  /** Why the column may not be read, or null (masked columns are not hidden). */
  columnHidden(schema: string, table: string, column: string): string | null;
  columnMasked(schema: string, table: string, column: string): boolean;
}

export function createJudge(policy: AccessPolicy): Judge {
  return {
    policy,
    tableDenied(schema, table) {
      if (!policy.active) return null;
      if (!policy.tableVisible(schema, table))
        return `${schema}.${table}, which the access policy denies`;
      // The planner's statistics hold sample values of every column.
      if (schema === 'pg_catalog' && /^pg_stat(s|istic)/.test(table))
        return `${schema}.${table} (sample values of every column), which an access policy hides`;
      return null;
    },
    columnHidden(schema, table, column) {
      const secret = secretColumn(schema, table, column);
      if (secret) return `${schema}.${table}.${column}, which holds ${secret.holds}`;
      if (policy.active && !policy.columnVisible(schema, table, column))
        return `${schema}.${table}.${column}, which the access policy denies`;
      return null;
    },
    columnMasked: (schema, table, column) =>
      policy.active && policy.columnMasked(schema, table, column),
  };
}

export interface FunctionRef {
  schema: string | null;
  name: string;
}

/** Functions a tree calls: FuncCall names, and names after a dot (attribute notation). */
export function functionRefs(tree: unknown): FunctionRef[] {
  const refs = new Map<string, FunctionRef>();
  const add = (schema: string | null, name: string): void => {
    if (name && name !== '*') refs.set(`${schema ?? ''}.${name}`, { schema, name });
  };
  visitNodes(tree, (type, body) => {
    if (type === 'FuncCall') {
      const parts = nameParts((body as { funcname?: unknown }).funcname);
      add(parts.length > 1 ? parts[parts.length - 2]! : null, parts[parts.length - 1] ?? '');
    } else if (type === 'ColumnRef') {
      for (const field of nameParts((body as { fields?: unknown }).fields).slice(1))
        add(null, field);
    } else if (type === 'A_Indirection') {
      for (const field of nameParts((body as { indirection?: unknown }).indirection))
        add(null, field);
    }
  });
  return [...refs.values()];
}

/** Relations a tree names (RangeVars), as written. */
export function relationRefs(
  tree: unknown,
): { schema: string | null; name: string; alias: string | null }[] {
  const refs: { schema: string | null; name: string; alias: string | null }[] = [];
  visitNodes(tree, (type, body) => {
    if (type !== 'RangeVar') return;
    const v = body as { schemaname?: string; relname?: string; alias?: { aliasname?: string } };
    if (v.relname)
      refs.push({
        schema: v.schemaname ?? null,
        name: v.relname,
        alias: v.alias?.aliasname ?? null,
      });
  });
  return refs;
}

/** The catalog relation holding credentials that a body names, if any (for bodies not parsed). */
export function mentionsSecret(body: string): string | null {
  const lower = body.toLowerCase();
  for (const name of SECRET_RELATION_NAMES) {
    if (new RegExp(`\\b${name}\\b`).test(lower)) return name;
  }
  return null;
}
