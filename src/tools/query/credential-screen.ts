// Without an access policy, a statement is analysed for credentials only when it could reach
// them: when it names a catalog relation that holds them, or a view or function of the database
// that may read one. The names of those views and functions are worked out once per period on
// a call's own connection and cached, so an ordinary statement costs no lookup at all. A view
// or function created since the last refresh is caught by the output screen until the next one
// (query-format withholds values shaped like credentials), and pgmcp refreshes at once after a
// write of its own.
//
// Other sessions create and drop views while the list is worked out: the definitions are read
// behind savepoints of the call's block (db/shielded.ts), object by object where a batch
// fails, and what was dropped meanwhile is skipped. No failure of this lookup fails the call.
// When the role may not read the definitions at all (a privilege error), the statement is left
// to the output screen; any other failure may come from an object someone made to break the
// lookup (a view too deeply nested to deparse), so then every statement that names a view or
// function is analysed in full until the list can be worked out. The server log says so once.
import type { Lookup } from '../../db/call-session.js';
import { lookupEach, shieldedQuery } from '../../db/shielded.js';
import { SECRET_RELATION_NAMES } from '../credentials.js';
import type { GuardResult } from '../sql-guard.js';
import { mentionsSecret } from './policy-judge.js';

/** How long the suspect names are trusted before they are worked out again. */
const SCREEN_TTL_MS = 30_000;

const USER = `NOT IN ('pg_catalog', 'information_schema')`;

/** The database's own views (listed first: no catalog function runs over them here). */
const VIEWS_SQL = `SELECT c.oid::int8::text AS oid, c.relname AS name
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace AND n.nspname ${USER}
WHERE c.relkind IN ('v', 'm')`;

// The dependency catalog records no reference to a system catalog (they are pinned): a view's
// own definition says whether it reads one. A view dropped since the list has no row here.
const VIEW_BODIES_SQL = `SELECT c.oid::int8::text AS oid, pg_catalog.pg_get_viewdef(c.oid) AS body
FROM pg_catalog.pg_class c
WHERE c.oid = ANY ($1::oid[]) AND c.relkind IN ('v', 'm')`;

/** What views of the database read or call among the database's own views and functions. */
const EDGES_SQL = `SELECT DISTINCT v.relname AS view, coalesce(c.relname, p.proname) AS target
FROM pg_catalog.pg_rewrite r
JOIN pg_catalog.pg_class v ON v.oid = r.ev_class
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass
  AND d.objid = r.oid AND d.refobjid <> r.ev_class
LEFT JOIN pg_catalog.pg_class c ON d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
  AND c.oid = d.refobjid AND c.relkind IN ('v', 'm')
LEFT JOIN pg_catalog.pg_proc p ON d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
  AND p.oid = d.refobjid
WHERE c.oid IS NOT NULL OR p.oid IS NOT NULL`;

/** Functions of the database (not built in, not from an extension). */
const FUNCTIONS_SQL = `SELECT p.oid::int8::text AS oid, p.proname AS name
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace AND n.nspname ${USER}
WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
  WHERE e.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND e.objid = p.oid AND e.deptype = 'e')`;

/** Their bodies; a function dropped since the list has no row here. */
const FUNCTION_BODIES_SQL = `SELECT p.oid::int8::text AS oid,
  coalesce(pg_catalog.pg_get_function_sqlbody(p.oid), p.prosrc) AS body
FROM pg_catalog.pg_proc p
WHERE p.oid = ANY ($1::oid[])`;

export interface CredentialScreen {
  /** Whether the statement could reach credentials (then it is analysed in full). */
  mayReach(lookup: Lookup, guard: GuardResult): Promise<boolean>;
  /** Work the names out again on the next call (after a write: a view may be new). */
  invalidate(): void;
}

function wordIn(body: string, names: Iterable<string>): boolean {
  for (const name of names) {
    if (body.includes(name) && new RegExp(`\\b${name.replace(/[$]/g, '\\$')}\\b`).test(body))
      return true;
  }
  return false;
}

/** The bodies of the objects listed; one whose body cannot be read is kept with no body. */
async function bodiesOf(
  lookup: Lookup,
  listSql: string,
  bodiesSql: string,
): Promise<{ name: string; body: string | null }[]> {
  const { rows: listed } = await shieldedQuery<{ oid: string; name: string }>(lookup, listSql);
  const { rows, failed } = await lookupEach<{ oid: string; body: string | null }>(
    lookup,
    bodiesSql,
    listed.map((l) => l.oid),
  );
  const bodies = new Map<string, string | null>(rows.map((r) => [r.oid, r.body]));
  for (const oid of failed) bodies.set(oid, null);
  // Listed but neither read nor failed: dropped since the list was read.
  return listed
    .filter((l) => bodies.has(l.oid))
    .map((l) => ({ name: l.name, body: bodies.get(l.oid)! }));
}

