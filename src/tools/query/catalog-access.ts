// What the system catalog tells about denied objects. Under an access policy a denied schema,
// table or column answers as if it did not exist — also to introspection. A statement may read
// the catalog only through relations that either hold nothing about schemas, relations and
// columns (OPEN), or that pgmcp can filter: each of those is replaced, in the text sent, by a
// subquery over the same relation without the rows of denied objects (FILTERED); a name that
// refers to a CTE is the CTE (cte-scope.ts). Every other catalog relation is refused. Functions
// and casts that turn a name or an oid into what the catalog knows of it (regclass casts,
// pg_relation_size, obj_description, has_table_privilege …) are allowed only on a constant
// name of a visible object; a denied one gets the error a missing one gets, and to_regclass
// (to_regtype, to_regnamespace) of one answers NULL as for a missing one. Type names and string
// constants PostgreSQL reads as a reg type by their context are resolved too, and a denied one
// gets PostgreSQL's error for a missing one (catalog-names.ts). Sequences go with the table or
// column they belong to. Error positions are counted back into the caller's text
// (sent-text.ts). Definitions of views, rules, constraints and functions are refused
// (pg_get_viewdef, pg_views …) or blanked (pg_proc's bodies; defaults, generation expressions
// and index definitions that depend on anything denied): text that can name anything.
// The tables of what is filtered, blanked and open are in catalog-filters.ts; the catalog
// functions judged in catalog-functions.ts; a statement's uses are collected in catalog-uses.ts
// and judged in catalog-judge.ts against what the policy denies (catalog-facts.ts).
// docs/security.md, "The system catalog", says what is filtered, open and refused.
import { scanSync } from 'libpg-query';
import type { AppError } from '../../core/errors.js';
import { quoteIdent } from '../../core/sql.js';
import type { Lookup } from '../../db/call-session.js';
import { readFacts, type Facts } from './catalog-facts.js';
import { BLANKED, FILTERED, OPEN, SYSTEM, type Denied } from './catalog-filters.js';
import { ALTERNATIVE, missing, refuse } from './catalog-functions.js';
import { judgeNames, judgeWants, RESOLVE_SQL, RESOLVE_TYPES_SQL } from './catalog-judge.js';
import { collect, type NameLookup } from './catalog-uses.js';
import { relationUses, writtenName, type RelationUse } from './cte-scope.js';
import { nameParts, tryParse, visitNodes } from '../common/parse-tree.js';
import type { Judge } from './policy-judge.js';
import type { ResolvedRelation } from './relation-access.js';
import { characters, type Replacement } from './sent-text.js';

const catalogName = (rel: { schema: string; name: string }): string => `${rel.schema}.${rel.name}`;

function refuseRelation(rel: { schema: string; name: string }, label: string): AppError {
  return refuse(
    `Refused: ${label}reads ${catalogName(rel)}, which can show what the access policy hides and is not filtered by it. ${ALTERNATIVE}.`,
  );
}

/**
 * For a view's definition or a SQL function's body: it runs as written, so catalog relations
 * it reads must be open ones, and its casts and catalog functions are judged like a statement's.
 */
export async function checkCatalogInBody(
  lookup: Lookup,
  judge: Judge,
  relations: readonly ResolvedRelation[],
  tree: unknown,
  label: string,
): Promise<void> {
  if (!judge.policy.active) return;
  for (const rel of relations) {
    if (!SYSTEM.has(rel.schema) || OPEN.has(catalogName(rel))) continue;
    throw refuseRelation(rel, label);
  }
  const wants = collect(tree, { label, lookups: false });
  let facts: Promise<Facts> | null = null;
  const getFacts = (): Promise<Facts> => (facts ??= readFacts(lookup, judge));
  await judgeWants(lookup, wants, getFacts);
  await judgeNames(lookup, wants, getFacts, null);
}

/** The statement to send instead of the caller's, and where it differs from it. */
export interface SentStatement {
  text: string;
  /** In the caller's characters, in text order: for error positions (sent-text.ts). */
  replacements: Replacement[];
}

/**
 * Under an active policy: refuses what reads the catalog in a way the policy cannot filter, and
 * returns the statement to send instead when it reads filtered catalog relations or looks up a
 * denied name with to_regclass and the like (else null).
 */
