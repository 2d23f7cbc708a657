// What a statement reads through views and functions. A view's rule and a function's body read
// relations the statement never names: the access policy and the credential wall must follow
// them. Views are followed through the dependency catalog (pg_depend rows of their pg_rewrite
// rules, recursively, with the columns each rule uses); SQL-language function bodies are parsed
// with PostgreSQL's parser and judged like the statement itself, recursively. Everything runs on
// the call's own connection, under its role and search_path.
//
// Functions: built-ins (pg_catalog, information_schema) and members of an installed extension
// are trusted (the deny-list handles the dangerous ones); SQL functions are analysed; any other
// (plpgsql, C, …) is refused while a policy is active unless database.access.allowFunctions
// names it. Without a policy only credentials are at stake: such a function is refused when its
// body names a catalog relation that holds them.
import type { Lookup } from '../../db/call-session.js';
import { AppError, ErrorCodes } from '../../core/errors.js';
import { isSecretRelation } from '../credentials.js';
import { checkCatalogInBody } from './catalog-access.js';
import { analyseAgain, CatalogMoved, definitions } from './catalog-moved.js';
import { nameParts, tryParse, visitNodes } from '../common/parse-tree.js';
import {
  functionRefs,
  mentionsSecret,
  relationRefs,
  type FunctionRef,
  type Judge,
} from './policy-judge.js';
import { resolveRelations, type ResolvedRelation } from './relation-access.js';

const SYSTEM = new Set(['pg_catalog', 'information_schema']);

function refuse(code: string, message: string): AppError {
  return new AppError(code, message, { category: 'forbidden' });
}

const REACH_SQL = `WITH RECURSIVE reach(root, via, refclass, refid, attnum) AS (
  SELECT r.ev_class, r.ev_class, d.refclassid, d.refobjid, d.refobjsubid
  FROM pg_catalog.pg_rewrite r
  JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
    AND d.objid = r.oid AND d.refobjid <> r.ev_class
    AND d.refclassid IN ('pg_catalog.pg_class'::pg_catalog.regclass, 'pg_catalog.pg_proc'::pg_catalog.regclass)
  WHERE r.ev_class = ANY ($1::oid[])
  UNION
  SELECT reach.root, r.ev_class, d.refclassid, d.refobjid, d.refobjsubid
  FROM reach
  JOIN pg_catalog.pg_rewrite r ON r.ev_class = reach.refid
  JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
    AND d.objid = r.oid AND d.refobjid <> r.ev_class
    AND d.refclassid IN ('pg_catalog.pg_class'::pg_catalog.regclass, 'pg_catalog.pg_proc'::pg_catalog.regclass)
  -- System views are not followed: their credential columns are listed by name instead.
  JOIN pg_catalog.pg_class rc ON rc.oid = reach.refid
  JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
    AND rn.nspname NOT IN ('pg_catalog', 'information_schema')
  WHERE reach.refclass = 'pg_catalog.pg_class'::pg_catalog.regclass
)
SELECT DISTINCT reach.root::int8 AS root, reach.via::int8 AS via, vn.nspname AS via_schema, v.relname AS via_name,
  (reach.refclass = 'pg_catalog.pg_proc'::pg_catalog.regclass) AS is_function,
  reach.refid::int8 AS refid, reach.attnum::int AS attnum,
  n.nspname AS schema, c.relname AS name, c.relkind::text AS kind, a.attname AS column
FROM reach
JOIN pg_catalog.pg_class v ON v.oid = reach.via
JOIN pg_catalog.pg_namespace vn ON vn.oid = v.relnamespace
LEFT JOIN pg_catalog.pg_class c ON c.oid = reach.refid AND reach.refclass = 'pg_catalog.pg_class'::pg_catalog.regclass
LEFT JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum = reach.attnum AND reach.attnum > 0`;

const FUNCTION_COLUMNS = `p.oid::int8 AS oid, n.nspname AS schema, p.proname AS name, l.lanname AS language,
  p.proretset AS set_returning,
  CASE WHEN n.nspname IN ('pg_catalog', 'information_schema') THEN NULL
       WHEN l.lanname = 'sql' THEN coalesce(pg_catalog.pg_get_function_sqlbody(p.oid), p.prosrc)
       ELSE p.prosrc END AS body,
  EXISTS (SELECT 1 FROM pg_catalog.pg_depend e WHERE e.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
    AND e.objid = p.oid AND e.deptype = 'e') AS extension`;

