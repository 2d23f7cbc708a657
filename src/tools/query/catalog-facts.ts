// What the policy denies, as the catalog filter needs it: the oids of denied schemas, relations
// (with their indexes, TOAST tables and owned sequences), row types and columns, read once per
// call on the call's connection.
import type { Lookup } from '../../db/call-session.js';
import type { Denied } from './catalog-filters.js';
import type { Judge } from './policy-judge.js';

const DENIED_SQL = `SELECT c.oid::int8 AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
  c.relnamespace::int8 AS ns, c.reltype::int8 AS type, coalesce(t.typarray, 0)::int8 AS array_type,
  c.reltoastrelid::int8 AS toast, coalesce(i.indrelid, 0)::int8 AS of_table,
  coalesce(i.indkey::text, '') AS indkey
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_type t ON t.oid = c.reltype
LEFT JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid`;

const NAMESPACES_SQL = `SELECT oid::int8 AS oid, nspname AS schema FROM pg_catalog.pg_namespace`;

const COLUMNS_SQL = `SELECT a.attrelid::int8 AS rel, a.attnum::int AS attnum, a.attname AS name
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE a.attnum > 0 AND NOT a.attisdropped AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')`;

interface RelRow {
  oid: string;
  schema: string;
  name: string;
  kind: string;
  ns: string;
  type: string;
  array_type: string;
  toast: string;
  of_table: string;
  indkey: string;
}

/** Sequences that belong to a relation or a column (serial, identity, OWNED BY). */
const OWNED_SEQUENCES_SQL = `SELECT d.objid::int8 AS seq, d.refobjid::int8 AS rel, d.refobjsubid::int AS attnum
FROM pg_catalog.pg_depend d
JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S'
WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
  AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
  AND d.deptype IN ('a', 'i')`;

export interface Facts {
  denied: Denied;
  deniedNs: Set<number>;
  /** The names of denied schemas (a qualified name in one answers as a missing schema). */
  deniedNsNames: Set<string>;
  deniedRels: Set<number>;
  deniedTypes: Set<number>;
  deniedCols: Set<string>;
  /** Visible relations with a denied column, by oid: `schema.name`. */
  withDeniedCols: Map<number, string>;
}

const arrayLiteral = (values: Iterable<number | string>): string =>
  `'{${[...values].map((v) => (typeof v === 'number' ? String(v) : `"${v}"`)).join(',')}}'`;

export async function readFacts(lookup: Lookup, judge: Judge): Promise<Facts> {
  const { policy } = judge;
  const deniedNs = new Set<number>();
  const deniedRels = new Set<number>();
  const deniedTypes = new Set<number>();
  const deniedCols = new Set<string>();
  const deniedNsNames = new Set<string>();
  const withDeniedCols = new Map<number, string>();
  const namespaces = await lookup.query<{ oid: string; schema: string }>(NAMESPACES_SQL);
  for (const n of namespaces.rows)
    if (!policy.schemaVisible(n.schema)) {
      deniedNs.add(Number(n.oid));
      deniedNsNames.add(n.schema);
    }
  const { rows } = await lookup.query<RelRow>(DENIED_SQL);
  const byOid = new Map(rows.map((r) => [Number(r.oid), r]));
  const deny = (r: RelRow): void => {
    deniedRels.add(Number(r.oid));
    if (Number(r.type) !== 0) deniedTypes.add(Number(r.type));
    if (Number(r.array_type) !== 0) deniedTypes.add(Number(r.array_type));
    if (Number(r.toast) !== 0) deniedRels.add(Number(r.toast));
  };
  for (const r of rows) if (!policy.tableVisible(r.schema, r.name)) deny(r);
  if (policy.hasColumnRules) {
    const cols = await lookup.query<{ rel: string; attnum: number; name: string }>(COLUMNS_SQL);
    for (const c of cols.rows) {
      const r = byOid.get(Number(c.rel));
      if (r && !deniedRels.has(Number(r.oid)) && !policy.columnVisible(r.schema, r.name, c.name)) {
        deniedCols.add(`${c.rel}:${c.attnum}`);
        withDeniedCols.set(Number(r.oid), `${r.schema}.${r.name}`);
      }
    }
  }
  // Sequences go with the relation or column they belong to (serial, identity, OWNED BY).
  const owned = await lookup.query<{ seq: string; rel: string; attnum: number }>(
    OWNED_SEQUENCES_SQL,
  );
  for (const o of owned.rows) {
    const seq = byOid.get(Number(o.seq));
    if (seq && (deniedRels.has(Number(o.rel)) || deniedCols.has(`${o.rel}:${o.attnum}`))) deny(seq);
  }
  // Indexes (and their TOAST) go with their table, and with the columns they index.
  for (const r of rows) {
    const table = Number(r.of_table);
    if (table === 0) continue;
    const onDeniedColumn = r.indkey
      .split(' ')
      .some((attnum) => deniedCols.has(`${table}:${attnum}`));
    if (deniedRels.has(table) || onDeniedColumn) deny(r);
  }
  // TOAST indexes of denied TOAST tables.
  for (const r of rows) if (deniedRels.has(Number(r.of_table))) deny(r);
  return {
    denied: {
      ns: arrayLiteral(deniedNs),
      rels: arrayLiteral(deniedRels),
      types: arrayLiteral(deniedTypes),
      cols: arrayLiteral(deniedCols),
    },
    deniedNs,
    deniedNsNames,
    deniedRels,
    deniedTypes,
    deniedCols,
    withDeniedCols,
  };
}
