// The type table: a PostgreSQL type → the JSON Schema of the argument a client sends and of the
// value it gets back. docs/sql-tools.md ("The type table") documents the same rows.
import type { JsonSchema } from '../../core/json-schema.js';
import type { PgTypeDescriptor } from '../../catalog/routines.js';

export type TypeMap = ReadonlyMap<number, PgTypeDescriptor>;

/** A type the table cannot express (a pseudo-type such as anyelement, or an unknown oid). */
class UnsupportedTypeError extends Error {
  constructor(readonly typeName: string) {
    super(`type ${typeName} has no JSON form`);
  }
}

const INT_BOUNDS: Record<string, [number, number]> = {
  int2: [-32768, 32767],
  int4: [-2147483648, 2147483647],
};
const INTEGER_TEXT = '^-?[0-9]+$';
const NUMERIC_TEXT = '^(-?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][-+]?[0-9]+)?|NaN|-?Infinity)$';
const LOCAL_TIMESTAMP = '^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?$';
const LOCAL_TIME = '^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?$';
// What to_json writes for dates and timestamps that RFC 3339 has no form for: infinity,
// -infinity, years before 1 (" BC") or after 9999, and offsets with seconds (local mean time).
const PG_DATE_OUT = '^(-?infinity|[0-9]{4,}-[0-9]{2}-[0-9]{2}( BC)?)$';
const PG_TIMESTAMP_OUT =
  '^(-?infinity|[0-9]{4,}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([+-][0-9]{2}(:[0-9]{2}){0,2})?( BC)?)$';

// And for a time with time zone: 24:00:00 (the end of a day, which PostgreSQL keeps apart from
// 00:00:00), an offset without minutes, or with seconds.
const PG_TIMETZ_OUT = '^[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?[+-][0-9]{2}(:[0-9]{2}){0,2}$';
const PG_OUT = { date: PG_DATE_OUT, 'date-time': PG_TIMESTAMP_OUT, time: PG_TIMETZ_OUT } as const;

/** An RFC 3339 format, or for a result also PostgreSQL's own form of what it cannot express. */
function dateLike(format: 'date' | 'date-time' | 'time', direction: Direction): JsonSchema {
  if (direction === 'input') return { type: 'string', format };
  return { type: 'string', anyOf: [{ format }, { pattern: PG_OUT[format] }] };
}
// Node's base64 decoder skips what it cannot read ('!!!' decodes to nothing): an argument must
// be base64 (padding optional) to be taken at all.
export const BASE64 = '^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}(==)?|[A-Za-z0-9+/]{3}=?)?$';
// bytea in PostgreSQL's text form (a composite argument's field): \x and hex pairs.
const BYTEA_HEX_TEXT = '^\\\\x([0-9a-fA-F]{2})*$';

/** Where a schema is used: arguments, or values read back from PostgreSQL. */
export type Direction = 'input' | 'output';

function baseSchema(
  type: PgTypeDescriptor,
  typmod: number,
  direction: Direction,
  nested: boolean,
  inJson: boolean,
): JsonSchema {
  const name = type.schema === 'pg_catalog' ? type.name : '';
  switch (name) {
    case 'int2':
    case 'int4': {
      const [minimum, maximum] = INT_BOUNDS[name]!;
      return { type: 'integer', minimum, maximum };
    }
    case 'int8':
      // Beyond ±2^53 a JSON number loses digits: accept (and return) such values as strings.
      return {
        type: ['integer', 'string'],
        pattern: INTEGER_TEXT,
        description: 'int8: a JSON integer, or a string of digits beyond ±2^53.',
      };
    case 'numeric':
      return {
        type: ['number', 'string'],
        pattern: NUMERIC_TEXT,
        description:
          'numeric: a JSON number or a decimal string (strings keep every digit; results are strings).',
      };
    case 'float4':
    case 'float8':
      // Non-finite results (NaN, Infinity) can only come back as strings.
      return direction === 'input' ? { type: 'number' } : { type: ['number', 'string'] };
    case 'bool':
      return { type: 'boolean' };
    case 'varchar':
    case 'bpchar': {
      // Function parameters lose their typmod; a domain or a composite attribute keeps it.
      const schema: JsonSchema = { type: 'string' };
      if (typmod > 4) schema['maxLength'] = typmod - 4;
      return schema;
    }
    case 'text':
    case 'name':
    case 'char':
    case 'citext':
      return { type: 'string' };
    case 'uuid':
      return { type: 'string', format: 'uuid' };
    case 'date':
      return dateLike('date', direction);
    case 'timetz':
      return dateLike('time', direction);
    case 'time':
      return { type: 'string', pattern: LOCAL_TIME, description: 'time of day, no offset' };
    case 'timestamptz':
      return dateLike('date-time', direction);
    case 'timestamp':
      // RFC 3339 date-time requires an offset, which a timestamp without time zone ignores.
      return {
        type: 'string',
        pattern: direction === 'input' ? LOCAL_TIMESTAMP : PG_TIMESTAMP_OUT,
        description: 'local date and time, no offset',
      };
    case 'interval':
      return { type: 'string', description: "interval, e.g. '1 day 02:00:00' or 'P1DT2H'" };
    case 'json':
    case 'jsonb':
      return { description: 'any JSON value' };
    case 'bytea':
      // Inside an array or composite, results come through to_json, which writes bytea as hex;
      // a composite argument's fields are read as text, where bytea is hex too.
      if ((direction === 'output' && nested) || (direction === 'input' && inJson)) {
        return {
          type: 'string',
          description: 'bytea as hex text (\\x…)',
          ...(direction === 'input' ? { pattern: BYTEA_HEX_TEXT } : {}),
        };
      }
      return direction === 'input'
        ? { type: 'string', contentEncoding: 'base64', pattern: BASE64 }
        : { type: 'string', contentEncoding: 'base64' };
    default:
      // Any other base, range or multirange type travels as its text form (inet, money, int4range…),
      // unless to_json writes a result through the type's cast to json (hstore, PostGIS geometry).
      if (direction === 'output' && type.jsonCast === true) return jsonCastSchema(type);
      return { type: 'string', description: `${type.sql} in PostgreSQL's text form` };
  }
}