export async function checkCatalog(
  lookup: Lookup,
  judge: Judge,
  relations: readonly ResolvedRelation[],
  tree: unknown,
  sql: string,
): Promise<SentStatement | null> {
  if (!judge.policy.active) return null;
  // A name that refers to a CTE wherever it is written reads no catalog relation.
  const uses = relationUses(tree);
  const named = new Set(uses.filter((u) => !u.cte).map(writtenName));
  const filtered: ResolvedRelation[] = [];
  for (const rel of relations) {
    if (!named.has(rel.written)) continue;
    if (!SYSTEM.has(rel.schema) || OPEN.has(catalogName(rel))) continue;
    if (!FILTERED[catalogName(rel)]) throw refuseRelation(rel, 'the query ');
    filtered.push(rel);
  }
  const wants = collect(tree, { label: 'the query: ', lookups: true });
  let facts: Promise<Facts> | null = null;
  const getFacts = (): Promise<Facts> => (facts ??= readFacts(lookup, judge));
  // A sequence that belongs to a denied table or column is denied with it.
  for (const rel of relations) {
    if (rel.kind !== 'S' || SYSTEM.has(rel.schema)) continue;
    if ((await getFacts()).deniedRels.has(rel.oid)) throw missing('relation', rel.written);
  }
  await judgeWants(lookup, wants, getFacts);
  await judgeNames(lookup, wants, getFacts, { sql, tree });
  const nulled = await deniedLookups(lookup, wants.lookups, getFacts);
  if (filtered.length === 0 && nulled.length === 0) return null;
  const { denied } = await getFacts();
  return rewrite(sql, tree, filtered, uses, nulled, denied);
}

const LOOKUP_SQL: Record<NameLookup['kind'], string> = {
  rel: RESOLVE_SQL,
  type: RESOLVE_TYPES_SQL,
  schema: `SELECT r.i::int AS i, n.oid::int8 AS oid, n.oid::int8 AS ns
FROM pg_catalog.unnest($1::text[]) WITH ORDINALITY AS r(ref, i)
JOIN pg_catalog.pg_namespace n ON n.oid = pg_catalog.to_regnamespace(r.ref)`,
};

/**
 * The to_regclass (to_regtype, to_regnamespace) calls whose name resolves to a denied object:
 * each is sent with a NULL argument, so it answers NULL as it does for a missing name. The name
 * is resolved by the same function on the call's connection, so exactly as the statement would.
 */
async function deniedLookups(
  lookup: Lookup,
  lookups: readonly NameLookup[],
  facts: () => Promise<Facts>,
): Promise<number[]> {
  const out: number[] = [];
  for (const kind of ['rel', 'type', 'schema'] as const) {
    const these = lookups.filter((l) => l.kind === kind);
    if (these.length === 0) continue;
    const { rows } = await lookup.query<{ i: number; oid: string; ns: string; rel?: string }>(
      LOOKUP_SQL[kind],
      [these.map((l) => l.text)],
    );
    if (rows.length === 0) continue;
    const f = await facts();
    for (const row of rows) {
      const denied =
        f.deniedNs.has(Number(row.ns)) ||
        (kind === 'rel' && f.deniedRels.has(Number(row.oid))) ||
        (kind === 'type' &&
          (f.deniedTypes.has(Number(row.oid)) || f.deniedRels.has(Number(row.rel))));
      if (denied) out.push(these[row.i - 1]!.location);
    }
  }
  return out;
}

/**
 * The statement with every filtered catalog relation replaced by its filtered subquery, and the
 * argument of every denied lookup by NULL.
 */
