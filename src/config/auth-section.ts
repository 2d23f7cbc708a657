// The `auth` section: header-based identity, trusted proxies, and OAuth 2.1 (pgmcp as a
// resource server, and optionally its built-in authorization server).
import { isIP } from 'node:net';
import { bool, intIn, roleName, stringList } from './fields.js';
import { optionalText, section, text, zod } from './zod.js';

// A peer address or CIDR range: 10.0.0.1, 10.0.0.0/8, ::1, fd00::/8.
export const addressItem = zod.string({ error: 'expected a string' }).refine(
  (value) => {
    const [address = '', bits, extra] = value.split('/');
    const family = isIP(address);
    if (family === 0 || extra !== undefined) return false;
    if (bits === undefined) return true;
    return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
  },
  { error: 'expected an IP address or CIDR range such as 10.0.0.0/8 or ::1' },
);

export const headerName = zod
  .string({ error: 'expected a string' })
  .regex(/^[A-Za-z0-9-]+$/, { error: 'expected an HTTP header name such as X-User-Id' })
  .transform((name) => name.toLowerCase());

// --- OAuth 2.1: resource server, and optionally a built-in authorization server ---
export const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** https, or http on a loopback name: an issuer or endpoint fetched keys or tokens must not be spoofable. */
export function isSecureOrLoopbackUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  return (
    url.protocol === 'http:' &&
    (LOOPBACK_NAMES.has(url.hostname) || /^127\.\d+\.\d+\.\d+$/.test(url.hostname))
  );
}

export const secureUrl = (what: string) =>
  zod
    .string({ error: 'expected a string' })
    .refine((v) => isSecureOrLoopbackUrl(v) && !v.includes('#') && !v.includes('?'), {
      error: `expected an https:// ${what} (http:// only on localhost or 127.0.0.1), without query or fragment`,
    });

// A claim path: dot-separated names into the token's claims (realm_access.roles).
export const claimPath = zod
  .string({ error: 'expected a string' })
  .regex(/^[A-Za-z0-9_:/$-]+(\.[A-Za-z0-9_:/$-]+){0,7}$/, {
    error: 'expected a claim name or dotted path such as sub or realm_access.roles',
  });

export const scopeName = zod
  .string({ error: 'expected a string' })
  .regex(/^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/, {
    error: 'expected a scope such as analyst or mcp:read',
  });

// A host pgmcp may fetch from: a DNS name, an IP address or a CIDR range.
export const fetchHostItem = zod
  .string({ error: 'expected a string' })
  .refine(
    (value) =>
      /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(
        value,
      ) || addressItem.safeParse(value.replace(/^\[(.*)\]$/, '$1')).success,
    {
      error:
        'expected a host name, an IP address or a CIDR range such as idp.internal or 10.0.0.0/8',
    },
  );

export const oauthServerSchema = section({
  /** Serve a built-in authorization server for pgmcp's users (login, consent, tokens). */
  enabled: bool().default(false),
  /** The issuer identifier; null: this server's origin as the request reaches it. */
  issuer: secureUrl('issuer URL').nullable().default(null),
  accessTokenTtlSeconds: intIn(60, 86_400).default(900),
  refreshTokenTtlSeconds: intIn(300).default(2_592_000),
  codeTtlSeconds: intIn(10, 600).default(60),
  /** RFC 7591 registration at /oauth/register. */
  dynamicRegistration: bool().default(true),
  /** Client IDs that are https URLs of client metadata documents. */
  clientMetadataDocuments: bool().default(true),
  /** Scopes granted when a client asks for none; empty: the user's roles. */
  defaultScopes: stringList(scopeName).default([]),
}).prefault({});

