// What a statement (or a view's or function's body) asks of the catalog by name: the constant
// arguments of catalog functions and reg* casts, to_regclass-style lookups, type names and
// string constants PostgreSQL reads as names. collect() walks the parse tree and refuses what
// cannot be judged (a computed argument, an oid); catalog-judge.ts judges the rest.
import { SYSTEM } from './catalog-filters.js';
import {
  ALTERNATIVE,
  missing,
  NAMING,
  refuse,
  REFUSED_FUNCTIONS,
  REG_TYPES,
  REL1,
  STAT_FUNCTION,
  type Arg,
} from './catalog-functions.js';
import { nameLiterals, typeRefs, type NameLiteral, type TypeRef } from './catalog-names.js';
import { nameParts, visitNodes } from '../common/parse-tree.js';
import { relationName } from './written-name.js';
/** A constant argument: its text, whether it was a number, and the reg* type it is cast to. */
interface Constant {
  text: string;
  numeric: boolean;
  cast: string | null;
}

function constantOf(node: unknown): Constant | null {
  const n = node as Record<string, unknown> | null;
  if (!n || typeof n !== 'object') return null;
  const c = n['A_Const'] as Record<string, { sval?: string; ival?: number }> | undefined;
  if (c) {
    if (c['sval']) return { text: c['sval'].sval ?? '', numeric: false, cast: null };
    if (c['ival']) return { text: String(c['ival'].ival ?? 0), numeric: true, cast: null };
    return null;
  }
  const t = n['TypeCast'] as {
    arg?: unknown;
    typeName?: { names?: unknown; arrayBounds?: unknown };
  };
  if (t) {
    if (t.typeName?.arrayBounds) return null;
    const inner = constantOf(t.arg);
    if (!inner) return null;
    const names = nameParts(t.typeName?.names);
    const type = (names[names.length - 1] ?? '').toLowerCase();
    return { ...inner, cast: REG_TYPES.has(type) ? type : inner.cast };
  }
  return null;
}

export interface Use {
  /** Where the use is (for refusals): the statement, or a view or function. */
  label: string;
  /**
   * to_regclass, to_regtype and to_regnamespace answer NULL for a missing name: the statement
   * can be sent with a NULL argument where the name is denied (a view's or function's body
   * cannot, and its calls are judged like casts).
   */
  lookups: boolean;
}

/** Functions that answer NULL for a name that names nothing, and what they name. */
const LOOKUPS: Record<string, 'rel' | 'type' | 'schema'> = {
  to_regclass: 'rel',
  to_regtype: 'type',
  to_regnamespace: 'schema',
};

/** A call of one of LOOKUPS on a constant name: answered NULL when the name is denied. */
export interface NameLookup {
  kind: 'rel' | 'type' | 'schema';
  /** The name as written in the constant, resolved by the same function PostgreSQL calls. */
  text: string;
  /** Byte offset of the call in the statement. */
  location: number;
}

/** What a statement's text asks of the catalog, collected from its tree. */
export interface Wants {
  rels: { parts: string[]; text: string }[];
  schemas: string[];
  types: { parts: string[]; text: string }[];
  columns: { rel: string[]; column: string | number }[];
  lookups: NameLookup[];
  /** Types the text names (casts, column definition lists …): judged by name. */
  typeRefs: TypeRef[];
  /** String constants that read as names, their type left to PostgreSQL. */
  literals: NameLiteral[];
}

