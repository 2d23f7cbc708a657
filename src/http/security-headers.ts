// Standard protective headers on every /api response (404s included): the API answers JSON
// to scripts, so nothing of it may be sniffed into HTML, framed, leak a Referer or be cached.
import type { FastifyInstance } from 'fastify';

const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

export function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/');
}

export function registerApiSecurityHeaders(app: FastifyInstance): void {
  // A callback hook: it runs for every response (MCP ones too), and an async one costs a promise.
  app.addHook('onSend', (req, reply, payload, done) => {
    const path = req.routeOptions.url ?? req.url.split('?')[0] ?? '';
    if (!isApiPath(path)) return done(null, payload);
    reply.headers(API_SECURITY_HEADERS);
    // A route that means to be cached says so itself.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}
