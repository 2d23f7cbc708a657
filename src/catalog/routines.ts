// Functions and procedures opted in with an `@mcp` comment, read into typed descriptors in two
// set-based queries: one over pg_proc for every annotated routine, one recursive query for every
// type those routines mention (arrays → element, domains → base, composites → attributes).
// Only pg_catalog columns present from PostgreSQL 12 to 18 are used (PGlite is 18).
import type pg from 'pg';
import { withholdCredentialLines } from '../core/credential-shape.js';
import { HIDDEN_SCHEMA_SQL } from './queries.js';

export type RoutineKind = 'function' | 'procedure';
export type Volatility = 'immutable' | 'stable' | 'volatile';
export type ArgumentMode = 'in' | 'out' | 'inout' | 'variadic' | 'table';
export type TypeKind =
  'base' | 'composite' | 'domain' | 'enum' | 'pseudo' | 'range' | 'multirange' | 'array';

export interface TypeAttribute {
  name: string;
  typeOid: number;
  typmod: number;
}

export interface PgTypeDescriptor {
  oid: number;
  schema: string;
  name: string;
  /** format_type(oid, NULL): a catalog-made type expression, safe to paste as a cast target. */
  sql: string;
  kind: TypeKind;
  /** Arrays: the element type. */
  elementOid: number | null;
  /** Domains: the base type and its typmod (varchar(20) → 24). */
  baseOid: number | null;
  typmod: number;
  /** Enums: labels in sort order. */
  labels: string[];
  /** Composites: attributes in order. */
  attributes: TypeAttribute[];
  /**
   * Whether to_json writes a value through the type's cast to json (a type not built in with
   * such a cast, e.g. hstore) rather than as its text.
   */
  jsonCast?: boolean;
}

export interface RoutineArgument {
  /** null for an unnamed parameter. */
  name: string | null;
  mode: ArgumentMode;
  typeOid: number;
  /** Inputs only: whether the parameter has a default (it may be omitted). */
  hasDefault: boolean;
}

export interface RoutineAnnotations {
  /** `@mcp_name`, or null (the tool is named after the routine). */
  name: string | null;
  /** `@mcp_description`, else text after `@mcp`, else the comment's other prose; null if none. */
  description: string | null;
  /** `@authorize role, …`: null when absent; [] means any authenticated caller. */
  authorize: string[] | null;
  tags: string[];
  /** NpgsqlRest's `@rate_limiter [policy]`: noted only to warn that MCP calls bypass it. */
  rateLimiter?: string;
}

export interface RoutineDescriptor {
  oid: number;
  schema: string;
  name: string;
  kind: RoutineKind;
  volatility: Volatility;
  returnsSet: boolean;
  returnTypeOid: number;
  arguments: RoutineArgument[];
  securityDefiner: boolean;
  /** Whether proconfig pins search_path (what a SECURITY DEFINER routine must do). */
  pinsSearchPath: boolean;
  /** has_function_privilege(oid, 'EXECUTE') for the connected role. */
  executable: boolean;
  comment: string;
  annotations: RoutineAnnotations;
}

export interface RoutineCatalog {
  routines: RoutineDescriptor[];
  types: ReadonlyMap<number, PgTypeDescriptor>;
}

export interface RoutineCatalogOptions {
  /** Schemas to look in; default: every non-system schema. */
  schemas?: readonly string[];
}

// ---------------------------------------------------------------------------------------------
// The comment.

/**
 * Parse a routine comment. Annotations start a line (after optional spaces); anything else is
 * prose. Returns null when there is no `@mcp` line (the routine is not a tool).
 */
export function parseRoutineComment(comment: string): RoutineAnnotations | null {
  let enabled = false;
  let name: string | null = null;
  let mcpText: string | null = null;
  let explicit: string | null = null;
  let authorize: string[] | null = null;
  let tags: string[] = [];
  let rateLimiter: string | undefined;
  const prose: string[] = [];
  const list = (text: string): string[] =>
    text
      .split(/[,\s]+/)
      .map((s) => s.trim())
      .filter((s) => s !== '');
  for (const raw of comment.split(/\r?\n/)) {
    const line = raw.trim();
    const match = /^@([A-Za-z_]+)(?:\s+(.*))?$/.exec(line);
    if (!match) {
      if (line !== '') prose.push(line);
      continue;
    }
    const keyword = match[1]!.toLowerCase();
    const rest = (match[2] ?? '').trim();
    switch (keyword) {
      case 'mcp':
        enabled = true;
        if (rest !== '') mcpText = rest;
        break;
      case 'mcp_name':
        if (rest !== '') name = rest;
        break;
      case 'mcp_description':
        if (rest !== '') explicit = rest;
        break;
      case 'authorize':
        authorize = list(rest);
        break;
      case 'tags':
        tags = list(rest);
        break;
      case 'rate_limiter':
      case 'rate_limiter_policy':
        rateLimiter = rest === '' ? '(default policy)' : rest;
        break;
      default:
        // Annotations for other tools (e.g. NpgsqlRest's @http) are neither prose nor ours.
        break;
    }
  }
  if (!enabled) return null;
  const description = explicit ?? mcpText ?? (prose.length > 0 ? prose.join('\n') : null);
  return rateLimiter === undefined
    ? { name, description, authorize, tags }
    : { name, description, authorize, tags, rateLimiter };
}

