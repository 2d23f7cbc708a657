// Input schemas are compiled once, never per request: when a tool arrives from the database
// (eager: a schema that does not compile is skipped and reported), or at the first call of a
// built-in tool (lazy: compiling every built-in schema at start was most of a stdio server's
// time to its first answer).
import { createRequire } from 'node:module';
import type * as Ajv2020Module from 'ajv/dist/2020.js';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type * as AjvModule from 'ajv';
import type { Ajv, ValidateFunction } from 'ajv';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { JsonSchema } from '../core/json-schema.js';

// ajv and ajv-formats are CommonJS and large: required (synchronously) with the first schema
// compiled, never at start.
const require = createRequire(import.meta.url);
const addFormats = (ajv: Ajv | Ajv2020): void =>
  (require('ajv-formats') as { default: (ajv: Ajv | Ajv2020) => void }).default(ajv);

export type ArgumentValidator = (value: unknown) => string[] | null;

// addUsedSchema off: a schema's $id is not registered, so the same handler schema compiled again
// at a reload (or in a second database) is not refused as a duplicate.
const options = {
  allErrors: true,
  strict: false,
  validateFormats: true,
  addUsedSchema: false,
} as const;
let ajv2020: Ajv2020 | undefined;
let ajv07: Ajv | undefined;

function engine(dialect: '2020' | '07'): Ajv | Ajv2020 {
  if (dialect === '2020') {
    if (!ajv2020) {
      const { Ajv2020 } = require('ajv/dist/2020.js') as typeof Ajv2020Module;
      addFormats((ajv2020 = new Ajv2020(options)));
    }
    return ajv2020;
  }
  if (!ajv07) {
    const { Ajv } = require('ajv') as typeof AjvModule;
    addFormats((ajv07 = new Ajv(options)));
  }
  return ajv07;
}

function dialectOf(schema: JsonSchema, owner: string): '2020' | '07' {
  const dialect = schema['$schema'];
  if (dialect === undefined || (typeof dialect === 'string' && dialect.includes('2020-12'))) {
    return '2020';
  }
  if (typeof dialect === 'string' && /draft-0[67]/.test(dialect)) return '07';
  throw new AppError(
    ErrorCodes.TOOL_INPUT_INVALID,
    `${owner}: unsupported JSON Schema dialect ${JSON.stringify(dialect)}; use 2020-12 (the default) or draft-07.`,
    { category: 'config' },
  );
}

function compile(schema: JsonSchema, owner: string, dialect: '2020' | '07'): ValidateFunction {
  const ajv = engine(dialect);
  try {
    return ajv.compile(schema);
  } catch (cause) {
    throw new AppError(
      ErrorCodes.TOOL_INPUT_INVALID,
      `${owner}: invalid JSON Schema (${(cause as Error).message}).`,
      { category: 'config', cause },
    );
  } finally {
    // The validator is kept by its tool; ajv's own cache would keep every reload's copy.
    ajv.removeSchema(schema);
  }
}

/**
 * A validator returning human-readable issues, or null when valid. The dialect is checked at
 * once; the schema is compiled now when `eager`, else at the first validation. `subject` names
 * the value in the issues ('arguments', or 'structuredContent' for a tool's output).
 */
export function compileValidator(
  schema: JsonSchema,
  owner: string,
  { eager = true, subject = 'arguments' }: { eager?: boolean; subject?: string } = {},
): ArgumentValidator {
  const dialect = dialectOf(schema, owner);
  let validate: ValidateFunction | undefined = eager ? compile(schema, owner, dialect) : undefined;
  return (value) => {
    validate ??= compile(schema, owner, dialect);
    if (validate(value)) return null;
    return (validate.errors ?? []).map((e) => {
      const where =
        e.instancePath === '' ? subject : `${subject}${e.instancePath.replaceAll('/', '.')}`;
      const extra =
        e.keyword === 'additionalProperties'
          ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
          : e.keyword === 'type'
            ? ` (got ${kindOf(valueAt(value, e.instancePath))})`
            : '';
      return `${where} ${e.message ?? 'is invalid'}${extra}`;
    });
  };
}

/** The value a JSON Pointer (an ajv instancePath) names inside `root`. */
function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const token of pointer.split('/').slice(1)) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    value = (value as Record<string, unknown> | undefined)?.[key];
  }
  return value;
}

/** What a type error got, in words: "an array", "a string", "null"… */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return type === 'object' || type === 'undefined' ? `an ${type}` : `a ${type}`;
}
