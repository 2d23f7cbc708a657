// Which relation names of a statement are CTEs, resolved as PostgreSQL resolves them: an
// unqualified name refers to a CTE of the same name visible at that point (its own query level
// or an outer one) before any table; a schema-qualified name, and the target of INSERT, UPDATE,
// DELETE or MERGE, never does. In a plain WITH list each CTE sees only the ones before it (its
// own name inside its body is a table again); in WITH RECURSIVE every CTE of the list sees all
// of them.

/** A relation named in the statement's text, and whether that name refers to a CTE there. */
export interface RelationUse {
  schema: string | null;
  name: string;
  alias: string | null;
  /** Byte offset of the name in the text; undefined for a write's target. */
  location: number | undefined;
  /** A FROM item (RangeVar), not a write's target. */
  range: boolean;
  cte: boolean;
}

interface RangeVarBody {
  schemaname?: string;
  relname?: string;
  alias?: { aliasname?: string };
  location?: number;
}

interface WithClause {
  ctes?: { CommonTableExpr?: { ctename?: string } }[];
  recursive?: boolean;
}

/** The name as the statement writes it: `schema.name` or `name` (as ResolvedRelation.written). */
export const writtenName = (use: { schema: string | null; name: string }): string =>
  use.schema === null ? use.name : `${use.schema}.${use.name}`;

/** Every relation name of a parse tree, in text order of the walk, with its CTE resolution. */
export function relationUses(tree: unknown): RelationUse[] {
  const out: RelationUse[] = [];
  const add = (v: RangeVarBody, range: boolean, ctes: ReadonlySet<string>): void => {
    if (!v.relname) return;
    const schema = v.schemaname ?? null;
    out.push({
      schema,
      name: v.relname,
      alias: v.alias?.aliasname ?? null,
      location: v.location,
      range,
      cte: range && schema === null && ctes.has(v.relname),
    });
  };
  const walk = (node: unknown, ctes: ReadonlySet<string>): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, ctes);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const body = node as Record<string, unknown>;
    let scope = ctes;
    const withClause = body['withClause'] as WithClause | undefined;
    if (withClause && typeof withClause === 'object') {
      const list = (withClause.ctes ?? []).map((c) => c.CommonTableExpr ?? {});
      const all = new Set([...ctes, ...list.map((c) => c.ctename ?? '')]);
      let visible: ReadonlySet<string> = withClause.recursive ? all : ctes;
      for (const cte of list) {
        walk(cte, visible);
        if (!withClause.recursive) visible = new Set([...visible, cte.ctename ?? '']);
      }
      scope = all;
    }
    for (const [key, value] of Object.entries(body)) {
      if (key === 'withClause') continue;
      if (typeof value === 'object' && value !== null) {
        if (key === 'RangeVar') add(value as RangeVarBody, true, scope);
        // A write's target is a bare RangeVar under `relation`: always a table.
        else if (key === 'relation' && 'relname' in value) add(value as RangeVarBody, false, scope);
      }
      walk(value, scope);
    }
  };
  walk(tree, new Set());
  return out;
}
