// Judges the names a statement gives the catalog (catalog-uses.ts) against what the policy
// denies (catalog-facts.ts): each is resolved on the call's connection, and a denied one gets
// the error PostgreSQL gives for a missing one, with its position in the caller's text.
import { AppError, ErrorCodes } from '../../core/errors.js';
import { quoteIdent } from '../../core/sql.js';
import type { Lookup } from '../../db/call-session.js';
import type { Facts } from './catalog-facts.js';
import { missing, REG_TYPES } from './catalog-functions.js';
import { literalTypes, type NameLiteral } from './catalog-names.js';
import type { Wants } from './catalog-uses.js';
import { characters } from './sent-text.js';
import type { WrittenName } from './written-name.js';

export const RESOLVE_SQL = `SELECT r.i::int AS i, c.oid::int8 AS oid, c.relnamespace::int8 AS ns
FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS r(ref, i)
JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(r.ref)`;

export const RESOLVE_TYPES_SQL = `SELECT r.i::int AS i, t.oid::int8 AS oid, t.typnamespace::int8 AS ns, t.typrelid::int8 AS rel
FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS r(ref, i)
JOIN pg_catalog.pg_type t ON t.oid = pg_catalog.to_regtype(r.ref)`;

const RESOLVE_COLUMNS_SQL = `SELECT r.i::int AS i, a.attrelid::int8 AS rel, a.attnum::int AS attnum
FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::int[])) AS r(ref, name, num)
JOIN pg_catalog.pg_attribute a ON a.attrelid = pg_catalog.to_regclass(r.ref)
  AND a.attnum > 0 AND NOT a.attisdropped AND (a.attname = r.name OR a.attnum = r.num)`;

const quoted = (parts: string[]): string => parts.map(quoteIdent).join('.');

/** Throws when a constant names an object that is missing or denied (the same error for both). */
export async function judgeWants(
  lookup: Lookup,
  wants: Wants,
  facts: () => Promise<Facts>,
): Promise<void> {
  if (wants.rels.length === 0 && wants.schemas.length === 0 && wants.types.length === 0) return;
  const f = await facts();
  if (wants.rels.length > 0) {
    const { rows } = await lookup.query<{ i: number; oid: string; ns: string }>(RESOLVE_SQL, [
      wants.rels.map((r) => quoted(r.parts)),
    ]);
    const found = new Map(rows.map((r) => [r.i, r]));
    wants.rels.forEach((r, k) => {
      const row = found.get(k + 1);
      if (!row || f.deniedRels.has(Number(row.oid)) || f.deniedNs.has(Number(row.ns)))
        throw missing('relation', r.text);
    });
  }
  if (wants.schemas.length > 0) {
    const { rows } = await lookup.query<{ schema: string; oid: string }>(
      `SELECT s.schema, n.oid::int8 AS oid FROM pg_catalog.unnest($1::text[]) AS s(schema)
       LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = s.schema`,
      [wants.schemas],
    );
    for (const row of rows)
      if (row.oid === null || f.deniedNs.has(Number(row.oid))) throw missing('schema', row.schema);
  }
  if (wants.types.length > 0) {
    const { rows } = await lookup.query<{ i: number; oid: string; ns: string; rel: string }>(
      RESOLVE_TYPES_SQL,
      [wants.types.map((t) => quoted(t.parts))],
    );
    const found = new Map(rows.map((r) => [r.i, r]));
    wants.types.forEach((t, k) => {
      const row = found.get(k + 1);
      if (
        !row ||
        f.deniedTypes.has(Number(row.oid)) ||
        f.deniedNs.has(Number(row.ns)) ||
        f.deniedRels.has(Number(row.rel))
      )
        throw missing('type', t.text);
    });
  }
  if (wants.columns.length > 0) {
    const { rows } = await lookup.query<{ i: number; rel: string; attnum: number }>(
      RESOLVE_COLUMNS_SQL,
      [
        wants.columns.map((c) => quoted(c.rel)),
        wants.columns.map((c) => (typeof c.column === 'string' ? c.column : null)),
        wants.columns.map((c) => (typeof c.column === 'number' ? c.column : null)),
      ],
    );
    const found = new Map(rows.map((r) => [r.i, r]));
    wants.columns.forEach((c, k) => {
      const row = found.get(k + 1);
      if (row && f.deniedCols.has(`${row.rel}:${row.attnum}`))
        throw missing('column', String(c.column));
    });
  }
}