/** The JSON Schema of a value of type `oid` (typmod as declared where known, else -1). */
export function schemaForType(
  types: TypeMap,
  oid: number,
  direction: Direction,
  typmod = -1,
  nested = false,
  depth = 0,
  inJson = false,
): JsonSchema {
  const type = types.get(oid);
  if (!type) throw new UnsupportedTypeError(`oid ${oid}`);
  if (depth > 16) throw new UnsupportedTypeError(`${type.sql} (nested too deeply)`);
  switch (type.kind) {
    case 'array': {
      const element = schemaForType(
        types,
        type.elementOid!,
        direction,
        typmod,
        true,
        depth + 1,
        inJson,
      );
      return arraySchema(nullable(element), direction);
    }
    case 'enum':
      if (direction === 'output' && type.jsonCast === true) return jsonCastSchema(type);
      return { type: 'string', enum: [...type.labels] };
    case 'domain':
      return schemaForType(types, type.baseOid!, direction, type.typmod, nested, depth + 1, inJson);
    case 'composite': {
      const properties: Record<string, JsonSchema> = {};
      for (const a of type.attributes) {
        properties[a.name] = nullable(
          // A composite argument travels as JSON read by json_populate_record: its fields
          // are in PostgreSQL's text form.
          schemaForType(types, a.typeOid, direction, a.typmod, true, depth + 1, true),
        );
      }
      const schema: JsonSchema = { type: 'object', properties };
      if (direction === 'input') schema['additionalProperties'] = false;
      else schema['required'] = type.attributes.map((a) => a.name);
      return schema;
    }
    case 'pseudo':
      throw new UnsupportedTypeError(type.sql);
    default:
      return baseSchema(type, typmod, direction, nested, inJson);
  }
}

/** PostgreSQL's limit on the dimensions of an array value (MAXDIM). */
export const MAX_ARRAY_DIMENSIONS = 6;

/**
 * An array of `item`. Whatever its declared type, an array value may have up to six dimensions
 * ('{{1,2},{3,4}}' is an int[]), and a result comes back as nested JSON arrays: each level's
 * items are then an element or a deeper array, spelled out level by level (no $ref, which some
 * clients do not resolve). Arguments stay one-dimensional: each item is one element.
 */
function arraySchema(item: JsonSchema, direction: Direction): JsonSchema {
  if (direction === 'input' || acceptsAnything(item)) return { type: 'array', items: item };
  // The deeper levels repeat the element without its description.
  const { description: _, ...bare } = item;
  let deeper: JsonSchema = { type: 'array', items: bare };
  for (let level = MAX_ARRAY_DIMENSIONS - 1; level > 1; level--) {
    deeper = { type: 'array', items: { anyOf: [bare, deeper] } };
  }
  return { type: 'array', items: { anyOf: [item, deeper] } };
}

/** A schema that constrains nothing (json, a type with a cast to json): arrays included. */
function acceptsAnything(schema: JsonSchema): boolean {
  return Object.keys(schema).every((key) => key === 'description' || key === 'title');
}

/** A result to_json writes through the type's own cast to json: whatever JSON that makes. */
function jsonCastSchema(type: PgTypeDescriptor): JsonSchema {
  return { description: `${type.sql}: the JSON its cast to json makes` };
}

/** The same schema, also allowing null (SQL NULL). */
export function nullable(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema['enum'])) {
    const out: JsonSchema = { ...schema, enum: [...(schema['enum'] as unknown[]), null] };
    if (typeof schema['type'] === 'string') out['type'] = [schema['type'], 'null'];
    return out;
  }
  const type = schema['type'];
  if (typeof type === 'string') return { ...schema, type: [type, 'null'] };
  if (Array.isArray(type))
    return type.includes('null') ? schema : { ...schema, type: [...type, 'null'] };
  return schema; // no type: anything, null included
}

/** Follow domains to the type underneath. */
export function resolveDomain(types: TypeMap, oid: number): PgTypeDescriptor | undefined {
  let type = types.get(oid);
  for (let i = 0; type?.kind === 'domain' && i < 16; i++) type = types.get(type.baseOid!);
  return type;
}

/** pg_catalog base-type name under domains, or null for arrays, composites, enums. */
export function baseName(types: TypeMap, oid: number): string | null {
  const type = resolveDomain(types, oid);
  if (!type || type.schema !== 'pg_catalog') return null;
  return type.kind === 'base' ? type.name : null;
}
