// `pgmcp config import`: a pgEdge `postgres-mcp.yaml` or an NpgsqlRest `appsettings.json` turned
// into a pgmcp config document, with every setting that has no pgmcp equivalent listed (and
// why), so nothing is dropped without the operator knowing. Pure: text in, document out.
import { parse as parseYaml } from 'yaml';
import { AppError, ErrorCodes } from '../core/errors.js';
import { findMcpOptions, flatten, mapMcpOptions } from './npgsqlrest.js';
import { configSchema } from './schema.js';

export const IMPORT_SOURCES = ['pgedge', 'npgsqlrest'] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

type Mapping = Record<string, unknown>;

export interface Imported {
  /** A pgmcp config document (only the settings that differ from pgmcp's defaults). */
  config: Mapping;
  unmapped: Array<{ key: string; why: string }>;
}

const isMapping = (value: unknown): value is Mapping =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function put(target: Mapping, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) {
    if (!isMapping(node[part])) node[part] = {};
    node = node[part] as Mapping;
  }
  node[parts[parts.length - 1]!] = value;
}

function importError(message: string): AppError {
  return new AppError(ErrorCodes.CONFIG_IMPORT_FAILED, message, { category: 'config' });
}

// ---------------------------------------------------------------------------------------------
// pgEdge Natural Language Agent (reference/peer-systems.md §2.5).

const PGEDGE_ACCOUNTS =
  'pgmcp keeps tokens and users in its state database: recreate them with `pgmcp token create` / `pgmcp user add`';
const PGEDGE_SECRET =
  'pgmcp never stores passwords in its config: set passwordEnv or passwordFile on the databases entry';

/** `:8080`, `0.0.0.0:8080`, `[::1]:8080` → host and port (Go's empty host means every interface). */
function splitAddress(address: string): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:]*):(\d{1,5})$/.exec(address.trim());
  if (!match) return null;
  const host = match[1] === '' ? '0.0.0.0' : match[1]!.replace(/^\[|\]$/g, '');
  return { host, port: Number(match[2]) };
}

function importPgedge(document: Mapping): Imported {
  const config: Mapping = {};
  const unmapped: Imported['unmapped'] = [];
  const skip = (key: string, why: string): void => void unmapped.push({ key, why });
  for (const [path, value] of flatten(document)) {
    if (path.startsWith('databases')) continue; // below
    switch (path) {
      case 'http.enabled':
        config['transport'] = value === true ? 'http' : 'stdio';
        break;
      case 'http.address': {
        const at = typeof value === 'string' ? splitAddress(value) : null;
        if (!at) skip(path, `not a host:port address (${JSON.stringify(value)})`);
        else {
          put(config, 'http.host', at.host);
          put(config, 'http.port', at.port);
        }
        break;
      }
      case 'http.allowed_origins':
        if (Array.isArray(value) && value.length > 0) put(config, 'http.allowedOrigins', value);
        break;
      case 'http.tls.enabled':
      case 'http.tls.cert_file':
      case 'http.tls.key_file':
        break; // below, together
      case 'http.tls.chain_file':
        if (value) skip(path, 'append the chain to the certificate file (http.tls.cert)');
        break;
      case 'http.auth.enabled':
        put(config, 'auth.required', value === true);
        break;
      case 'http.auth.token_file':
      case 'http.auth.user_file':
        if (value) skip(path, PGEDGE_ACCOUNTS);
        break;
      case 'http.auth.max_failed_attempts_before_lockout':
        if (typeof value === 'number' && value > 0) put(config, 'auth.lockout.maxFailures', value);
        break;
      case 'http.auth.rate_limit_window_minutes':
        if (typeof value === 'number' && value > 0)
          put(config, 'auth.lockout.windowSeconds', value * 60);
        break;
      case 'http.auth.rate_limit_max_attempts':
        if (typeof value === 'number' && value > 0)
          put(config, 'auth.lockout.maxFailuresPerAddress', value);
        break;
      case 'embedding.provider':
        put(config, 'embeddings.provider', value);
        break;
      default:
        if (path === 'embedding.model' && typeof document['embedding'] === 'object') {
          const provider = (document['embedding'] as Mapping)['provider'];
          if (typeof provider === 'string') put(config, `embeddings.${provider}.model`, value);
          else skip(path, 'no embedding.provider to attach the model to');
        } else if (path.startsWith('embedding.') && /_key(_file)?$/.test(path)) {
          skip(
            path,
            'pgmcp reads provider keys from the environment: embeddings.<provider>.apiKeyEnv',
          );
        } else if (path === 'embedding.enabled' || path === 'http.client_ip.source') {
          // enabled: pgmcp embeds when a search asks; the client address source is always the socket.
          if (value === false || value === 'socket' || value === true) break;
          skip(
            path,
            'pgmcp takes the client address from the connection (behind a proxy: auth.trustedProxies)',
          );
        } else {
          skip(path, 'no pgmcp equivalent (see docs/compatibility.md, the pgEdge agent)');
        }
    }
  }
  const tls = isMapping(document['http']) ? (document['http'] as Mapping)['tls'] : undefined;
  if (isMapping(tls) && tls['enabled'] === true) {
    put(config, 'http.tls.cert', tls['cert_file'] ?? null);
    put(config, 'http.tls.key', tls['key_file'] ?? null);
  }
  const databases = document['databases'];
  if (Array.isArray(databases)) {
    config['databases'] = databases.map((db: unknown, i: number) => {
      const entry: Mapping = {};
      if (!isMapping(db)) {
        skip(`databases[${i}]`, 'not a mapping');
        return entry;
      }
      const names: Record<string, string> = {
        name: 'name',
        host: 'host',
        port: 'port',
        database: 'database',
        user: 'user',
        sslmode: 'sslmode',
        allow_writes: 'allowWrites',
        available_to_users: 'availableToUsers',
        pool_max_conns: 'poolSize',
      };
      for (const [key, value] of Object.entries(db)) {
        const to = names[key];
        if (to) entry[to] = value;
        else if (key === 'password') skip(`databases[${i}].password`, PGEDGE_SECRET);
        else skip(`databases[${i}].${key}`, 'no pgmcp equivalent for this database setting');
      }
      if (entry['name'] === undefined) entry['name'] = i === 0 ? 'default' : `db${i + 1}`;
      if (Array.isArray(entry['availableToUsers']) && entry['availableToUsers'].length === 0)
        delete entry['availableToUsers'];
      return entry;
    });
  }
  return { config, unmapped };
}

