// Builds the HTTP side of OAuth from auth.oauth: the resource server that verifies tokens and
// the discovery that advertises it. Off (null) while no issuer, introspection endpoint or
// built-in authorization server is configured: pgmcp's own tokens work either way.
import { createResourceServer, type LocalIssuer } from '../auth/oauth/resource-server.js';
import type { Config } from '../config/index.js';
import type { HttpOAuth } from './authenticate.js';
import { createOAuthDiscovery } from './oauth-discovery.js';

export interface HttpOAuthDeps {
  config: Config;
  /** The built-in authorization server, when auth.oauth.server.enabled. */
  local?: LocalIssuer | null;
  resourceName: string;
  env?: Readonly<Record<string, string | undefined>>;
}

function oauthEnabled(config: Config): boolean {
  const oauth = config.auth.oauth;
  return (
    oauth.authorizationServers.length > 0 ||
    oauth.introspection.url !== null ||
    oauth.server.enabled ||
    oauth.requireAuthorization
  );
}

export function createHttpOAuth(deps: HttpOAuthDeps): HttpOAuth | null {
  const { config } = deps;
  if (!oauthEnabled(config)) return null;
  const settings = config.auth.oauth;
  const local = deps.local ?? null;
  return {
    server: createResourceServer({ settings, local, ...(deps.env ? { env: deps.env } : {}) }),
    discovery: createOAuthDiscovery({
      mcpPath: config.http.path,
      audience: settings.audience,
      authorizationServers: (origin) => [
        ...(local ? [local.issuerFor(origin)] : []),
        ...settings.authorizationServers,
      ],
      scopesSupported: settings.scopesSupported,
      metadataPath: settings.protectedResourceMetadataPath,
      scopeRoles: settings.scopeRoles,
      resourceName: deps.resourceName,
    }),
    requireOnMcp: settings.requireAuthorization,
    clockSkewSeconds: settings.clockSkewSeconds,
  };
}
