// How a routine's result columns are read back and turned into their JSON form. int8 and
// numeric come back as text (a JSON number would lose digits past 2^53 or past a double's
// precision), and so do arrays of them: to_json writes their elements as JSON numbers, which
// JSON.parse rounds, so they are read as text[] and converted element by element.
import { baseName, resolveDomain, type TypeMap } from './type-schema.js';

/** How one column is read: its pg_catalog base name, `int8[]`/`numeric[]`, or null (to_json). */
export function columnRead(types: TypeMap, oid: number): string | null {
  const base = baseName(types, oid);
  if (base !== null) return base;
  const type = resolveDomain(types, oid);
  if (type?.kind !== 'array') return null;
  const element = baseName(types, type.elementOid!);
  return element === 'int8' || element === 'numeric' ? `${element}[]` : null;
}

/** The select-list expression that reads `ref`: exact text, base64 for bytea, else to_json. */
export function columnExpr(types: TypeMap, oid: number, ref: string): string {
  switch (columnRead(types, oid)) {
    case 'int8':
    case 'numeric':
      return `${ref}::pg_catalog.text`;
    case 'int8[]':
    case 'numeric[]':
      return `${ref}::pg_catalog.text[]`;
    case 'bytea':
      return `pg_catalog.translate(pg_catalog.encode(${ref}, 'base64'), E'\\n', '')`;
    default:
      return `pg_catalog.to_json(${ref})`;
  }
}

function int8Value(value: unknown): unknown {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : String(value);
}

/** Every element of a (nested) array read as text[], converted; nulls stay null. */
function mapElements(value: unknown, convert: (v: unknown) => unknown): unknown {
  if (value === null || value === undefined) return null;
  return Array.isArray(value) ? value.map((v) => mapElements(v, convert)) : convert(value);
}

/** A value read back (text, JSON, or a driver value from CALL) → its JSON form. */
export function fromResult(read: string | null, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (read) {
    case 'int8':
      return int8Value(value);
    case 'numeric':
      return String(value);
    case 'int8[]':
      return mapElements(value, int8Value);
    case 'numeric[]':
      return mapElements(value, String);
    case 'bytea':
      return Buffer.isBuffer(value) ? value.toString('base64') : value;
    default:
      return value;
  }
}