const FUNCTIONS_BY_NAME_SQL = `SELECT ${FUNCTION_COLUMNS}
FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[])) AS r(schema, name)
JOIN pg_catalog.pg_proc p ON p.proname = r.name
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_language l ON l.oid = p.prolang
WHERE CASE WHEN r.schema IS NULL THEN n.nspname = ANY (pg_catalog.current_schemas(true))
           ELSE n.nspname = r.schema END`;

const FUNCTIONS_BY_OID_SQL = `SELECT ${FUNCTION_COLUMNS}
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
JOIN pg_catalog.pg_language l ON l.oid = p.prolang
WHERE p.oid = ANY ($1::oid[])`;

const VIEWDEF_SQL = `SELECT c.oid::int8 AS oid, pg_catalog.pg_get_viewdef(c.oid) AS def
FROM pg_catalog.pg_class c WHERE c.oid = ANY ($1::oid[])`;

interface ReachRow {
  root: string;
  via: string;
  via_schema: string;
  via_name: string;
  is_function: boolean;
  refid: string;
  attnum: number;
  schema: string | null;
  name: string | null;
  kind: string | null;
  column: string | null;
}

interface FunctionRow {
  oid: string;
  schema: string;
  name: string;
  language: string;
  set_returning: boolean;
  body: string | null;
  extension: boolean;
}

export interface Indirection {
  /** Names of the called functions that return sets (a masked argument changes the row count). */
  setReturning: Set<string>;
}

/** How deep views and function bodies are followed before giving up (and refusing). */
const MAX_DEPTH = 16;

interface Walk {
  lookup: Lookup;
  judge: Judge;
  seenViews: Set<number>;
  seenFunctions: Set<number>;
  setReturning: Set<string>;
}

/** Throws with the reason when what the statement reaches through views or functions is refused. */
export async function checkIndirection(
  lookup: Lookup,
  judge: Judge,
  relations: readonly ResolvedRelation[],
  tree: unknown,
): Promise<Indirection> {
  const walk: Walk = {
    lookup,
    judge,
    seenViews: new Set(),
    seenFunctions: new Set(),
    setReturning: new Set(),
  };
  await checkViews(walk, viewsOf(relations), '', 0);
  await checkFunctionRefs(walk, functionRefs(tree), '', 0, true);
  return { setReturning: walk.setReturning };
}

function viewsOf(relations: readonly ResolvedRelation[]): ResolvedRelation[] {
  return relations.filter((r) => (r.kind === 'v' || r.kind === 'm') && !SYSTEM.has(r.schema));
}

const qualified = (schema: string, name: string): string => `${schema}.${name}`;
const splitName = (name: string): [string, string] => {
  const dot = name.indexOf('.');
  return [name.slice(0, dot), name.slice(dot + 1)];
};

