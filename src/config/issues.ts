// Turns zod's list of issues into the one sentence a person starting pgmcp needs: which key,
// what was expected, what was given (unless it is a secret) and where it was set.
import type { z } from 'zod';
import { AppError, ErrorCodes } from '../core/errors.js';
import { ENV_BOOL_HINT, envVariableNamed } from './env.js';
import { redactUrl } from './redact.js';
import { SECRET_KEYS, SECTIONS, configObject } from './schema.js';

/** Answers "which source set this key?" for a dotted key path such as 'http.port'. */
export type SourceLookup = (key: string) => string | undefined;

type Issue = z.core.$ZodIssue;

export function configError(message: string, key: string, source?: string): AppError {
  return new AppError(ErrorCodes.CONFIG_INVALID, message, {
    category: 'config',
    details: source === undefined ? { key } : { key, source },
  });
}

/** Builds the single CONFIG_INVALID error for a failed parse: the first issue, and a count. */
export function issuesToError(
  issues: readonly Issue[],
  input: unknown,
  sourceOf: SourceLookup,
): AppError {
  const [first] = issues;
  if (first === undefined) return configError('configuration is invalid', '');
  const { key, message, source } = describe(first, input, sourceOf);
  const more = issues.length - 1;
  const tail = more === 0 ? '' : ` (and ${more} more problem${more === 1 ? '' : 's'})`;
  return configError(`${message}${tail}`, key, source);
}

function describe(issue: Issue, input: unknown, sourceOf: SourceLookup) {
  const path = issue.path.map((part) => (typeof part === 'number' ? part : String(part)));
  const key = formatPath(path);
  // The named segments identify a setting ('http.allowedOrigins', 'database.access.denyTables');
  // numeric parts are list items. The longest prefix some source set is the one to name.
  const named = path.filter((part): part is string => typeof part === 'string');
  const settingSource = (): string | undefined => {
    for (let n = named.length; n > 0; n--) {
      const found = sourceOf(named.slice(0, n).join('.'));
      if (found !== undefined) return found;
    }
    return undefined;
  };

  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((name) => JSON.stringify(name)).join(', ');
    const where = key === '' ? 'top-level key' : 'key';
    const plural = issue.keys.length === 1 ? '' : 's';
    const valid = validKeys(key);
    const source = sourceOf(key === '' ? String(issue.keys[0]) : `${key}.${String(issue.keys[0])}`);
    const text =
      `${key === '' ? '' : `${key}: `}unknown ${where}${plural} ${names}` +
      (valid === undefined ? '' : ` (valid keys: ${valid.join(', ')})`);
    return { key, source, message: withSource(text, source) };
  }

  const source = settingSource();
  const variable = source === undefined ? undefined : envVariableNamed(source);
  const expected =
    variable?.kind === 'bool' && issue.code === 'invalid_type'
      ? ENV_BOOL_HINT
      : (related(issue, sourceOf) ?? issue.message);
  const value = holdsSecret(named.slice(0, 2).join('.')) ? undefined : valueAt(input, path);
  const got = value === undefined ? '' : `, got ${show(value)}`;
  return { key, source, message: withSource(`${key}: ${expected}${got}`, source) };
}

// A rule between two keys (database.defaultRows and database.maxRows) names the other key's
// value and where it was set, so that both values appear as the person set them.
function related(issue: Issue, sourceOf: SourceLookup): string | undefined {
  if (issue.code !== 'custom') return undefined;
  const { rule, relatedKey, relatedValue } = (issue.params ?? {}) as Record<string, unknown>;
  if (typeof rule !== 'string' || typeof relatedKey !== 'string') return undefined;
  const source = sourceOf(relatedKey);
  const where = source === undefined ? 'the default' : `from ${source}`;
  return `${rule} ${relatedKey} (${show(relatedValue)}, ${where})`;
}

// A whole section given as a scalar may be the secret written one level too high
// (`server: <secret>`), so a section that holds a secret is never echoed either.
function holdsSecret(setting: string): boolean {
  for (const secret of SECRET_KEYS) {
    if (secret === setting || secret.startsWith(`${setting}.`)) return true;
  }
  return false;
}

function withSource(text: string, source: string | undefined): string {
  return source === undefined ? text : `${text} (from ${source})`;
}

function formatPath(path: readonly (string | number)[]): string {
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`,
    )
    .join('');
}

function validKeys(section: string): string[] | undefined {
  if (section === '') return Object.keys(configObject.shape);
  if (!Object.hasOwn(SECTIONS, section)) return undefined;
  return Object.keys(SECTIONS[section as keyof typeof SECTIONS].shape);
}

function valueAt(input: unknown, path: readonly (string | number)[]): unknown {
  let current: unknown = input;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
}

// Strings go through redactUrl because a connection string pasted into the wrong key must
// not be echoed in full; long values are cut so the message stays one line.
function show(value: unknown): string {
  const text =
    JSON.stringify(value, (_key, item: unknown) =>
      typeof item === 'string' ? redactUrl(item) : item,
    ) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
