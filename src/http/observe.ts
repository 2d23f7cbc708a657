// Every request gets an id and is counted. The id is the one a trusted proxy (auth.trustedProxies)
// sent in X-Request-Id, else a new one; it is returned in X-Request-Id and held in the request
// scope (core/request-scope.ts), so each log line and audit record made while serving the
// request carries it. The HTTP request counter is fed when the response is done.
import { AsyncResource } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Metrics, RouteFamily } from '../core/metrics.js';
import { requestIdFrom, runInRequestScope } from '../core/request-scope.js';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Fastify's genReqId: the trusted proxy's id, else a new UUID. */
export function requestIdGenerator(
  trusted: (address: string | undefined) => boolean,
): (req: IncomingMessage) => string {
  return (req) => {
    const given = req.headers[REQUEST_ID_HEADER];
    const value = Array.isArray(given) ? given[0] : given;
    return requestIdFrom(trusted(req.socket.remoteAddress) ? value?.trim() : undefined);
  };
}

/** The route family a request counts under; unrouted requests are 'other'. */
export function routeFamily(req: FastifyRequest, mcpPaths: readonly string[]): RouteFamily {
  const route = req.routeOptions.url;
  if (route === undefined) return 'other';
  if (mcpPaths.includes(route)) return 'mcp';
  if (route.startsWith('/api/')) return 'api';
  if (route.startsWith('/oauth/') || route.startsWith('/.well-known/')) return 'oauth';
  if (route === '/health') return 'health';
  if (route === '/live' || route === '/ready') return 'probe';
  if (route === '/metrics') return 'metrics';
  return 'web';
}

const scopes = new WeakMap<FastifyRequest, AsyncResource>();

export function registerObservation(
  app: FastifyInstance,
  options: { mcpPaths: readonly string[]; metrics: Metrics },
): void {
  app.addHook('onRequest', (req, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, req.id);
    runInRequestScope({ requestId: req.id }, () => {
      const resource = new AsyncResource('pgmcp-request');
      scopes.set(req, resource);
      resource.runInAsyncScope(done);
    });
  });
  // The body is read on the socket's events, outside the scope opened above: the stages after
  // it (validation, the handler) are re-entered into it here.
  app.addHook('preValidation', (req, _reply, done) => {
    const resource = scopes.get(req);
    if (resource) resource.runInAsyncScope(done);
    else done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    options.metrics.httpRequest({
      family: routeFamily(req, options.mcpPaths),
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    done();
  });
}
