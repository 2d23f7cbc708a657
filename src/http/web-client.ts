// The web client (web/dist, built by `npm run build -w web` during install) at /. Hashed
// assets are cached for a year, index.html never without revalidation, and every page answer
// carries a strict Content-Security-Policy: scripts and styles only from this origin (no inline
// code, no CDN), requests only to this origin. Unknown page paths get index.html (the client
// routes itself) — never the API's, MCP's, health's, the probes', metrics' or discovery paths,
// whose 404s stay theirs.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import staticFiles from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { packagePath } from '../core/package-path.js';

export const WEB_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const WEB_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': WEB_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

const LONG_CACHE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

export interface WebClientOptions {
  /** The built client: a directory with index.html and assets/. */
  root: string;
  /** Paths that are never the client's (their own 404s stand), e.g. the MCP endpoint. */
  reservedPaths: readonly string[];
  logger: Logger;
}

/** web/dist in this package. */
export function defaultWebRoot(): string {
  return packagePath('web/dist');
}

const ALWAYS_RESERVED = ['/api', '/health', '/live', '/ready', '/metrics', '/.well-known'];

function isReserved(path: string, reserved: readonly string[]): boolean {
  return [...ALWAYS_RESERVED, ...reserved].some(
    (prefix) => path === prefix || path.startsWith(`${prefix.replace(/\/$/, '')}/`),
  );
}

/** A browser navigating to a page (not a script asking for a missing file or route). */
function wantsPage(request: FastifyRequest): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const path = request.url.split('?')[0] ?? '';
  if (/\.[a-z0-9]+$/i.test(path)) return false;
  return (request.headers.accept ?? '').includes('text/html');
}

export function registerWebClient(app: FastifyInstance, options: WebClientOptions): void {
  const { root, reservedPaths, logger } = options;
  const built = existsSync(join(root, 'index.html'));

  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    // The same answer Fastify gives without a handler of ours.
    reply.code(404).send({
      message: `Route ${request.method}:${request.url} not found`,
      error: 'Not Found',
      statusCode: 404,
    });

  if (!built) {
    logger.warn({ root }, 'the web client is not built (npm run build -w web); / answers 503');
    app.get('/', async (_request, reply) =>
      reply
        .code(503)
        .header('content-type', 'text/plain; charset=utf-8')
        .send(
          'The pgmcp web client is not built. Run `npm run build -w web` (npm ci does it), then restart.\n',
        ),
    );
    return;
  }

  const sendIndex = (reply: FastifyReply) =>
    reply.headers(WEB_HEADERS).header('cache-control', REVALIDATE).sendFile('index.html');

  void app.register(staticFiles, {
    root,
    prefix: '/',
    // Routes for the files present now (the build is immutable); no catch-all route, which
    // would swallow /api's own 404 answers.
    wildcard: false,
    index: false,
    redirect: false,
    dotfiles: 'deny',
    cacheControl: false,
    setHeaders(reply, path) {
      reply.headers(WEB_HEADERS);
      reply.header('cache-control', /[\\/]assets[\\/]/.test(path) ? LONG_CACHE : REVALIDATE);
    },
  });

  app.get('/', async (_request, reply) => sendIndex(reply));

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    if (wantsPage(request) && !isReserved(path, reservedPaths)) return sendIndex(reply);
    return notFound(request, reply);
  });
}