/**
 * Names written as types or in string constants, resolved as PostgreSQL resolves them:
 * to_regclass (not for a `[]` name), to_regtype, and the schema a qualified name names (or
 * that a single name is). Only the names that resolve to something come back.
 */
const RESOLVE_NAMES_SQL = `SELECT r.i::int AS i,
  coalesce(c.oid, 0)::int8 AS rel, coalesce(c.relnamespace, 0)::int8 AS rel_ns,
  coalesce(t.oid, 0)::int8 AS type, coalesce(t.typnamespace, 0)::int8 AS type_ns,
  coalesce(t.typrelid, 0)::int8 AS type_rel,
  coalesce(e.oid, 0)::int8 AS elem, coalesce(e.typnamespace, 0)::int8 AS elem_ns,
  coalesce(e.typrelid, 0)::int8 AS elem_rel, coalesce(n.oid, 0)::int8 AS ns
FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[]), pg_catalog.unnest($3::bool[]))
  WITH ORDINALITY AS r(ref, schema, relation, i)
LEFT JOIN pg_catalog.pg_class c ON c.oid = CASE WHEN r.relation THEN pg_catalog.to_regclass(r.ref) END
LEFT JOIN pg_catalog.pg_type t ON t.oid = pg_catalog.to_regtype(r.ref)
LEFT JOIN pg_catalog.pg_type e ON e.oid = CASE WHEN t.typelem <> 0 THEN t.typelem ELSE t.typbasetype END
LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = r.schema
WHERE c.oid IS NOT NULL OR t.oid IS NOT NULL OR n.oid IS NOT NULL`;

interface NameRow {
  i: number;
  rel: string;
  rel_ns: string;
  type: string;
  type_ns: string;
  type_rel: string;
  elem: string;
  elem_ns: string;
  elem_rel: string;
  ns: string;
}

/** What a name that resolved names of what the policy denies. */
interface NameVerdict {
  /** A qualified name in a denied schema (missing schema: 3F000 whatever the object). */
  schema: boolean;
  /** A single name that is a denied schema's. */
  isSchema: boolean;
  relation: boolean;
  type: boolean;
  /** A visible relation with a denied column whose row type (or array of it) this is. */
  rowType: string | null;
}

function verdictOf(name: WrittenName, row: NameRow | undefined, f: Facts): NameVerdict {
  const n = (v: string | undefined): number => Number(v ?? 0);
  const qualified = name.parts.length > 1;
  const nsDenied = row !== undefined && n(row.ns) !== 0 && f.deniedNs.has(n(row.ns));
  const typeDenied =
    row !== undefined &&
    n(row.type) !== 0 &&
    (f.deniedTypes.has(n(row.type)) ||
      f.deniedNs.has(n(row.type_ns)) ||
      f.deniedRels.has(n(row.type_rel)) ||
      f.deniedTypes.has(n(row.elem)) ||
      f.deniedNs.has(n(row.elem_ns)) ||
      f.deniedRels.has(n(row.elem_rel)));
  return {
    schema: qualified && nsDenied,
    isSchema: !qualified && nsDenied,
    relation:
      row !== undefined &&
      n(row.rel) !== 0 &&
      (f.deniedRels.has(n(row.rel)) || f.deniedNs.has(n(row.rel_ns))),
    type: typeDenied,
    rowType:
      row === undefined
        ? null
        : (f.withDeniedCols.get(n(row.type_rel)) ?? f.withDeniedCols.get(n(row.elem_rel)) ?? null),
  };
}

/** The name as PostgreSQL's error writes it: parts joined by dots, `[]` for an array. */
const shown = (name: WrittenName): string => name.parts.join('.') + (name.array ? '[]' : '');
const schemaOf = (name: WrittenName): string => name.parts[name.parts.length - 2] ?? '';

