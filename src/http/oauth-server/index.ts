// The built-in authorization server's routes, in their own plugin scope so that form bodies
// (application/x-www-form-urlencoded, @fastify/formbody) are parsed there and nowhere else.
import fastifyFormbody from '@fastify/formbody';
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../../auth/index.js';
import type { AuthorizationServer } from '../../auth/oauth/authorization-server.js';
import type { OAuthDiscovery } from '../oauth-discovery.js';
import { registerAuthorizeRoutes } from './authorize-routes.js';
import { registerTokenRoutes } from './token-routes.js';

export interface OAuthServerRoutes {
  server: AuthorizationServer;
  auth: Authenticator;
  discovery: OAuthDiscovery;
  scopesSupported: readonly string[];
}

export function registerOAuthServer(app: FastifyInstance, deps: OAuthServerRoutes): void {
  void app.register(async (scope) => {
    await scope.register(fastifyFormbody, { bodyLimit: 16_384 });
    registerTokenRoutes(scope, deps);
    registerAuthorizeRoutes(scope, deps);
  });
}