async function checkViews(
  walk: Walk,
  views: ResolvedRelation[],
  path: string,
  depth: number,
): Promise<void> {
  const fresh = views.filter((v) => !walk.seenViews.has(v.oid));
  if (fresh.length === 0) return;
  if (depth > MAX_DEPTH)
    throw refuse(
      ErrorCodes.POLICY_INDIRECT_ACCESS,
      `Refused: ${path} nests views and functions too deeply to analyse.`,
    );
  for (const v of fresh) walk.seenViews.add(v.oid);
  const names = new Map(fresh.map((v) => [v.oid, qualified(v.schema, v.name)]));
  const { rows } = await walk.lookup.query<ReachRow>(REACH_SQL, [fresh.map((v) => v.oid)]);
  const functionOids = new Map<number, string>();
  // Every view in the closure, for its definition: the dependency catalog records no
  // reference to a system catalog (they are pinned), and a whole-row reference adds no column.
  const closure = new Map<number, string>(
    fresh.map((v) => [v.oid, `${path}view ${qualified(v.schema, v.name)}`]),
  );
  for (const row of rows) {
    const root = names.get(Number(row.root)) ?? row.root;
    const via = qualified(row.via_schema, row.via_name);
    const label = `${path}view ${root}${via !== root ? ` (through view ${via})` : ''}`;
    if (!closure.has(Number(row.via))) closure.set(Number(row.via), label);
    if (row.is_function) {
      functionOids.set(Number(row.refid), `${label} calls `);
      continue;
    }
    if (row.schema === null || row.name === null) continue;
    const denied = walk.judge.tableDenied(row.schema, row.name);
    if (denied) throw indirect(`${label} reads ${denied}`);
    if (row.column === null) continue;
    const hidden = walk.judge.columnHidden(row.schema, row.name, row.column);
    if (hidden) throw indirect(`${label} reads ${hidden}`, hidden);
    if (walk.judge.columnMasked(row.schema, row.name, row.column))
      throw indirect(
        `${label} reads the masked column ${qualified(row.schema, row.name)}.${row.column}; through a view it would come back unmasked. Query the table itself`,
      );
  }
  const defs = await definitions<{ oid: string; def: string | null }>(walk.lookup, VIEWDEF_SQL, [
    [...closure.keys()],
  ]);
  // A view of the closure that is gone was dropped (or replaced) since the statement's
  // relations were resolved: resolve them again.
  if (defs.rows.length < closure.size) throw new CatalogMoved();
  for (const { oid, def } of defs.rows) {
    for (const id of closure.keys()) walk.seenViews.add(id);
    const label = closure.get(Number(oid))!;
    const parsed = tryParse(def ?? '');
    if (!parsed.ok)
      throw refuse(
        ErrorCodes.POLICY_INDIRECT_ACCESS,
        `Refused: the definition of ${label} could not be analysed (${parsed.message}).`,
      );
    await checkBody(walk, parsed.tree, `${label} `, depth + 1);
  }
  if (functionOids.size > 0) {
    const { rows: fns } = await definitions<FunctionRow>(walk.lookup, FUNCTIONS_BY_OID_SQL, [
      [...functionOids.keys()],
    ]);
    if (fns.length < functionOids.size) throw new CatalogMoved();
    for (const fn of fns)
      await checkFunction(walk, fn, functionOids.get(Number(fn.oid)) ?? path, depth + 1);
  }
}

async function checkFunctionRefs(
  walk: Walk,
  refs: FunctionRef[],
  path: string,
  depth: number,
  topLevel: boolean,
): Promise<void> {
  if (refs.length === 0) return;
  const { rows } = await definitions<FunctionRow>(walk.lookup, FUNCTIONS_BY_NAME_SQL, [
    refs.map((r) => r.schema),
    refs.map((r) => r.name),
  ]);
  for (const fn of rows) {
    if (topLevel && fn.set_returning) walk.setReturning.add(fn.name);
    await checkFunction(walk, fn, path, depth);
  }
}

async function checkFunction(
  walk: Walk,
  fn: FunctionRow,
  path: string,
  depth: number,
): Promise<void> {
  const oid = Number(fn.oid);
  if (walk.seenFunctions.has(oid)) return;
  walk.seenFunctions.add(oid);
  if (SYSTEM.has(fn.schema) || fn.extension) return;
  const name = qualified(fn.schema, fn.name);
  const label = `${path}function ${name}`;
  if (depth > MAX_DEPTH)
    throw refuse(
      ErrorCodes.POLICY_INDIRECT_ACCESS,
      `Refused: ${label} nests views and functions too deeply to analyse.`,
    );
  const { policy } = walk.judge;
  if (fn.language !== 'sql') {
    if (policy.active) {
      if (policy.functionAllowed(fn.schema, fn.name)) return;
      throw refuse(
        ErrorCodes.FUNCTION_NOT_ANALYSABLE,
        `Refused: ${label} is written in ${fn.language}, whose body pgmcp cannot analyse, and an access policy is active: it could read what the policy denies. Built-in, extension and SQL-language functions are analysed or trusted; allow this one by name in database.access.allowFunctions if it is safe.`,
      );
    }
    const mentioned = mentionsSecret(fn.body ?? '');
    if (mentioned)
      throw refuse(
        ErrorCodes.CREDENTIALS_REFUSED,
        `Refused: ${label} (${fn.language}) reads ${mentioned}, which holds credentials; pgmcp never returns credentials, whatever role it connects as.`,
      );
    return;
  }
  const parsed = tryParse(fn.body ?? '');
  if (!parsed.ok) {
    if (!policy.active && !mentionsSecret(fn.body ?? '')) return;
    throw refuse(
      ErrorCodes.FUNCTION_NOT_ANALYSABLE,
      `Refused: the body of ${label} could not be analysed (${parsed.message}).`,
    );
  }
  await checkBody(walk, parsed.tree, `${label} `, depth + 1);
}

