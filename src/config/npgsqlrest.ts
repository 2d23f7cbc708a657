// NpgsqlRest's `McpOptions` block, accepted in a pgmcp config file at the top level
// or under `NpgsqlRest:` as in NpgsqlRest's appsettings.json, and folded into pgmcp's own keys
// before validation. `pgmcp config import --from npgsqlrest` uses the same table.
import { AppError, ErrorCodes } from '../core/errors.js';

type Mapping = Record<string, unknown>;

export interface ForeignKeyMap {
  /** The foreign key path, as its documentation spells it (`Authorization.FilterToolsByRole`). */
  from: string;
  /** pgmcp's key path; null when pgmcp has no equivalent (`why` says what to do instead). */
  to: string | null;
  why?: string;
  /** Only `true` is carried over (false is the foreign default, and pgmcp's own default is safer). */
  onlyTrue?: boolean;
}

/** NpgsqlRest's McpOptions keys and where each goes. Keys are case-insensitive, as in .NET. */
const MCP_OPTIONS_MAP: readonly ForeignKeyMap[] = [
  { from: 'Enabled', to: 'database.routineTools' },
  { from: 'UrlPath', to: 'http.path' },
  { from: 'ServerName', to: 'server.name' },
  { from: 'ServerVersion', to: 'server.version' },
  { from: 'Instructions', to: 'server.instructions' },
  { from: 'ToolDescriptionSuffix', to: 'server.toolDescriptionSuffix' },
  {
    from: 'RateLimiterPolicy',
    to: null,
    why: 'names an ASP.NET rate-limiter policy; pgmcp limits requests itself (rateLimit.requestsPerMinute, rateLimit.routes)',
  },
  { from: 'AllowedOrigins', to: 'http.allowedOrigins' },
  // false is NpgsqlRest's default; pgmcp's own (required when bound beyond loopback) is kept.
  { from: 'Authorization.RequireAuthorization', to: 'auth.required', onlyTrue: true },
  { from: 'Authorization.FilterToolsByRole', to: 'auth.filterToolsByRole' },
  {
    from: 'Authorization.AuthorizationServers',
    to: null,
    why: 'OAuth resource-server settings are not mapped by this version',
  },
  {
    from: 'Authorization.ScopesSupported',
    to: null,
    why: 'see Authorization.AuthorizationServers',
  },
  { from: 'Authorization.Audience', to: null, why: 'see Authorization.AuthorizationServers' },
  {
    from: 'Authorization.ProtectedResourceMetadataPath',
    to: null,
    why: 'see Authorization.AuthorizationServers',
  },
];

/** Values that mean "NpgsqlRest's default": leaving the pgmcp key unset keeps pgmcp's. */
const isEmptySetting = (value: unknown): boolean =>
  value === null || (Array.isArray(value) && value.length === 0);

const isMapping = (value: unknown): value is Mapping =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Flattens a mapping into dotted paths (`Authorization.Audience`); lists are leaves. */
export function flatten(value: Mapping, prefix = ''): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [key, inner] of Object.entries(value)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (isMapping(inner)) out.push(...flatten(inner, path));
    else out.push([path, inner]);
  }
  return out;
}

export interface Mapped {
  /** pgmcp key path → value. */
  values: Array<[string, unknown, string]>;
  /** Foreign keys that were set but have no pgmcp equivalent, with why. */
  unmapped: Array<{ key: string; why: string }>;
}

/** Maps one McpOptions block; unknown keys and unmappable non-default values are reported. */
export function mapMcpOptions(block: Mapping, where: string): Mapped {
  const mapped: Mapped = { values: [], unmapped: [] };
  for (const [path, value] of flatten(block)) {
    const entry = MCP_OPTIONS_MAP.find((m) => m.from.toLowerCase() === path.toLowerCase());
    if (!entry) {
      mapped.unmapped.push({ key: `${where}.${path}`, why: 'not an McpOptions key of NpgsqlRest' });
      continue;
    }
    if (entry.to === null) {
      // A default (null, [], false) asks for nothing pgmcp would have to do.
      if (!isEmptySetting(value) && value !== false) {
        mapped.unmapped.push({ key: `${where}.${entry.from}`, why: entry.why ?? 'no equivalent' });
      }
      continue;
    }
    if (isEmptySetting(value) && entry.to !== 'database.routineTools') continue;
    if (entry.onlyTrue && value === false) continue;
    mapped.values.push([entry.to, value, entry.from]);
  }
  return mapped;
}