/** The error PostgreSQL gives a missing name read as `type` (a reg type's name, or null: any). */
function missingAs(
  name: WrittenName,
  v: NameVerdict,
  type: string | null,
  position: number | undefined,
): AppError | null {
  const base = type?.replace(/\[\]$/, '') ?? null;
  if (base !== null && (!REG_TYPES.has(base) || base === 'regrole')) return null;
  if (v.schema) return missing('schema', schemaOf(name), position);
  if ((base === null || base === 'regclass') && v.relation)
    return missing('relation', shown(name), position);
  if ((base === null || base === 'regtype') && v.type)
    return missing('type', shown(name), position);
  if ((base === null || base === 'regnamespace') && v.isSchema)
    return missing('schema', name.parts[0]!, position);
  return null;
}

/**
 * Throws when a type the text names, or a string constant PostgreSQL reads as a reg type,
 * names what the policy denies: with the error PostgreSQL gives a missing one (the same text,
 * SQLSTATE and position), so a denied name and a missing one answer alike. A type that is the
 * row type of a visible table with a denied column is refused: a value of it shows the column.
 * `sql` is the statement (to ask PostgreSQL which constants it reads as a reg type); null for
 * a view's or function's body, whose constants are judged as if they were read so.
 */
export async function judgeNames(
  lookup: Lookup,
  wants: Wants,
  facts: () => Promise<Facts>,
  statement: { sql: string; tree: unknown } | null,
): Promise<void> {
  if (wants.typeRefs.length === 0 && wants.literals.length === 0) return;
  const items: { name: WrittenName; relation: boolean }[] = [];
  for (const t of wants.typeRefs) items.push({ name: t, relation: false });
  for (const l of wants.literals)
    for (const name of l.names) items.push({ name, relation: !name.array });
  const { rows } = await lookup.query<NameRow>(RESOLVE_NAMES_SQL, [
    items.map(({ name }) => quoted(name.parts.slice(-2)) + (name.array ? '[]' : '')),
    items.map(({ name }) => (name.parts.length > 1 ? schemaOf(name) : name.parts[0]!)),
    items.map((item) => item.relation),
  ]);
  if (rows.length === 0) return;
  const f = await facts();
  const found = new Map(rows.map((r) => [r.i, r]));
  const sql = statement?.sql ?? '';
  const position = (location: number): number | undefined =>
    statement
      ? characters(Buffer.from(sql, 'utf8').subarray(0, location).toString('utf8')) + 1
      : undefined;
  let k = 0;
  const verdicts = items.map((item) => verdictOf(item.name, found.get(++k), f));
  // Types, in text order.
  const types = wants.typeRefs.map((t, i) => ({ t, v: verdicts[i]! }));
  for (const { t, v } of types.sort((a, b) => a.t.location - b.t.location)) {
    const error = missingAs(
      t,
      { ...v, relation: false, isSchema: false },
      'regtype',
      position(t.location),
    );
    if (error) throw error;
    if (v.rowType)
      throw new AppError(
        ErrorCodes.TOOL_INPUT_INVALID,
        `Refused: the query names the row type of ${v.rowType}, which has columns you may not use (a value of that type shows them). Name the visible columns you need; get_schema_info lists them.`,
        { category: 'forbidden' },
      );
  }
  // Constants that name something denied: what PostgreSQL reads them as decides.
  let at = wants.typeRefs.length;
  const suspects: { literal: NameLiteral; names: { name: WrittenName; v: NameVerdict }[] }[] = [];
  for (const literal of wants.literals) {
    const names = literal.names.map((name) => ({ name, v: verdicts[at++]! }));
    if (names.some(({ name, v }) => missingAs(name, v, null, undefined) !== null))
      suspects.push({ literal, names });
  }
  if (suspects.length === 0) return;
  const read = statement
    ? await literalTypes(
        lookup,
        statement.sql,
        statement.tree,
        suspects.map((s) => s.literal),
      )
    : null;
  const ordered = suspects
    .map((s, i) => ({ ...s, type: read?.[i] ?? null }))
    .sort((a, b) => a.literal.location - b.literal.location);
  for (const { literal, names, type } of ordered) {
    for (const { name, v } of names) {
      const error = missingAs(name, v, type, position(literal.location));
      if (error) throw error;
    }
  }
}
