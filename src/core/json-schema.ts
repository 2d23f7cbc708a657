/** A JSON Schema object as sent on the wire; kept verbatim (2020-12 keywords included). */
export type JsonSchema = Record<string, unknown>;

export const EMPTY_OBJECT_SCHEMA: JsonSchema = Object.freeze({
  type: 'object',
  additionalProperties: false,
}) as JsonSchema;
