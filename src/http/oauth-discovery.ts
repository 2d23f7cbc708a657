// RFC 9728 Protected Resource Metadata and the challenges that point to it. The metadata is
// public discovery: served to anyone (no authentication, no rate limit, readable from any
// origin), at /.well-known/oauth-protected-resource + the MCP path, at the root form, and at
// auth.oauth.protectedResourceMetadataPath when set. Every 401 and 403 of the MCP endpoint and
// /api then names it in `resource_metadata`, with the scopes to ask for.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { canonicalResource } from '../auth/oauth/resource-uri.js';
import { challenge, type ChallengeKind } from './challenge.js';

const PRM_WELL_KNOWN = '/.well-known/oauth-protected-resource';

export interface OAuthDiscoveryOptions {
  /** The MCP endpoint's path (/mcp). */
  mcpPath: string;
  /** Configured canonical resource URI; null: derived from each request. */
  audience: string | null;
  /** Trusted issuers, the built-in one first when it is enabled (it may be request-derived). */
  authorizationServers(origin: string): string[];
  scopesSupported: readonly string[];
  metadataPath: string | null;
  /** Scope → roles it grants (auth.oauth.scopeRoles); used to name the scope that grants a role. */
  scopeRoles: Readonly<Record<string, readonly string[]>>;
  resourceName: string;
}

export interface OAuthDiscovery {
  /** scheme://host the request reached. */
  originOf(req: FastifyRequest): string;
  /** The canonical resource URI of the MCP endpoint for this request (RFC 8707). */
  resourceFor(req: FastifyRequest): string;
  /** A WWW-Authenticate value with resource_metadata and scope. */
  challengeFor(
    req: FastifyRequest,
    kind: ChallengeKind,
    options?: { description?: string; roles?: readonly string[] },
  ): string;
  register(app: FastifyInstance): void;
}

export function createOAuthDiscovery(options: OAuthDiscoveryOptions): OAuthDiscovery {
  const mcpPath = options.mcpPath.replace(/\/$/, '') || '/';
  const metadataPath = options.metadataPath ?? `${PRM_WELL_KNOWN}${mcpPath === '/' ? '' : mcpPath}`;

  const originOf = (req: FastifyRequest): string => {
    const host = (req.headers.host ?? req.hostname ?? 'localhost').toLowerCase();
    return `${req.protocol}://${host}`;
  };
  const resourceFor = (req: FastifyRequest): string =>
    options.audience ??
    canonicalResource(`${originOf(req)}${mcpPath}`) ??
    `${originOf(req)}${mcpPath}`;

  /** The scopes that grant one of these roles: a mapped scope, else the role's own name. */
  const scopesFor = (roles: readonly string[]): string[] => {
    const scopes = new Set<string>();
    for (const role of roles) {
      const mapped = Object.entries(options.scopeRoles)
        .filter(([, granted]) => granted.includes(role))
        .map(([scope]) => scope);
      for (const scope of mapped.length > 0 ? mapped : [role]) scopes.add(scope);
    }
    return [...scopes];
  };

  const metadata = (req: FastifyRequest): Record<string, unknown> => ({
    resource: resourceFor(req),
    authorization_servers: options.authorizationServers(originOf(req)),
    ...(options.scopesSupported.length > 0
      ? { scopes_supported: [...options.scopesSupported] }
      : {}),
    bearer_methods_supported: ['header'],
    resource_name: options.resourceName,
  });

  return {
    originOf,
    resourceFor,
    challengeFor(req, kind, extra = {}) {
      const scopes = extra.roles?.length
        ? scopesFor(extra.roles)
        : kind === 'insufficient_scope'
          ? []
          : [...options.scopesSupported];
      return challenge(kind, extra.description, {
        resourceMetadata: `${originOf(req)}${metadataPath}`,
        ...(scopes.length > 0 ? { scope: scopes.join(' ') } : {}),
      });
    },
    register(app) {
      const paths = new Set([metadataPath, `${PRM_WELL_KNOWN}${mcpPath}`, PRM_WELL_KNOWN]);
      for (const path of paths) {
        app.get(path, async (req, reply) =>
          reply
            .code(200)
            .headers({
              'content-type': 'application/json',
              'cache-control': 'public, max-age=300',
              // Discovery is public: any page may read it.
              'access-control-allow-origin': '*',
            })
            .send(JSON.stringify(metadata(req))),
        );
        app.options(path, async (_req, reply) =>
          reply
            .code(204)
            .headers({
              'access-control-allow-origin': '*',
              'access-control-allow-methods': 'GET, OPTIONS',
              'access-control-max-age': '600',
            })
            .send(),
        );
      }
    },
  };
}
