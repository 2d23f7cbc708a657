// Names a statement gives PostgreSQL without a regclass cast the catalog filter could see: type
// names (`NULL::app.t`, `ROW(…)::app.t`, `'{}'::app.t[]`, a column definition list's types) and
// string constants PostgreSQL turns into a reg type by their context (`CASE … ELSE 'app.t' END`
// beside a regclass, `nextval('app.t_id_seq')`, an element of `ARRAY['x'::regclass, 'app.t']`).
// catalog-judge.ts resolves them on the call's connection and answers a denied one as
// PostgreSQL answers a missing one. Which constants PostgreSQL types as a reg type is asked of
// PostgreSQL itself: the statement is PREPAREd with those constants as parameters, and the
// parameter types it infers say (parse analysis only: nothing of the statement runs).
import { scanSync } from 'libpg-query';
import type { Lookup } from '../../db/call-session.js';
import { shieldedQuery } from '../../db/shielded.js';
import { nameParts, visitNodes } from '../common/parse-tree.js';
import { readName, type WrittenName } from './written-name.js';

/** A type named in the statement's text (a cast, a column definition list …). */
export interface TypeRef extends WrittenName {
  /** Byte offset of the type name in the text. */
  location: number;
}

/** A string constant whose type PostgreSQL decides by its context, naming something. */
export interface NameLiteral {
  /** The names it holds: one, or an array literal's elements (`{a.b,c.d}`). */
  names: WrittenName[];
  /** Byte offset of the constant in the text. */
  location: number;
}

/** The names a string constant holds: itself, or the elements of an array literal. */
export function namesIn(text: string): WrittenName[] {
  const t = text.trim();
  if (t.startsWith('{') && t.endsWith('}')) {
    const out: WrittenName[] = [];
    // Elements split at commas outside double quotes; quoted elements lose their quotes.
    let current = '';
    let quoted = false;
    const push = (): void => {
      const element = current
        .trim()
        .replace(/^"(.*)"$/s, '$1')
        .replace(/\\(.)/g, '$1');
      const name = readName(element);
      if (name && !name.array) out.push(name);
      current = '';
    };
    for (const ch of t.slice(1, -1)) {
      if (ch === '"') quoted = !quoted;
      if (ch === ',' && !quoted) push();
      else current += ch;
    }
    push();
    return out;
  }
  const name = readName(text);
  return name ? [name] : [];
}

/** A TypeName node's body, wherever the tree holds one. */
interface TypeNameBody {
  names?: unknown;
  arrayBounds?: unknown[];
  location?: number;
  pct_type?: boolean;
}

/** Every type the statement names (casts, column definitions …), with where it is written. */
export function typeRefs(tree: unknown): TypeRef[] {
  const out: TypeRef[] = [];
  const add = (body: TypeNameBody): void => {
    const parts = nameParts(body.names);
    if (parts.length === 0 || body.location === undefined) return;
    out.push({
      parts,
      array: Array.isArray(body.arrayBounds) && body.arrayBounds.length > 0,
      location: body.location,
    });
  };
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (
        (key === 'typeName' || key === 'TypeName' || key === 'ofType') &&
        typeof value === 'object' &&
        value !== null &&
        'names' in value
      )
        add(value as TypeNameBody);
      walk(value);
    }
  };
  walk(tree);
  return out;
}

/**
 * String constants whose type PostgreSQL infers (not given by a cast, nor judged as a catalog
 * function's argument: `skip`) and that read as one or more names.
 */
export function nameLiterals(tree: unknown, skip: WeakSet<object>): NameLiteral[] {
  const out: NameLiteral[] = [];
  const typed = new WeakSet<object>();
  visitNodes(tree, (type, body) => {
    if (type === 'TypeCast') {
      const arg = (body as { arg?: unknown }).arg;
      if (arg && typeof arg === 'object' && 'A_Const' in arg)
        typed.add((arg as { A_Const: object }).A_Const);
      return;
    }
    if (type !== 'A_Const') return;
    const c = body as { sval?: { sval?: string }; location?: number };
    if (!c.sval || c.location === undefined || typed.has(c) || skip.has(c)) return;
    const names = namesIn(c.sval.sval ?? '');
    if (names.length > 0) out.push({ names, location: c.location });
  });
  return out;
}

/** The highest `$n` the statement uses (its own parameters come before the probe's). */
function highestParam(tree: unknown): number {
  let max = 0;
  visitNodes(tree, (type, body) => {
    if (type === 'ParamRef') max = Math.max(max, (body as { number?: number }).number ?? 0);
  });
  return max;
}

let probes = 0;

/**
 * The type PostgreSQL gives each of `literals` in `sql` (`regclass`, `text`, `regtype[]` …):
 * the statement is prepared with those constants replaced by parameters, and the parameter
 * types it infers are read back. Null when PostgreSQL cannot prepare it (then nothing is
 * known). Parse analysis only: nothing of the statement is executed; the prepared statement
 * is deallocated at once.
 */
export async function literalTypes(
  lookup: Lookup,
  sql: string,
  tree: unknown,
  literals: readonly NameLiteral[],
): Promise<string[] | null> {
  const bytes = Buffer.from(sql, 'utf8');
  const tokens = scanSync(sql).tokens;
  const first = highestParam(tree) + 1;
  const edits: { start: number; end: number; text: string }[] = [];
  for (const [k, literal] of literals.entries()) {
    const token = tokens.find((t) => t.start === literal.location);
    if (!token) return null;
    edits.push({ start: token.start, end: token.end, text: `$${first + k}` });
  }
  let out = bytes;
  for (const e of [...edits].sort((a, b) => b.start - a.start))
    out = Buffer.concat([out.subarray(0, e.start), Buffer.from(e.text), out.subarray(e.end)]);
  // A name of its own per probe: a probe never meets another's statement.
  const name = `pgmcp_types_${process.pid}_${++probes}`;
  try {
    await shieldedQuery(lookup, `PREPARE ${name} AS ${out.toString('utf8')}`);
  } catch {
    return null;
  }
  try {
    const { rows } = await shieldedQuery<{ types: string[] }>(
      lookup,
      `SELECT parameter_types::pg_catalog.text[] AS types FROM pg_catalog.pg_prepared_statements WHERE name = $1`,
      [name],
    );
    const types = rows[0]?.types ?? [];
    return literals.map((_, k) => types[first - 1 + k] ?? 'unknown');
  } finally {
    await shieldedQuery(lookup, `DEALLOCATE ${name}`).catch(() => undefined);
  }
}