function rewrite(
  sql: string,
  tree: unknown,
  filtered: readonly ResolvedRelation[],
  uses: readonly RelationUse[],
  nulled: readonly number[],
  denied: Denied,
): SentStatement {
  const byWritten = new Map(filtered.map((r) => [r.written, r]));
  const bytes = Buffer.from(sql, 'utf8');
  const tokens = scanSync(sql).tokens;
  const edits: { start: number; end: number; text: string }[] = [];
  for (const use of uses) {
    if (!use.range || use.cte || use.location === undefined) continue;
    const rel = byWritten.get(writtenName(use));
    if (!rel) continue;
    // The name as written: one to three identifiers joined by dots, from the node's location.
    const first = tokens.findIndex((t) => t.start === use.location);
    if (first < 0) throw cannotFilter(rel);
    let last = first;
    while (tokens[last + 1]?.text === '.' && tokens[last + 2]) last += 2;
    const blank = BLANKED[catalogName(rel)];
    const list = blank
      ? rel.columns
          .map((c) =>
            blank[c.name]
              ? `${blank[c.name]!(denied)} AS ${quoteIdent(c.name)}`
              : `x.${quoteIdent(c.name)}`,
          )
          .join(', ')
      : 'x.*';
    const subquery = `(SELECT ${list} FROM ${catalogName(rel)} x WHERE ${FILTERED[catalogName(rel)]!(denied)})`;
    edits.push({
      start: tokens[first]!.start,
      end: tokens[last]!.end,
      text: use.alias === null ? `${subquery} AS ${quoteIdent(rel.name)}` : subquery,
    });
  }
  // A column qualified by a filtered relation's schema (pg_catalog.pg_class.relname) names the
  // subquery, which has only the relation's own name: the schema is left out of it.
  const unaliased = new Set<string>();
  for (const use of uses) {
    const rel = use.cte || use.alias !== null ? undefined : byWritten.get(writtenName(use));
    if (rel) unaliased.add(catalogName(rel));
  }
  visitNodes(tree, (type, body) => {
    if (type !== 'ColumnRef' || unaliased.size === 0) return;
    const ref = body as { fields?: unknown; location?: number };
    const parts = nameParts(ref.fields);
    if (parts.length < 3 || ref.location === undefined) return;
    const [schema, name] = parts.slice(-3, -1);
    if (!unaliased.has(`${schema}.${name}`)) return;
    const first = tokens.findIndex((t) => t.start === ref.location);
    const drop = parts.length - 2;
    if (first < 0 || tokens[first + 2 * drop - 1]?.text !== '.') return;
    edits.push({ start: tokens[first]!.start, end: tokens[first + 2 * drop]!.start, text: '' });
  });
  for (const location of nulled) {
    // Everything between the call's parentheses (its one argument).
    let open = tokens.findIndex((t) => t.start === location);
    while (open >= 0 && open < tokens.length && tokens[open]!.text !== '(') open++;
    let close = open;
    for (let depth = 0; open >= 0 && close < tokens.length; close++) {
      const text = tokens[close]!.text;
      if (text === '(') depth++;
      else if (text === ')' && --depth === 0) break;
    }
    if (open < 0 || close >= tokens.length)
      throw refuse(
        'Refused: the query calls to_regclass, to_regtype or to_regnamespace in a form pgmcp does not judge.',
      );
    edits.push({
      start: tokens[open]!.end,
      end: tokens[close]!.start,
      text: 'NULL::pg_catalog.text',
    });
  }
  edits.sort((a, b) => a.start - b.start);
  const charsTo = (offset: number): number =>
    characters(bytes.subarray(0, offset).toString('utf8'));
  const replacements = edits.map((e) => ({
    start: charsTo(e.start),
    end: charsTo(e.end),
    length: characters(e.text),
  }));
  let out = bytes;
  for (const e of [...edits].reverse())
    out = Buffer.concat([out.subarray(0, e.start), Buffer.from(e.text), out.subarray(e.end)]);
  const text = out.toString('utf8');
  const parsed = tryParse(text);
  if (!parsed.ok || parsed.tree.stmts?.length !== 1) {
    if (filtered.length > 0) throw cannotFilter(filtered[0]!);
    throw refuse(
      'Refused: the query calls to_regclass, to_regtype or to_regnamespace in a form pgmcp does not judge.',
    );
  }
  return { text, replacements };
}

function cannotFilter(rel: { schema: string; name: string }): AppError {
  return refuse(
    `Refused: the query reads ${catalogName(rel)} in a form the access policy cannot filter (TABLE, ONLY, TABLESAMPLE …); read it with SELECT … FROM ${catalogName(rel)}.`,
  );
}