export const oauthSchema = section({
  /** Every MCP request needs a verified token (NpgsqlRest's RequireAuthorization). */
  requireAuthorization: bool().default(false),
  /** Issuers whose access tokens are accepted, advertised in the protected resource metadata. */
  authorizationServers: stringList(secureUrl('issuer URL')).default([]),
  /** Scopes advertised in the metadata and asked for in challenges. */
  scopesSupported: stringList(scopeName).default([]),
  /** The canonical resource URI tokens must name in aud; null: derived from each request. */
  audience: secureUrl('resource URI').nullable().default(null),
  /** Other aud values accepted (an IdP that names the API by an id, such as api://…). */
  additionalAudiences: stringList(text()).default([]),
  /** Where the metadata is served; null: /.well-known/oauth-protected-resource + the MCP path. */
  protectedResourceMetadataPath: zod
    .string({ error: 'expected a string' })
    .regex(/^\/[A-Za-z0-9._~/-]*$/, { error: 'expected a path starting with /' })
    .nullable()
    .default(null),
  /** Leave out of lists what the caller may not use (as auth.filterToolsByRole). */
  filterToolsByRole: bool().default(false),
  /** Where in the claims the principal's parts are read from. */
  claims: section({
    userId: claimPath.default('sub'),
    tenantId: claimPath.nullable().default(null),
    /** A list (or space-separated string) of pgmcp roles; null: roles come from scopes only. */
    roles: claimPath.nullable().default(null),
    pgRole: claimPath.nullable().default(null),
  }).prefault({}),
  /** Scope → pgmcp roles; a scope not listed grants the role of the same name. */
  scopeRoles: zod
    .record(scopeName, stringList(roleName), {
      error: 'expected a mapping of scopes to role lists',
    })
    .default({}),
  clockSkewSeconds: intIn(0, 300).default(30),
  /** Bearer tokens longer than this are refused unread. */
  maxTokenBytes: intIn(512, 65_536).default(8192),
  /** Fetching issuer metadata and keys: time limit, cache, and the pause before a refetch on an unknown key id. */
  jwks: section({
    timeoutMs: intIn(100, 30_000).default(3000),
    cacheSeconds: intIn(10).default(600),
    cooldownSeconds: intIn(0).default(30),
    maxBytes: intIn(1024, 4_194_304).default(262_144),
  }).prefault({}),
  /** RFC 7662 introspection for opaque (non-JWT) tokens; off while url is null. */
  introspection: section({
    url: secureUrl('introspection endpoint').nullable().default(null),
    clientId: optionalText().default(null),
    /** Environment variable holding the client secret (never the secret itself). */
    clientSecretEnv: optionalText().default(null),
    cacheSeconds: intIn(0, 3600).default(60),
  }).prefault({}),
  /**
   * Hosts pgmcp's own fetches (client metadata documents, issuer metadata and keys,
   * introspection) may reach although they are on loopback, private, link-local or other
   * special addresses: host names, IP addresses or CIDR ranges, every port of them. The
   * configured issuers and introspection endpoint are allowed without being listed, at their own
   * origin (scheme, host and port) only.
   */
  allowedFetchHosts: stringList(fetchHostItem).default([]),
  server: oauthServerSchema,
});

export const authSchema = section({
  /**
   * Whether /mcp and /api/* need a bearer token. null: yes when the HTTP server is bound to a
   * non-loopback address (--require-auth sets true, --no-auth false).
   */
  required: zod.boolean({ error: 'expected true, false or null' }).nullable().default(null),
  /** Leave out of tools/resources/prompts lists what the caller may not use (as NpgsqlRest does). */
  filterToolsByRole: bool().default(false),
  /** Peers whose X-User-Id / X-Tenant-Id headers are believed (addresses or CIDR ranges). */
  trustedProxies: stringList(addressItem).default([]),
  proxyHeaders: section({
    userId: headerName.default('x-user-id'),
    tenantId: headerName.default('x-tenant-id'),
    /** Comma-separated pgmcp roles from the proxy; null: proxy principals have no roles. */
    roles: headerName.nullable().default(null),
  }).prefault({}),
  /** stdio: the caller is the local user who started pgmcp; who that is, for PostgreSQL. */
  stdio: section({
    userId: optionalText().default(null),
    tenantId: optionalText().default(null),
    roles: stringList(roleName).default([]),
    /** A PostgreSQL role for SET LOCAL ROLE on every call (the login role must be a member). */
    pgRole: optionalText().default(null),
  }).prefault({}),
  /** How long a login session lasts (absolute, from login). */
  sessionTtlSeconds: intIn(60).default(86_400),
  /** How long a verified bearer token is trusted in-process before the state database is asked again. */
  cacheTtlMs: intIn(0, 60_000).default(5_000),
  lockout: section({
    /** Failed logins of one user name within the window that lock it. */
    maxFailures: intIn(1).default(5),
    /** Failed logins from one client address within the window that lock the address. */
    maxFailuresPerAddress: intIn(1).default(20),
    windowSeconds: intIn(1).default(900),
    lockSeconds: intIn(1).default(900),
  }).prefault({}),
  oauth: oauthSchema.prefault({}),
});