/** Names (lower case) of the views and functions that may read credentials. */
async function suspectNames(lookup: Lookup): Promise<Set<string>> {
  const suspects = new Set<string>();
  const views = await bodiesOf(lookup, VIEWS_SQL, VIEW_BODIES_SQL);
  const functions = await bodiesOf(lookup, FUNCTIONS_SQL, FUNCTION_BODIES_SQL);
  const edges = await shieldedQuery<{ view: string; target: string }>(lookup, EDGES_SQL);
  const bodies: { name: string; body: string }[] = [];
  for (const f of [...views, ...functions]) {
    // A body that could not be read while the object still exists: suspect, to be safe.
    if (f.body === null) suspects.add(f.name.toLowerCase());
    else bodies.push({ name: f.name.toLowerCase(), body: f.body.toLowerCase() });
  }
  // To a fixed point: a body that names a credential catalog or a suspect, a view over a suspect.
  for (let changed = true, rounds = 0; changed && rounds < 32; rounds++) {
    changed = false;
    for (const f of bodies) {
      if (suspects.has(f.name)) continue;
      if (mentionsSecret(f.body) || wordIn(f.body, suspects)) {
        suspects.add(f.name);
        changed = true;
      }
    }
    for (const e of edges.rows) {
      const view = e.view.toLowerCase();
      if (!suspects.has(view) && suspects.has(e.target.toLowerCase())) {
        suspects.add(view);
        changed = true;
      }
    }
  }
  return suspects;
}

/** Where the screen says that it could not work its list out. */
export interface ScreenLogger {
  warn(obj: object, msg: string): void;
}

/**
 * How a failed lookup is answered: a lost connection or a cancellation ends the call anyway
 * (`throw`); a role that may not read the definitions (insufficient_privilege, e.g. on
 * pg_get_viewdef) leaves statements to the output screen; any other server error fails safe.
 */
function onFailure(error: unknown): 'throw' | 'output-screen' | 'analyse' {
  const e = error as { severity?: unknown; code?: unknown } | null;
  if (e?.severity !== 'ERROR' || typeof e.code !== 'string' || e.code === '57014') return 'throw';
  return e.code === '42501' ? 'output-screen' : 'analyse';
}

const FAILURE_MESSAGES = {
  'output-screen':
    'credential screen: the list of views and functions that may read credentials could not be worked out; statements are left to the output screen until it can',
  analyse:
    'credential screen: the list of views and functions that may read credentials could not be worked out; every statement that names a view or function is analysed in full until it can',
} as const;

/**
 * The names a statement uses, lower case, and whether one is a credential catalog: worked out
 * once per verdict (sql-guard keeps a repeated statement's verdict, so a repeated call finds
 * them here).
 */
const namesOf = new WeakMap<GuardResult, { named: string[]; secret: boolean }>();
function namedIn(guard: GuardResult): { named: string[]; secret: boolean } {
  let known = namesOf.get(guard);
  if (!known) {
    const named = [
      ...guard.relations.map((r) => r.name.toLowerCase()),
      ...guard.functions,
      ...guard.columns.flatMap((fields) => fields.slice(1).map((f) => f.toLowerCase())),
    ];
    known = { named, secret: named.some((n) => SECRET_RELATION_NAMES.has(n)) };
    namesOf.set(guard, known);
  }
  return known;
}

export function createCredentialScreen(
  options: { now?: () => number; logger?: ScreenLogger } = {},
): CredentialScreen {
  const now = options.now ?? Date.now;
  let cached: Set<string> | null = null;
  let until = 0;
  // Said once, until the list is worked out again.
  let warned = false;
  return {
    async mayReach(lookup, guard) {
      const { named, secret } = namedIn(guard);
      if (secret) return true;
      if (named.length === 0) return false;
      if (cached === null || now() >= until) {
        try {
          cached = await suspectNames(lookup);
        } catch (error) {
          // Every lookup ran behind a savepoint: the call's block is intact, the statement can
          // run (or be analysed first).
          const answer = onFailure(error);
          if (answer === 'throw') throw error;
          if (!warned) {
            warned = true;
            options.logger?.warn(
              {
                err: {
                  message: (error as Error).message,
                  code: (error as { code?: unknown }).code,
                },
              },
              FAILURE_MESSAGES[answer],
            );
          }
          // A privilege error: the output screen withholds what reads like a credential in
          // the answer. Anything else: the statement may reach one, so it is analysed.
          return answer === 'analyse';
        }
        until = now() + SCREEN_TTL_MS;
        warned = false;
      }
      const suspects = cached;
      return named.some((n) => suspects.has(n));
    },
    invalidate() {
      cached = null;
    },
  };
}
