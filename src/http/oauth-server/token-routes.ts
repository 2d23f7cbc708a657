// The machine side of the built-in authorization server: RFC 8414 metadata, the JWKS, RFC 7591
// registration, the token endpoint (authorization_code with PKCE, refresh_token with rotation)
// and RFC 7009 revocation. Answers are JSON in the shapes those RFCs define ({error,
// error_description} on failure, plus pgmcp's own code), never cached, and readable from any
// origin: browser-based MCP clients call these directly and hold no cookies here.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthorizationServer } from '../../auth/oauth/authorization-server.js';
import { checkClientMetadata } from '../../auth/oauth/clients.js';
import { answerOf } from '../../core/error-table.js';
import { AppError, ErrorCodes, isAppError } from '../../core/errors.js';
import type { OAuthDiscovery } from '../oauth-discovery.js';
import { STYLESHEET, STYLESHEET_PATH } from './pages.js';

const OPEN = {
  'access-control-allow-origin': '*',
  'cache-control': 'no-store',
  'content-type': 'application/json',
};

function answer(
  reply: FastifyReply,
  status: number,
  body: unknown,
  extra: Record<string, string> = {},
) {
  return reply
    .code(status)
    .headers({ ...OPEN, ...extra })
    .send(JSON.stringify(body));
}

/** A refusal as RFC 6749 §5.2 has it: the error table's `oauth` column names it. */
function oauthFailure(reply: FastifyReply, error: unknown) {
  const oauth = isAppError(error) ? answerOf(error).oauth : undefined;
  if (!oauth) throw error;
  return answer(reply, oauth.status, {
    error: oauth.error,
    error_description: (error as AppError).message,
    pgmcp_code: (error as AppError).code,
  });
}

const text = (body: unknown, name: string): string | null => {
  const value = (body as Record<string, unknown> | null)?.[name];
  return typeof value === 'string' && value.length <= 4096 ? value : null;
};

function required(body: unknown, name: string): string {
  const value = text(body, name);
  if (!value) {
    throw new AppError(ErrorCodes.OAUTH_INVALID_REQUEST, `${name} is required.`, {
      category: 'input',
    });
  }
  return value;
}

export function registerTokenRoutes(
  app: FastifyInstance,
  deps: {
    server: AuthorizationServer;
    discovery: OAuthDiscovery;
    scopesSupported: readonly string[];
  },
): void {
  const { server, discovery } = deps;
  const issuer = (req: FastifyRequest) => server.issuerFor(discovery.originOf(req));

  const metadata = (req: FastifyRequest) => {
    const base = issuer(req);
    return {
      issuer: base,
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      jwks_uri: `${base}/oauth/jwks`,
      ...(server.settings.dynamicRegistration
        ? { registration_endpoint: `${base}/oauth/register` }
        : {}),
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      ...(deps.scopesSupported.length > 0 ? { scopes_supported: [...deps.scopesSupported] } : {}),
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: server.settings.clientMetadataDocuments,
    };
  };
  const issuerPath = server.settings.issuer
    ? new URL(server.settings.issuer).pathname.replace(/\/$/, '')
    : '';
  const metadataPaths = new Set([
    '/.well-known/oauth-authorization-server',
    `/.well-known/oauth-authorization-server${issuerPath}`,
  ]);
  for (const path of metadataPaths) {
    app.get(path, async (req, reply) =>
      answer(reply, 200, metadata(req), { 'cache-control': 'public, max-age=300' }),
    );
  }
  app.get('/oauth/jwks', async (_req, reply) =>
    answer(reply, 200, await server.keys.publicJwks(), { 'cache-control': 'public, max-age=60' }),
  );
  app.get(STYLESHEET_PATH, async (_req, reply) =>
    reply
      .headers({
        'content-type': 'text/css; charset=utf-8',
        'cache-control': 'public, max-age=3600',
      })
      .send(STYLESHEET),
  );

  const preflight = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply
      .code(204)
      .headers({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST, OPTIONS',
        'access-control-allow-headers': 'Content-Type, Authorization, MCP-Protocol-Version',
        'access-control-max-age': '600',
      })
      .send();
  for (const path of [
    ...metadataPaths,
    '/oauth/jwks',
    '/oauth/token',
    '/oauth/revoke',
    '/oauth/register',
  ]) {
    app.options(path, preflight);
  }

  if (server.settings.dynamicRegistration) {
    app.post('/oauth/register', { bodyLimit: 16_384 }, async (req, reply) => {
      try {
        const body = typeof req.body === 'string' ? (JSON.parse(req.body) as unknown) : req.body;
        const checked = checkClientMetadata(body);
        const client = await server.grants.registerClient(checked);
        return answer(reply, 201, {
          client_id: client.clientId,
          client_id_issued_at: Math.floor(Date.now() / 1000),
          ...(client.clientName ? { client_name: client.clientName } : {}),
          redirect_uris: client.redirectUris,
          ...client.metadata,
        });
      } catch (error) {
        if (error instanceof SyntaxError) {
          return answer(reply, 400, {
            error: 'invalid_client_metadata',
            error_description: 'The body is not JSON.',
            pgmcp_code: ErrorCodes.OAUTH_REGISTRATION_REFUSED,
          });
        }
        return oauthFailure(reply, error);
      }
    });
  }

  app.post('/oauth/token', { bodyLimit: 16_384 }, async (req, reply) => {
    try {
      const grant = text(req.body, 'grant_type');
      const clientId = required(req.body, 'client_id');
      if (text(req.body, 'client_secret')) {
        throw new AppError(
          ErrorCodes.OAUTH_INVALID_CLIENT,
          'pgmcp issues no client secrets: use PKCE.',
          { category: 'input' },
        );
      }
      if (grant === 'authorization_code') {
        const tokens = await server.exchangeCode({
          code: required(req.body, 'code'),
          clientId,
          redirectUri: required(req.body, 'redirect_uri'),
          verifier: required(req.body, 'code_verifier'),
          resource: text(req.body, 'resource'),
        });
        return answer(reply, 200, tokens);
      }
      if (grant === 'refresh_token') {
        const scope = text(req.body, 'scope');
        const tokens = await server.refresh({
          token: required(req.body, 'refresh_token'),
          clientId,
          scopes: scope === null ? null : scope.split(' ').filter(Boolean),
        });
        return answer(reply, 200, tokens);
      }
      throw new AppError(
        ErrorCodes.OAUTH_UNSUPPORTED,
        'grant_type must be authorization_code or refresh_token.',
        { category: 'input' },
      );
    } catch (error) {
      return oauthFailure(reply, error);
    }
  });

  app.post('/oauth/revoke', { bodyLimit: 16_384 }, async (req, reply) => {
    const token = text(req.body, 'token');
    if (!token) {
      return answer(reply, 400, {
        error: 'invalid_request',
        error_description: 'token is required.',
        pgmcp_code: ErrorCodes.OAUTH_INVALID_REQUEST,
      });
    }
    // RFC 7009 §2.2: the answer is the same whether or not the token was known.
    await server.grants.revoke(token);
    return answer(reply, 200, {});
  });
}