export function collect(tree: unknown, use: Use): Wants {
  const wants: Wants = {
    rels: [],
    schemas: [],
    types: [],
    columns: [],
    lookups: [],
    typeRefs: [],
    literals: [],
  };
  // Constants judged as a catalog function's argument are not judged again as literals.
  const named = new WeakSet<object>();
  const argConst = (arg: unknown): void => {
    if (arg && typeof arg === 'object' && 'A_Const' in arg)
      named.add((arg as { A_Const: object }).A_Const);
  };
  const judgeConstant = (c: Constant | null, kind: Arg, what: string): string[] | null => {
    if (!c)
      throw refuse(
        `Refused: ${use.label}${what} is given a computed value; under an access policy it may only name a visible object by a constant (as in '${kind === 'schema' ? 'app' : 'app.orders'}'${kind === 'rel' ? '::regclass' : ''}), or it could name what the policy hides.`,
      );
    if (c.numeric)
      throw refuse(
        `Refused: ${use.label}${what} names an object by its oid; under an access policy name it (as in 'app.orders'::regclass), or it could name what the policy hides.`,
      );
    const parts = relationName(c.text);
    if (!parts)
      throw missing(kind === 'schema' ? 'schema' : kind === 'type' ? 'type' : 'relation', c.text);
    return parts;
  };
  const addKind = (kind: Arg, c: Constant | null, what: string): string[] | null => {
    // The cast decides what a constant names (obj_description('app'::regnamespace, …)).
    const effective: Arg =
      c?.cast === 'regnamespace' ? 'schema' : c?.cast === 'regtype' ? 'type' : kind;
    if (c?.cast && !['regclass', 'regnamespace', 'regtype', 'regrole'].includes(c.cast))
      throw refuse(
        `Refused: ${use.label}a cast to ${c.cast} reads the catalog by name, and under an access policy only regclass, regtype, regnamespace and regrole are judged. ${ALTERNATIVE}.`,
      );
    if (c?.cast === 'regrole') return null;
    const parts = judgeConstant(c, effective, what);
    if (!parts) return null;
    if (effective === 'schema') {
      if (parts.length !== 1) throw missing('schema', c!.text);
      wants.schemas.push(parts[0]!);
    } else if (effective === 'type') wants.types.push({ parts, text: c!.text });
    else wants.rels.push({ parts, text: c!.text });
    return parts;
  };
  // A cast handled as a function's argument is not judged again as a cast.
  const judged = new WeakSet<object>();
  visitNodes(tree, (type, body) => {
    if (type === 'FuncCall') {
      const call = body as { funcname?: unknown; args?: unknown[] };
      const parts = nameParts(call.funcname);
      const name = (parts[parts.length - 1] ?? '').toLowerCase();
      const args = call.args ?? [];
      if (REFUSED_FUNCTIONS(name))
        throw refuse(
          `Refused: ${use.label}calls ${name}, which can show or name what the access policy hides (a definition, or the object behind an oid). ${ALTERNATIVE}.`,
        );
      const lookup = LOOKUPS[name];
      const only = args.length === 1 ? constantOf(args[0]) : null;
      const location = (call as { location?: number }).location;
      if (use.lookups && lookup && only && !only.numeric && !only.cast && location !== undefined) {
        // PostgreSQL resolves the name; a denied one is then sent as NULL (checkCatalog).
        wants.lookups.push({ kind: lookup, text: only.text, location });
        argConst(args[0]);
        const arg = args[0];
        if (arg && typeof arg === 'object' && 'TypeCast' in arg)
          judged.add((arg as { TypeCast: object }).TypeCast);
        return;
      }
      const shapes = NAMING[name] ?? (STAT_FUNCTION.test(name) ? REL1 : undefined);
      if (!shapes) return;
      const shape = shapes.find((s) => s.length === args.length);
      if (!shape)
        throw refuse(`Refused: ${use.label}calls ${name} in a form pgmcp does not judge.`);
      let rel: string[] | null = null;
      shape.forEach((kind, i) => {
        const arg = args[i];
        if (kind === 'free') return;
        argConst(arg);
        const c = constantOf(arg);
        if (arg && typeof arg === 'object' && 'TypeCast' in arg)
          judged.add((arg as { TypeCast: object }).TypeCast);
        if (kind === 'column' || kind === 'attnum') {
          if (!c || !rel)
            throw refuse(
              `Refused: ${use.label}${name} is given a computed column; under an access policy name it by a constant.`,
            );
          wants.columns.push({
            rel,
            column: kind === 'attnum' && c.numeric ? Number(c.text) : c.text,
          });
          return;
        }
        const parts = addKind(kind, c, `${name}'s argument `);
        if (kind === 'rel' && parts) rel = parts;
      });
    } else if (type === 'TypeCast') {
      if (judged.has(body as object)) return;
      const cast = body as { typeName?: { names?: unknown; arrayBounds?: unknown }; arg?: unknown };
      const names = nameParts(cast.typeName?.names);
      const target = (names[names.length - 1] ?? '').toLowerCase();
      if (!REG_TYPES.has(target)) return;
      if (target === 'regrole') return;
      if (cast.typeName?.arrayBounds)
        throw refuse(
          `Refused: ${use.label}casts to ${target}[]; under an access policy cast one constant name at a time.`,
        );
      const c = constantOf(cast.arg);
      // Nested casts ('x'::text::regclass) are one constant: judge the outermost only.
      if (cast.arg && typeof cast.arg === 'object' && 'TypeCast' in cast.arg)
        judged.add((cast.arg as { TypeCast: object }).TypeCast);
      addKind(
        target === 'regnamespace' ? 'schema' : target === 'regtype' ? 'type' : 'rel',
        c ? { ...c, cast: target } : null,
        `a cast to ${target} `,
      );
    }
  });
  wants.typeRefs = typeRefs(tree).filter((t) => !SYSTEM.has(t.parts[t.parts.length - 2] ?? ''));
  wants.literals = nameLiterals(tree, named);
  return wants;
}
