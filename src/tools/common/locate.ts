// Finding a relation the way PostgreSQL does (to_regclass: search_path for an unqualified
// name), and deciding whether a catalog snapshot that lacks it is merely stale.
import type pg from 'pg';
import type { VisibilityRules } from '../../catalog/index.js';
import { quoteIdent } from '../../core/sql.js';

export interface Located {
  schema: string;
  name: string;
}

const LOCATE_SQL = `SELECT n.nspname AS schema, c.relname AS name
FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS r(ref, i)
JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(r.ref)
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
ORDER BY r.i LIMIT 1`;

const SCHEMA_SQL = 'SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1';

const SYSTEM_SCHEMA = /^(pg_catalog|information_schema|pg_toast.*|pg_temp_.*)$/;

/**
 * The relation a model means by `schema`/`table`: the exact spelling first, then the
 * spelling PostgreSQL would fold an unquoted name to, then (without a schema) a
 * "schema.table" written into the table argument.
 */
export async function locateRelation(
  client: pg.ClientBase,
  schema: string | undefined,
  table: string,
): Promise<Located | null> {
  const refs: string[] = [];
  const add = (s: string | undefined, t: string): void => {
    const ref = s === undefined ? quoteIdent(t) : `${quoteIdent(s)}.${quoteIdent(t)}`;
    if (!refs.includes(ref)) refs.push(ref);
  };
  add(schema, table);
  add(schema?.toLowerCase(), table.toLowerCase());
  const dotted = schema === undefined ? /^([^."]+)\.([^."]+)$/.exec(table) : null;
  if (dotted) {
    add(dotted[1], dotted[2]!);
    add(dotted[1]!.toLowerCase(), dotted[2]!.toLowerCase());
  }
  const { rows } = await client.query<Located>(LOCATE_SQL, [refs]);
  return rows[0] ?? null;
}

export async function schemaExists(client: pg.ClientBase, schema: string): Promise<boolean> {
  return ((await client.query(SCHEMA_SQL, [schema])).rowCount ?? 0) > 0;
}

/**
 * A relation that exists, is not a system one and that the policy shows belongs in the
 * catalog: a snapshot without it is stale. (Hidden or system relations never trigger a
 * reload, so asking for them again and again costs nothing.)
 */
export function catalogIsStale(policy: VisibilityRules, found: Located): boolean {
  return !SYSTEM_SCHEMA.test(found.schema) && policy.tableVisible(found.schema, found.name);
}

export function schemaCatalogIsStale(policy: VisibilityRules, schema: string): boolean {
  return !SYSTEM_SCHEMA.test(schema) && policy.schemaVisible(schema);
}
