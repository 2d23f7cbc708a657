// Input schemas are compiled once, when a tool is registered, never per request.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';
import type { ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { JsonSchema } from '../core/json-schema.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv | Ajv2020) => void;

export type ArgumentValidator = (value: unknown) => string[] | null;

const options = { allErrors: true, strict: false, validateFormats: true } as const;
const ajv2020 = new Ajv2020(options);
const ajv07 = new Ajv(options);
addFormats(ajv2020);
addFormats(ajv07);

function engineFor(schema: JsonSchema, owner: string): Ajv | Ajv2020 {
  const dialect = schema['$schema'];
  if (dialect === undefined || (typeof dialect === 'string' && dialect.includes('2020-12'))) {
    return ajv2020;
  }
  if (typeof dialect === 'string' && /draft-0[67]/.test(dialect)) return ajv07;
  throw new AppError(
    ErrorCodes.TOOL_INPUT_INVALID,
    `${owner}: unsupported JSON Schema dialect ${JSON.stringify(dialect)}; use 2020-12 (the default) or draft-07.`,
    { category: 'config' },
  );
}

/** Compile a schema into a validator returning human-readable issues, or null when valid. */
export function compileValidator(schema: JsonSchema, owner: string): ArgumentValidator {
  let validate: ValidateFunction;
  try {
    validate = engineFor(schema, owner).compile(schema);
  } catch (cause) {
    if (cause instanceof AppError) throw cause;
    throw new AppError(
      ErrorCodes.TOOL_INPUT_INVALID,
      `${owner}: invalid JSON Schema (${(cause as Error).message}).`,
      { category: 'config', cause },
    );
  }
  return (value) => {
    if (validate(value)) return null;
    return (validate.errors ?? []).map((e) => {
      const where =
        e.instancePath === '' ? 'arguments' : `arguments${e.instancePath.replaceAll('/', '.')}`;
      const extra =
        e.keyword === 'additionalProperties'
          ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
          : '';
      return `${where} ${e.message ?? 'is invalid'}${extra}`;
    });
  };
}
