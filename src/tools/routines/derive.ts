// From a routine descriptor to everything a tool needs except running it: the tool name, the
// description, the input schema (one property per input parameter), the return shape and its
// output schema, the transaction mode and the annotations.
import type { JsonSchema } from '../../core/json-schema.js';
import type { ToolAnnotations } from '../../core/specs.js';
import type { RoutineDescriptor } from '../../catalog/routines.js';
import { nullable, resolveDomain, schemaForType, type TypeMap } from './type-schema.js';

/** The tool-name rule of the registry (MCP: 1-128 of A-Z a-z 0-9 _ . -). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

export interface InputParameter {
  /** Property name in the arguments object. */
  property: string;
  /** Parameter name for named notation; null when the parameter is unnamed. */
  sqlName: string | null;
  typeOid: number;
  variadic: boolean;
  optional: boolean;
}

export interface OutputColumn {
  name: string;
  typeOid: number;
}

export type ReturnShape =
  | { kind: 'void' }
  | { kind: 'scalar'; set: boolean; typeOid: number }
  | { kind: 'row'; set: boolean; columns: OutputColumn[] };

export interface DerivedRoutine {
  routine: RoutineDescriptor;
  name: string;
  description: string;
  inputs: InputParameter[];
  shape: ReturnShape;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema | undefined;
  /** Whether calls run in a READ ONLY transaction. */
  readOnly: boolean;
  annotations: ToolAnnotations;
}

export class RoutineNotSupported extends Error {}

/** snake_case: fooBar → foo_bar, "Foo Bar" → foo_bar; other characters outside the rule → _. */
export function toSnakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

export function qualifiedName(r: RoutineDescriptor): string {
  return `${r.schema}.${r.name}`;
}

export function toolNameOf(r: RoutineDescriptor): string {
  return r.annotations.name ?? toSnakeCase(r.name);
}

function returnShape(r: RoutineDescriptor, types: TypeMap): ReturnShape {
  const outs = r.arguments.filter(
    (a) => a.mode === 'out' || a.mode === 'inout' || a.mode === 'table',
  );
  if (outs.length > 0) {
    return {
      kind: 'row',
      set: r.returnsSet,
      columns: outs.map((a, i) => ({ name: a.name ?? `column${i + 1}`, typeOid: a.typeOid })),
    };
  }
  if (r.kind === 'procedure') return { kind: 'void' };
  const type = types.get(r.returnTypeOid);
  if (!type) throw new RoutineNotSupported(`its return type (oid ${r.returnTypeOid}) is unknown`);
  if (type.kind === 'pseudo') {
    if (type.name === 'void') return { kind: 'void' };
    throw new RoutineNotSupported(
      type.name === 'record'
        ? 'it returns an anonymous record: declare OUT parameters, RETURNS TABLE or a composite type'
        : `it returns the pseudo-type ${type.sql}`,
    );
  }
  const resolved = resolveDomain(types, r.returnTypeOid);
  if (resolved?.kind === 'composite') {
    return {
      kind: 'row',
      set: r.returnsSet,
      columns: resolved.attributes.map((a) => ({ name: a.name, typeOid: a.typeOid })),
    };
  }
  return { kind: 'scalar', set: r.returnsSet, typeOid: r.returnTypeOid };
}

/** A set result: its items, and `truncated` when the row or byte cap cut it short. */
function setOf(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: {
      items: { type: 'array', items: item },
      truncated: {
        type: 'boolean',
        description:
          'Present (true) when the set was cut at the row or byte limit: more rows exist.',
      },
    },
    required: ['items'],
  };
}

function outputSchemaOf(shape: ReturnShape, types: TypeMap): JsonSchema | undefined {
  const value = (oid: number): JsonSchema => nullable(schemaForType(types, oid, 'output'));
  const object = (properties: Record<string, JsonSchema>): JsonSchema => ({
    type: 'object',
    properties,
    required: Object.keys(properties),
  });
  switch (shape.kind) {
    case 'void':
      return undefined;
    case 'scalar':
      return shape.set ? setOf(value(shape.typeOid)) : object({ value: value(shape.typeOid) });
    case 'row': {
      const row = object(Object.fromEntries(shape.columns.map((c) => [c.name, value(c.typeOid)])));
      return shape.set ? setOf(row) : row;
    }
  }
}

export interface DeriveOptions {
  /** Whether the database allows writes: VOLATILE routines and procedures then run read-write. */
  allowWrites: boolean;
}

/** Derive a tool from a routine; throws RoutineNotSupported with the reason when it cannot. */
export function deriveRoutine(
  r: RoutineDescriptor,
  types: TypeMap,
  options: DeriveOptions,
): DerivedRoutine {
  const name = toolNameOf(r);
  if (!TOOL_NAME.test(name)) {
    throw new RoutineNotSupported(
      `its tool name "${name}" must be 1-128 characters of A-Z a-z 0-9 _ . - (set @mcp_name)`,
    );
  }
  const inputs: InputParameter[] = [];
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  let position = 0;
  for (const arg of r.arguments) {
    if (arg.mode === 'out' || arg.mode === 'table') continue;
    position++;
    const property = arg.name ?? `arg${position}`;
    let schema: JsonSchema;
    try {
      schema = schemaForType(types, arg.typeOid, 'input');
    } catch (error) {
      throw new RoutineNotSupported(`parameter ${property}: ${(error as Error).message}`);
    }
    const type = types.get(arg.typeOid)!;
    const notes = [`PostgreSQL type ${type.sql}${arg.mode === 'variadic' ? ' (VARIADIC)' : ''}`];
    // A result may have several dimensions (its outputSchema nests); an argument has one.
    if (resolveDomain(types, arg.typeOid)?.kind === 'array') {
      notes.push('a flat list, each item one element');
    }
    if (arg.hasDefault) notes.push('optional: omit it for the default');
    const described = typeof schema['description'] === 'string' ? `${schema['description']} ` : '';
    properties[property] = { ...schema, description: `${described}${notes.join('; ')}.` };
    if (!arg.hasDefault) required.push(property);
    inputs.push({
      property,
      sqlName: arg.name,
      typeOid: arg.typeOid,
      variadic: arg.mode === 'variadic',
      optional: arg.hasDefault,
    });
  }
  const inputSchema: JsonSchema = { type: 'object', properties, additionalProperties: false };
  if (required.length > 0) inputSchema['required'] = required;

  let shape: ReturnShape;
  let outputSchema: JsonSchema | undefined;
  try {
    shape = returnShape(r, types);
    outputSchema = outputSchemaOf(shape, types);
  } catch (error) {
    if (error instanceof RoutineNotSupported) throw error;
    throw new RoutineNotSupported(`its result: ${(error as Error).message}`);
  }

  const readOnly = r.volatility !== 'volatile' || !options.allowWrites;
  const annotations: ToolAnnotations = {
    title: qualifiedName(r),
    readOnlyHint: readOnly,
    ...(readOnly ? { destructiveHint: false } : {}),
    idempotentHint: r.volatility !== 'volatile',
    openWorldHint: false,
  };
  const base = r.annotations.description ?? `Calls the PostgreSQL ${r.kind} ${qualifiedName(r)}.`;
  const roles = r.annotations.authorize;
  const access =
    roles === null
      ? ''
      : roles.length === 0
        ? ' Requires an authenticated caller.'
        : ` Requires one of the roles: ${roles.join(', ')}.`;
  return {
    routine: r,
    name,
    description: `${base}${access}`,
    inputs,
    shape,
    inputSchema,
    outputSchema,
    readOnly,
    annotations,
  };
}
