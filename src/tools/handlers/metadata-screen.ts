// What a registry handler shows before it is ever called — its description, title, schemas and
// prompt arguments, written at registration by whoever registered it — goes into tools/list,
// resources/list and prompts/list, and so to the model. It is screened once, at load, like the
// catalog's comments: a line of a description that reads like a credential is withheld, and so
// is any string inside a schema (a default, an example, an enum value) and a tag.
import { WITHHELD, withholdCredential } from '../../core/credential-shape.js';
import type { JsonSchema } from '../../core/json-schema.js';
import type {
  PromptArgumentSpec,
  PromptSpec,
  ResourceSpec,
  ResourceTemplateSpec,
  ToolSpec,
} from '../../core/specs.js';
import { screenValue, type Tally } from '../output-screen.js';

/** A text shown as it is, except the lines that read like a credential. */
function screenText(text: string): string {
  const lines = text.split('\n');
  const screened = lines.map((line) => withholdCredential(line));
  return screened.some((line, i) => line !== lines[i]) ? screened.join('\n') : text;
}

function screenOptional(text: string | undefined): string | undefined {
  return text === undefined ? undefined : screenText(text);
}

/**
 * A schema with what reads like a credential withheld. A property name shaped like one withholds
 * its object; when that is the schema itself, what is left is a schema that says so.
 */
function screenSchema(schema: JsonSchema): JsonSchema {
  const tally: Tally = { count: 0 };
  const screened = screenValue(schema, tally);
  if (typeof screened === 'object' && screened !== null) return screened;
  return { type: 'object', description: WITHHELD };
}

function screenList(items: readonly string[]): readonly string[] {
  const screened = items.map((item) => withholdCredential(item));
  return screened.some((item, i) => item !== items[i]) ? screened : items;
}

function screenArguments(args: PromptArgumentSpec[]): PromptArgumentSpec[] {
  let changed = false;
  const out = args.map((arg) => {
    const name = withholdCredential(arg.name);
    const description = screenOptional(arg.description);
    if (name === arg.name && description === arg.description) return arg;
    changed = true;
    return { ...arg, name, ...(description === undefined ? {} : { description }) };
  });
  return changed ? out : args;
}

/** The fields every kind of handler shows; the spec itself when none of them changed. */
function screenShown<T extends { title?: string; description?: string }>(spec: T): T {
  const title = screenOptional(spec.title);
  const description = screenOptional(spec.description);
  if (title === spec.title && description === spec.description) return spec;
  return {
    ...spec,
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
  };
}

export function screenToolMetadata(spec: ToolSpec): ToolSpec {
  const shown = screenShown(spec);
  const inputSchema = screenSchema(spec.inputSchema);
  const outputSchema = spec.outputSchema && screenSchema(spec.outputSchema);
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

export function screenPromptMetadata(spec: PromptSpec): PromptSpec {
  const shown = screenShown(spec);
  const args = spec.arguments && screenArguments(spec.arguments);
  if (shown === spec && args === spec.arguments) return spec;
  return { ...shown, ...(args ? { arguments: args } : {}) };
}

export function screenResourceMetadata<T extends ResourceSpec | ResourceTemplateSpec>(spec: T): T {
  return screenShown(spec);
}