/** A SQL function body: judged like a statement (relations, columns, views, functions). */
async function checkBody(walk: Walk, tree: unknown, label: string, depth: number): Promise<void> {
  const relations = await resolveRelations(walk.lookup, relationRefs(tree));
  for (const rel of relations) {
    const denied = walk.judge.tableDenied(rel.schema, rel.name);
    if (denied) throw indirect(`${label}reads ${denied}`);
  }
  // It runs as written: the catalog it reads cannot be filtered.
  await checkCatalogInBody(walk.lookup, walk.judge, relations, tree, label);
  if (relations.length > 0) {
    const rows = relations.flatMap((r) => r.columns.map((c) => ({ oid: r.oid, name: c.name })));
    const byOid = new Map(relations.map((r) => [r.oid, r]));
    const all = new Set(rows.map((r) => r.name));
    const hidden = new Map<string, string>();
    const sensitive: string[] = [];
    for (const row of rows) {
      const rel = byOid.get(Number(row.oid))!;
      const why = walk.judge.columnHidden(rel.schema, rel.name, row.name);
      if (why) hidden.set(row.name, why);
      else if (walk.judge.columnMasked(rel.schema, rel.name, row.name))
        hidden.set(
          row.name,
          `the masked column ${qualified(rel.schema, rel.name)}.${row.name} (through a function it would come back unmasked)`,
        );
      if (why || walk.judge.columnMasked(rel.schema, rel.name, row.name))
        sensitive.push(qualified(rel.schema, rel.name));
    }
    if (hidden.size > 0) {
      visitNodes(tree, (type, body) => {
        if (type !== 'ColumnRef') return;
        const fields = nameParts((body as { fields?: unknown }).fields);
        const last = fields[fields.length - 1] ?? '';
        const why = hidden.get(last);
        if (why) throw indirect(`${label}reads ${why}`, why);
        if (last === '*' || !all.has(last)) {
          const secret = sensitive.some((r) => isSecretRelation(...splitName(r)));
          throw indirect(
            `${label}may read whole rows of ${[...new Set(sensitive)].join(', ')} (${fields.join('.')}), which have columns that are hidden or masked`,
            secret ? ' which holds credentials' : undefined,
          );
        }
      });
    }
  }
  await checkViews(walk, viewsOf(relations), label.replace(/ $/, ': '), depth);
  await checkFunctionRefs(walk, functionRefs(tree), `${label}calls `, depth, false);
}

/** A refusal for what a view or function reaches; a credential one says so. */
function indirect(reason: string, hidden?: string): AppError {
  if (hidden !== undefined && / which holds /.test(hidden)) {
    return refuse(
      ErrorCodes.CREDENTIALS_REFUSED,
      `Refused: ${reason}. pgmcp never returns credentials, whatever role it connects as.`,
    );
  }
  return refuse(ErrorCodes.POLICY_INDIRECT_ACCESS, `Refused: ${reason}.`);
}

/**
 * For tools that read one relation of the catalog by name (count_rows, similarity_search): when
 * it is a view, what it reads through its definition is judged as for free SQL.
 */
export async function checkRelationReach(
  lookup: Lookup,
  judge: Judge,
  schema: string,
  name: string,
): Promise<void> {
  await analyseAgain(async () => {
    const relations = await resolveRelations(lookup, [{ schema, name, alias: null }]);
    if (viewsOf(relations).length === 0) return;
    await checkIndirection(lookup, judge, relations, {});
  });
}