// ---------------------------------------------------------------------------------------------
// The queries.

// The comment filter is loose (LIKE); parseRoutineComment decides. proargtypes/proallargtypes
// are cast to int8[] so node-postgres hands back strings rather than needing an oid parser.
const ROUTINES_SQL = `SELECT p.oid::int8 AS oid, n.nspname AS schema, p.proname AS name,
  p.prokind::text AS kind, p.provolatile::text AS volatility, p.proretset AS returns_set,
  p.prorettype::int8 AS return_type, p.pronargs::int AS nargs, p.pronargdefaults::int AS nargdefaults,
  p.proargtypes::oid[]::int8[] AS in_types, p.proallargtypes::int8[] AS all_types,
  p.proargmodes::text[] AS modes, p.proargnames AS names, p.prosecdef AS security_definer,
  EXISTS (SELECT 1 FROM pg_catalog.unnest(p.proconfig) c WHERE c LIKE 'search\\_path=%') AS pins_search_path,
  pg_catalog.has_function_privilege(p.oid, 'EXECUTE') AS executable,
  d.description AS comment
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_description d
  ON d.objoid = p.oid AND d.classoid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objsubid = 0
WHERE p.prokind IN ('f', 'p') AND d.description LIKE '%@mcp%' AND ${HIDDEN_SCHEMA_SQL}
  AND ($1::text[] IS NULL OR n.nspname = ANY ($1::text[]))
ORDER BY n.nspname, p.proname, p.oid`;

// Every type reachable from the given ones, in one recursive query.
const TYPES_SQL = `WITH RECURSIVE reach(oid) AS (
  SELECT pg_catalog.unnest($1::int8[])::oid
  UNION
  SELECT x.child
  FROM reach r
  JOIN pg_catalog.pg_type t ON t.oid = r.oid
  CROSS JOIN LATERAL (
    SELECT t.typelem AS child WHERE t.typelem <> 0 AND t.typlen = -1
    UNION ALL SELECT t.typbasetype WHERE t.typtype = 'd'
    UNION ALL SELECT a.atttypid FROM pg_catalog.pg_attribute a
      WHERE t.typtype = 'c' AND a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
  ) x
)
SELECT t.oid::int8 AS oid, tn.nspname AS schema, t.typname AS name, t.typtype::text AS typtype,
  CASE WHEN t.typelem <> 0 AND t.typlen = -1 THEN t.typelem::int8 END AS element,
  CASE WHEN t.typtype = 'd' THEN t.typbasetype::int8 END AS base, t.typtypmod AS typmod,
  pg_catalog.format_type(t.oid, NULL) AS sql,
  (SELECT pg_catalog.array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
     FROM pg_catalog.pg_enum e WHERE e.enumtypid = t.oid) AS labels,
  (SELECT pg_catalog.json_agg(pg_catalog.json_build_object('name', a.attname, 'typeOid', a.atttypid::int8,
       'typmod', a.atttypmod) ORDER BY a.attnum)
     FROM pg_catalog.pg_attribute a
     WHERE t.typtype = 'c' AND a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) AS attributes,
  t.oid >= 16384 AND t.typtype IN ('b', 'e', 'r', 'm') AND EXISTS (SELECT 1 FROM pg_catalog.pg_cast c
    WHERE c.castsource = t.oid AND c.casttarget = 'pg_catalog.json'::pg_catalog.regtype
      AND c.castmethod = 'f') AS json_cast
FROM reach r
JOIN pg_catalog.pg_type t ON t.oid = r.oid
JOIN pg_catalog.pg_namespace tn ON tn.oid = t.typnamespace`;