// ---------------------------------------------------------------------------------------------
// NpgsqlRest's appsettings.json.

/** An Npgsql connection string (`Host=…;Port=…;Database=…;Username=…;Password=…`). */
function connectionEntry(text: string, unmapped: Imported['unmapped']): Mapping {
  const entry: Mapping = { name: 'default' };
  const names: Record<string, string> = {
    host: 'host',
    server: 'host',
    port: 'port',
    database: 'database',
    db: 'database',
    username: 'user',
    'user id': 'user',
    userid: 'user',
    user: 'user',
    'ssl mode': 'sslmode',
    sslmode: 'sslmode',
  };
  for (const part of text.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const key = part.slice(0, at).trim().toLowerCase();
    const value = part.slice(at + 1).trim();
    const to = names[key];
    if (to === 'port') entry[to] = Number(value);
    else if (to === 'sslmode') entry[to] = value.toLowerCase();
    else if (to) entry[to] = value;
    else if (key === 'password')
      unmapped.push({ key: 'ConnectionStrings.Default (Password)', why: PGEDGE_SECRET });
    else
      unmapped.push({
        key: `ConnectionStrings.Default (${part.slice(0, at).trim()})`,
        why: 'no pgmcp equivalent',
      });
  }
  return entry;
}

function importNpgsqlrest(document: Mapping): Imported {
  const config: Mapping = {};
  const unmapped: Imported['unmapped'] = [];
  const found = findMcpOptions(document);
  if (found) {
    const mapped = mapMcpOptions(found.block, found.where);
    for (const [to, value] of mapped.values) put(config, to, value);
    unmapped.push(...mapped.unmapped);
  } else {
    unmapped.push({
      key: 'NpgsqlRest.McpOptions',
      why: 'not found: nothing MCP-specific to import',
    });
  }
  for (const [key, value] of Object.entries(document)) {
    if (key.toLowerCase() === 'npgsqlrest' && isMapping(value)) {
      for (const inner of Object.keys(value)) {
        if (inner.toLowerCase() === 'mcpoptions') continue;
        unmapped.push({ key: `${key}.${inner}`, why: "NpgsqlRest's own REST setting" });
      }
    } else if (key.toLowerCase() === 'mcpoptions') {
      continue;
    } else if (key === 'ConnectionStrings' && isMapping(value)) {
      for (const [name, text] of Object.entries(value)) {
        if (typeof text === 'string' && (name === 'Default' || Object.keys(value).length === 1)) {
          config['databases'] = [connectionEntry(text, unmapped)];
        } else
          unmapped.push({
            key: `ConnectionStrings.${name}`,
            why: 'only the default connection is imported',
          });
      }
    } else {
      unmapped.push({ key, why: "NpgsqlRest's own setting" });
    }
  }
  return { config, unmapped };
}

/** Parses (JSON or YAML) and converts; the result is checked against pgmcp's schema. */
export function importConfig(source: ImportSource, text: string, file: string): Imported {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw importError(
      `${file} is not valid ${source === 'pgedge' ? 'YAML' : 'JSON'}: ${(error as Error).message.split('\n')[0]!.replace(/:\s*$/, '')}`,
    );
  }
  if (!isMapping(document)) throw importError(`${file}: expected a mapping at the top level`);
  const imported = source === 'pgedge' ? importPgedge(document) : importNpgsqlrest(document);
  const checked = configSchema.safeParse(imported.config);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw importError(
      `${file}: the converted setting ${issue.path.join('.')} is not valid for pgmcp (${issue.message}); fix it in the source or edit the output`,
    );
  }
  return imported;
}
