// Without an access policy, a statement is analysed for credentials only when it could reach
// them: when it names a catalog relation that holds them, or a view or function of the database
// that may read one. The names of those views and functions are worked out once per period on
// a call's own connection and cached, so an ordinary statement costs no lookup at all. A view
// or function created since the last refresh is caught by the output screen until the next one
// (query-format withholds values shaped like credentials), and pgmcp refreshes at once after a
// write of its own.
import type { Lookup } from '../../db/call-session.js';
import { SECRET_RELATION_NAMES } from '../credentials.js';
import type { GuardResult } from '../sql-guard.js';
import { mentionsSecret } from './policy-judge.js';

/** How long the suspect names are trusted before they are worked out again. */
const SCREEN_TTL_MS = 30_000;

const USER = `NOT IN ('pg_catalog', 'information_schema')`;

// The dependency catalog records no reference to a system catalog (they are pinned): a view's
// own definition says whether it reads one.
const VIEWS_SQL = `SELECT c.relname AS name, pg_catalog.pg_get_viewdef(c.oid) AS body
FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace AND n.nspname ${USER}
WHERE c.relkind IN ('v', 'm')`;

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

/** Functions of the database (not built in, not from an extension) and their bodies. */
const FUNCTIONS_SQL = `SELECT p.proname AS name,
  coalesce(pg_catalog.pg_get_function_sqlbody(p.oid), p.prosrc) AS body
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace AND n.nspname ${USER}
WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend e
  WHERE e.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND e.objid = p.oid AND e.deptype = 'e')`;

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

/** Names (lower case) of the views and functions that may read credentials. */
async function suspectNames(lookup: Lookup): Promise<Set<string>> {
  const suspects = new Set<string>();
  const views = await lookup.query<{ name: string; body: string | null }>(VIEWS_SQL);
  const functions = await lookup.query<{ name: string; body: string | null }>(FUNCTIONS_SQL);
  const edges = await lookup.query<{ view: string; target: string }>(EDGES_SQL);
  const bodies = [...views.rows, ...functions.rows].map((f) => ({
    name: f.name.toLowerCase(),
    body: (f.body ?? '').toLowerCase(),
  }));
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

export function createCredentialScreen(now: () => number = Date.now): CredentialScreen {
  let cached: Set<string> | null = null;
  let until = 0;
  return {
    async mayReach(lookup, guard) {
      const named = [
        ...guard.relations.map((r) => r.name.toLowerCase()),
        ...guard.functions,
        ...guard.columns.flatMap((fields) => fields.slice(1).map((f) => f.toLowerCase())),
      ];
      if (named.some((n) => SECRET_RELATION_NAMES.has(n))) return true;
      if (named.length === 0) return false;
      if (cached === null || now() >= until) {
        cached = await suspectNames(lookup);
        until = now() + SCREEN_TTL_MS;
      }
      const suspects = cached;
      return named.some((n) => suspects.has(n));
    },
    invalidate() {
      cached = null;
    },
  };
}