interface RoutineRow {
  oid: string;
  schema: string;
  name: string;
  kind: string;
  volatility: string;
  returns_set: boolean;
  return_type: string;
  nargs: number;
  nargdefaults: number;
  in_types: string[];
  all_types: string[] | null;
  modes: string[] | null;
  names: string[] | null;
  security_definer: boolean;
  pins_search_path: boolean;
  executable: boolean;
  comment: string;
}

interface TypeRow {
  oid: string;
  schema: string;
  name: string;
  typtype: string;
  element: string | null;
  base: string | null;
  typmod: number;
  sql: string;
  labels: string[] | null;
  attributes: Array<{ name: string; typeOid: number; typmod: number }> | null;
  json_cast: boolean;
}

const MODES: Record<string, ArgumentMode> = {
  i: 'in',
  o: 'out',
  b: 'inout',
  v: 'variadic',
  t: 'table',
};
const VOLATILITY: Record<string, Volatility> = { i: 'immutable', s: 'stable', v: 'volatile' };
const TYPTYPE: Record<string, TypeKind> = {
  b: 'base',
  c: 'composite',
  d: 'domain',
  e: 'enum',
  p: 'pseudo',
  r: 'range',
  m: 'multirange',
};

function routineFromRow(row: RoutineRow): RoutineDescriptor | null {
  const comment = withholdCredentialLines(row.comment);
  const annotations = parseRoutineComment(comment);
  if (!annotations) return null;
  const types = (row.all_types ?? row.in_types).map(Number);
  const modes = row.modes?.map((m) => MODES[m] ?? 'in') ?? types.map(() => 'in' as const);
  // The last pronargdefaults *input* parameters have defaults.
  const inputIndexes = modes
    .map((mode, i) => (mode === 'in' || mode === 'inout' || mode === 'variadic' ? i : -1))
    .filter((i) => i >= 0);
  const withDefaults = new Set(inputIndexes.slice(inputIndexes.length - row.nargdefaults));
  const args = types.map((typeOid, i): RoutineArgument => ({
    name: row.names?.[i] ? row.names[i]! : null,
    mode: modes[i] ?? 'in',
    typeOid,
    hasDefault: row.nargdefaults > 0 && withDefaults.has(i),
  }));
  return {
    oid: Number(row.oid),
    schema: row.schema,
    name: row.name,
    kind: row.kind === 'p' ? 'procedure' : 'function',
    volatility: VOLATILITY[row.volatility] ?? 'volatile',
    returnsSet: row.returns_set,
    returnTypeOid: Number(row.return_type),
    arguments: args,
    securityDefiner: row.security_definer,
    pinsSearchPath: row.pins_search_path,
    executable: row.executable,
    comment,
    annotations,
  };
}

function typeFromRow(row: TypeRow): PgTypeDescriptor {
  const element = row.element === null ? null : Number(row.element);
  return {
    oid: Number(row.oid),
    schema: row.schema,
    name: row.name,
    sql: row.sql,
    kind: element !== null && row.typtype === 'b' ? 'array' : (TYPTYPE[row.typtype] ?? 'base'),
    elementOid: element,
    baseOid: row.base === null ? null : Number(row.base),
    typmod: row.typmod,
    labels: row.labels ?? [],
    jsonCast: row.json_cast,
    attributes: (row.attributes ?? []).map((a) => ({
      name: a.name,
      typeOid: Number(a.typeOid),
      typmod: a.typmod,
    })),
  };
}

/** Read the annotated routines and every type they use (two queries, on `client`). */
export async function loadRoutineCatalog(
  client: pg.ClientBase,
  options: RoutineCatalogOptions = {},
): Promise<RoutineCatalog> {
  const schemas = options.schemas && options.schemas.length > 0 ? [...options.schemas] : null;
  const rows = (await client.query<RoutineRow>(ROUTINES_SQL, [schemas])).rows;
  const routines = rows.map(routineFromRow).filter((r): r is RoutineDescriptor => r !== null);
  const oids = new Set<number>();
  for (const r of routines) {
    oids.add(r.returnTypeOid);
    for (const a of r.arguments) oids.add(a.typeOid);
  }
  const types = new Map<number, PgTypeDescriptor>();
  if (oids.size > 0) {
    const typeRows = (await client.query<TypeRow>(TYPES_SQL, [[...oids].map(String)])).rows;
    for (const row of typeRows) {
      const type = typeFromRow(row);
      types.set(type.oid, type);
    }
  }
  return { routines, types };
}