/** Finds McpOptions at the top level or under NpgsqlRest (case-insensitively). */
export function findMcpOptions(
  document: Mapping,
): { block: Mapping; where: string; container: string } | null {
  const top = Object.keys(document).find((k) => k.toLowerCase() === 'mcpoptions');
  if (top !== undefined && isMapping(document[top])) {
    return { block: document[top], where: top, container: top };
  }
  const outer = Object.keys(document).find((k) => k.toLowerCase() === 'npgsqlrest');
  const inner = outer !== undefined && isMapping(document[outer]) ? document[outer] : null;
  if (!inner) return null;
  const key = Object.keys(inner).find((k) => k.toLowerCase() === 'mcpoptions');
  if (key === undefined || !isMapping(inner[key])) return null;
  return { block: inner[key], where: `${outer}.${key}`, container: outer! };
}

/** Top-level sections of NpgsqlRest's appsettings.json spelt like pgmcp's (lowercased). */
const NPGSQLREST_SECTIONS = ['log', 'auth'];

/**
 * Folds an McpOptions block of a config file into pgmcp's keys, in place. A pgmcp key also set
 * in the file, or a setting pgmcp cannot honour (an OAuth audience, say), is refused rather than
 * silently dropped: the block is security configuration.
 */
export function foldMcpOptions(
  document: Mapping,
  path: string,
  sources: Map<string, string>,
  /** pgmcp's top-level sections: a capitalised spelling of one is kept, so it is refused. */
  sections: readonly string[] = [],
): void {
  const found = findMcpOptions(document);
  if (!found) return;
  delete document[found.container];
  if (found.container !== found.where) {
    // The block sat under NpgsqlRest: this is an appsettings.json, whose other sections
    // (ConnectionStrings, Logging, Kestrel …, PascalCase as ASP.NET writes them) are not
    // pgmcp's. pgmcp's own keys are camelCase and stay checked (`Database:` too: refused as
    // an unknown key rather than dropped).
    // Log and Auth are sections of NpgsqlRest's appsettings.json too: those spellings are its.
    const ours = new Set(sections.map((section) => section.toLowerCase()));
    for (const theirs of NPGSQLREST_SECTIONS) ours.delete(theirs);
    for (const key of Object.keys(document)) {
      if (/^[A-Z]/.test(key) && !ours.has(key.toLowerCase())) delete document[key];
    }
  }
  const { values, unmapped } = mapMcpOptions(found.block, found.where);
  if (unmapped.length > 0) {
    const first = unmapped[0]!;
    throw new AppError(
      ErrorCodes.CONFIG_FOREIGN_UNSUPPORTED,
      `${path}: ${first.key} cannot be used by pgmcp (${first.why})` +
        (unmapped.length > 1 ? ` (and ${unmapped.length - 1} more)` : '') +
        '. Remove it, or see docs/compatibility.md for the pgmcp setting to use instead.',
      { category: 'config', details: { key: first.key, source: path } },
    );
  }
  for (const [to, value, from] of values) {
    const [section, ...rest] = to.split('.');
    const target = (isMapping(document[section!]) ? document[section!] : {}) as Mapping;
    document[section!] = target;
    let node = target;
    for (const part of rest.slice(0, -1)) {
      if (!isMapping(node[part])) node[part] = {};
      node = node[part] as Mapping;
    }
    const leaf = rest[rest.length - 1]!;
    if (leaf in node) {
      throw new AppError(
        ErrorCodes.CONFIG_FOREIGN_CONFLICT,
        `${path}: ${to} is set both directly and as ${found.where}.${from}; keep one.`,
        { category: 'config', details: { key: to, source: path } },
      );
    }
    node[leaf] = value;
    sources.set(to, `${path} (${found.where}.${from})`);
  }
}
