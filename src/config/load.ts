// Assembles the effective configuration: defaults < file < environment < flags.
// Sources are merged into one plain object, remembering which source set each key, and
// the schema validates the result once; the remembered sources make its messages useful.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type * as Yaml from 'yaml';
import type { YAMLParseError } from 'yaml';
import { AppError, ErrorCodes } from '../core/errors.js';
import { readEnv } from './env.js';
import type { SourcedValue } from './env.js';
import { readFlags } from './flags.js';
import type { ConfigFlags } from './flags.js';
import { configError, issuesToError } from './issues.js';
import { foldMcpOptions } from './npgsqlrest.js';
import { configObject, configSchema } from './schema.js';
import type { Config } from './schema.js';

// The YAML parser (a few dozen modules) loads only when there is a file to read: a server
// started from flags and the environment (a spawned stdio server) never needs it.
const require = createRequire(import.meta.url);
const yaml = (): typeof Yaml => require('yaml') as typeof Yaml;

export interface LoadConfigInput {
  flags: ConfigFlags;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

type Mapping = Record<string, unknown>;

export function loadConfig(input: LoadConfigInput): Config {
  const { flags, env, cwd } = input;
  const sources = new Map<string, string>();
  const raw = readConfigFile(flags, env, cwd, sources);

  // Flags are read before env so that a bad flag is reported even when env is bad too:
  // the flag is what the person just typed.
  const fromFlags = readFlags(flags);
  const fromEnv = readEnv(env);
  for (const value of [...fromEnv, ...fromFlags]) apply(raw, value, sources);

  const result = configSchema.safeParse(raw);
  if (!result.success) {
    throw issuesToError(result.error.issues, raw, (key) => sources.get(key));
  }
  const config = result.data;
  config.embedded.dataDir = resolve(cwd, config.embedded.dataDir);
  if (config.audit.file !== null) config.audit.file = resolve(cwd, config.audit.file);
  const { tls } = config.http;
  if (tls.cert !== null) tls.cert = resolve(cwd, tls.cert);
  if (tls.key !== null) tls.key = resolve(cwd, tls.key);
  return config;
}

function readConfigFile(
  flags: ConfigFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
  sources: Map<string, string>,
): Mapping {
  const given = flags.config ?? (env.PGMCP_CONFIG === '' ? undefined : env.PGMCP_CONFIG);
  if (given === undefined) return {};
  const via = flags.config !== undefined ? '--config' : 'PGMCP_CONFIG';
  const path = resolve(cwd, given);

  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw unreadable(
      `cannot read config file ${path} (from ${via}): ${describeFsError(error)}`,
      path,
      error,
    );
  }

  let document: unknown;
  try {
    document = yaml().parse(text);
  } catch (error) {
    if (!(error instanceof yaml().YAMLParseError)) throw error;
    const position = error.linePos?.[0];
    const at = position === undefined ? '' : ` at line ${position.line}, column ${position.col}`;
    throw unreadable(
      `config file ${path} is not valid YAML${at}: ${yamlReason(error)}`,
      path,
      undefined,
    );
  }

  if (document === null || document === undefined) return {};
  if (!isMapping(document)) {
    throw configError(
      `config file ${path}: expected a mapping of sections (server, http, database, …) at the top level`,
      '',
      path,
    );
  }
  for (const [section, value] of Object.entries(document)) {
    sources.set(section, path);
    // A section whose keys are all commented out parses as null; treat it as empty.
    if (value === null) document[section] = {};
    if (isMapping(value))
      for (const key of Object.keys(value)) sources.set(`${section}.${key}`, path);
  }
  // After the plain sources, so a folded key names the McpOptions key it came from.
  foldMcpOptions(document, path, sources, Object.keys(configObject.shape));
  return document;
}

// Writes one sourced value into the merged object. A section that is present but not a
// mapping is left alone so the schema reports it, rather than being silently replaced.
function apply(
  raw: Mapping,
  { key, value, source }: SourcedValue,
  sources: Map<string, string>,
): void {
  const path = key.split('.');
  sources.set(key, source);
  let target = raw;
  for (const part of path.slice(0, -1)) {
    const current = target[part];
    if (current === undefined) target = target[part] = {};
    else if (isMapping(current)) target = current;
    else return;
  }
  target[path[path.length - 1]!] = value;
}

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unreadable(message: string, path: string, cause: unknown): AppError {
  return new AppError(ErrorCodes.CONFIG_FILE_UNREADABLE, message, {
    category: 'config',
    details: { key: 'config', path },
    cause,
  });
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return code ?? (error instanceof Error ? error.message : String(error));
  }
}

// yaml's own message ends with a copy of the offending source line, which may hold a
// password; keep only the first sentence and report the position separately.
function yamlReason(error: YAMLParseError): string {
  const firstLine = error.message.split('\n')[0] ?? '';
  return firstLine.replace(/ at line \d+, column \d+:?\s*$/, '').trim() || error.code;
}
