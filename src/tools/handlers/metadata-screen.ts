// What a registry handler shows before it is ever called — its description, title, schemas and
// prompt arguments, written at registration by whoever registered it — goes into tools/list,
// resources/list and prompts/list, and so to the model. It is screened once, at load, like the
// catalog's comments. What is only shown (a description line, a schema's `title`, `description`,
// `default`, `examples`, a tag) is withheld where it reads like a credential. What also decides
// which arguments are accepted (an `enum` value, a `const`, a `pattern`, a property or argument
// name), and the handler's own name or URI, cannot be changed without changing the handler:
// such a handler is not served at all.
import { AppError, ErrorCodes } from '../../core/errors.js';
import { looksLikeCredential, withholdCredentialLines } from '../../core/credential-shape.js';
import type { JsonSchema } from '../../core/json-schema.js';
import type {
  PromptArgumentSpec,
  PromptSpec,
  ResourceSpec,
  ResourceTemplateSpec,
  ToolSpec,
} from '../../core/specs.js';
import { mapScreened, screenValue, type Tally } from '../output-screen.js';

/** A shown text screened; anything that is not a string (a pgmi row's null) as it is. */
function screenShownText<T>(value: T): T {
  return (typeof value === 'string' ? withholdCredentialLines(value) : value) as T;
}

/** Schema keywords that only describe: screened in place. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', 'example', '$comment']);
/** Keywords whose value maps names (of properties, definitions) to schemas. */
const NAMED_SCHEMAS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  '$defs',
  'definitions',
]);

function unservable(where: string): AppError {
  return new AppError(
    ErrorCodes.CONFIG_INVALID,
    `its ${where} reads like a credential (a password hash or a connection string with a password); it is not served`,
    { category: 'config' },
  );
}

/** Any value that is or holds (as a string or an object key) something shaped like a credential. */
function refuseCredential(value: unknown, where: string): void {
  if (typeof value === 'string') {
    if (looksLikeCredential(value)) throw unservable(where);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (looksLikeCredential(key)) throw unservable(where);
    refuseCredential(item, where);
  }
}

/**
 * A schema with its annotations screened in place (the same object when nothing changed).
 * Anything else that reads like a credential — a keyword's value (`enum`, `const`, `pattern`,
 * `required` …) or a property name — throws `unservable`.
 */
function screenSchemaNode(node: unknown, where: string): unknown {
  if (Array.isArray(node)) return mapScreened(node, (item) => screenSchemaNode(item, where));
  if (typeof node !== 'object' || node === null) {
    refuseCredential(node, where);
    return node;
  }
  const record = node as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const key of Object.keys(record)) {
    if (looksLikeCredential(key)) throw unservable(where);
    const value = record[key];
    let screened: unknown;
    if (ANNOTATIONS.has(key)) screened = screenValue(value, { count: 0 } satisfies Tally);
    else if (NAMED_SCHEMAS.has(key) && typeof value === 'object' && value !== null) {
      screened = screenNamedSchemas(value as Record<string, unknown>, where);
    } else if (key === 'enum' || key === 'const') {
      // Values, not schemas: whatever their shape, they decide what is accepted.
      refuseCredential(value, where);
      screened = value;
    } else screened = screenSchemaNode(value, where);
    if (screened !== value) (out ??= { ...record })[key] = screened;
  }
  return out ?? node;
}

/** `properties` and its kind: each name is checked, each value is a schema. */
function screenNamedSchemas(
  named: Record<string, unknown>,
  where: string,
): Record<string, unknown> {
  let out: Record<string, unknown> | null = null;
  for (const name of Object.keys(named)) {
    if (looksLikeCredential(name)) throw unservable(where);
    const schema = named[name];
    const screened = screenSchemaNode(schema, where);
    if (screened !== schema) (out ??= { ...named })[name] = screened;
  }
  return out ?? named;
}

function screenList(items: readonly string[]): readonly string[] {
  const screened = items.map((item) => screenShownText(item));
  return screened.some((item, i) => item !== items[i]) ? screened : items;
}

function screenArguments(args: PromptArgumentSpec[]): PromptArgumentSpec[] {
  let changed = false;
  const out = args.map((arg) => {
    if (typeof arg?.name === 'string' && looksLikeCredential(arg.name)) {
      throw unservable('argument name');
    }
    const description = screenShownText(arg?.description);
    if (description === arg?.description) return arg;
    changed = true;
    return { ...arg, description };
  });
  return changed ? out : args;
}

/**
 * The fields every kind of handler shows; the spec itself when none of them changed. A name or
 * URI names the handler on every call: one that reads like a credential is not served.
 */
function screenShown<
  T extends { name: string; title?: string; description?: string; uri?: string },
>(spec: T): T {
  const template = (spec as { uriTemplate?: unknown }).uriTemplate;
  for (const [where, value] of [
    ['name', spec.name],
    ['URI', spec.uri],
    ['URI template', template],
  ] as const) {
    if (typeof value === 'string' && looksLikeCredential(value)) throw unservable(where);
  }
  const title = screenShownText(spec.title);
  const description = screenShownText(spec.description);
  if (title === spec.title && description === spec.description) return spec;
  return {
    ...spec,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
  };
}

/** A tool's metadata screened; throws when its schemas cannot be served (see above). */
export function screenToolMetadata(spec: ToolSpec): ToolSpec {
  const shown = screenShown(spec);
  const inputSchema = screenSchemaNode(spec.inputSchema, 'input schema') as JsonSchema;
  const outputSchema =
    spec.outputSchema && (screenSchemaNode(spec.outputSchema, 'output schema') as JsonSchema);
  const tags = spec.tags && screenList(spec.tags);
  if (
    shown === spec &&
    inputSchema === spec.inputSchema &&
    outputSchema === spec.outputSchema &&
    tags === spec.tags
  ) {
    return spec;
  }
  return {
    ...shown,
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    ...(tags ? { tags } : {}),
  };
}

/** A prompt's metadata screened; throws when an argument's name reads like a credential. */
export function screenPromptMetadata(spec: PromptSpec): PromptSpec {
  const shown = screenShown(spec);
  const args = Array.isArray(spec.arguments) ? screenArguments(spec.arguments) : spec.arguments;
  if (shown === spec && args === spec.arguments) return spec;
  return { ...shown, ...(args ? { arguments: args } : {}) };
}

export function screenResourceMetadata<T extends ResourceSpec | ResourceTemplateSpec>(spec: T): T {
  return screenShown(spec);
}
