// The web client at / (http/web-client.ts): cache headers, the CSP, the page fallback, and the
// paths it must leave alone.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerWebClient, WEB_CSP } from './web-client.js';

const INDEX = '<!doctype html><script type="module" src="/assets/app-1a2b3c.js"></script>';
let dir: string;

function appWith(root: string): FastifyInstance {
  const app = Fastify();
  // Like /api: a scope with its own 404 answer, which the page fallback must not take over.
  void app.register(
    async (scope) => {
      scope.setNotFoundHandler((_req, reply) =>
        reply.code(404).send({ error: 'no such endpoint' }),
      );
      scope.get('/user/info', async () => ({ authenticated: false }));
    },
    { prefix: '/api' },
  );
  app.post('/mcp', async () => ({}));
  app.get('/health', async () => ({ status: 'ok' }));
  registerWebClient(app, {
    root,
    reservedPaths: ['/mcp', '/mcp/v1'],
    logger: pino({ level: 'silent' }),
  });
  return app;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pgmcp-web-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'app-1a2b3c.js'), 'console.log(1)');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const page = { accept: 'text/html,application/xhtml+xml' };

describe('web client', () => {
  it('serves index.html at / with no-cache and a strict CSP', async () => {
    const app = appWith(dir);
    const answer = await app.inject({ url: '/', headers: page });
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toBe(INDEX);
    expect(answer.headers['content-type']).toMatch(/text\/html/);
    expect(answer.headers['cache-control']).toBe('no-cache');
    expect(answer.headers['content-security-policy']).toBe(WEB_CSP);
    expect(WEB_CSP).toContain("script-src 'self'");
    expect(WEB_CSP).toContain("connect-src 'self'");
    expect(WEB_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(answer.headers['x-frame-options']).toBe('DENY');
    await app.close();
  });

  it('caches hashed assets for a year', async () => {
    const app = appWith(dir);
    const answer = await app.inject({ url: '/assets/app-1a2b3c.js' });
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(answer.headers['content-type']).toMatch(/javascript/);
    expect(answer.headers['content-security-policy']).toBe(WEB_CSP);
    await app.close();
  });

  it('answers page paths with index.html and leaves /api, /mcp, /health, /.well-known and missing files alone', async () => {
    const app = appWith(dir);
    const deep = await app.inject({ url: '/conversations/conv_1?x=1', headers: page });
    expect(deep.statusCode).toBe(200);
    expect(deep.body).toBe(INDEX);
    expect(deep.headers['cache-control']).toBe('no-cache');

    const api = await app.inject({ url: '/api/nope', headers: page });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ error: 'no such endpoint' });
    expect((await app.inject({ url: '/api/user/info' })).json()).toEqual({ authenticated: false });

    for (const url of [
      '/mcp/other',
      '/.well-known/oauth-protected-resource',
      '/health/x',
      '/assets/gone-123.js',
      '/favicon.ico',
    ]) {
      const answer = await app.inject({ url, headers: page });
      expect(answer.statusCode, url).toBe(404);
      expect(answer.body, url).not.toContain('<!doctype html>');
    }
    // A script asking for JSON gets a 404, not a page.
    expect(
      (await app.inject({ url: '/anything', headers: { accept: 'application/json' } })).statusCode,
    ).toBe(404);
    expect((await app.inject({ method: 'POST', url: '/anything', headers: page })).statusCode).toBe(
      404,
    );
    await app.close();
  });

  it('says how to build the client when web/dist is missing', async () => {
    const app = appWith(join(dir, 'missing'));
    const answer = await app.inject({ url: '/' });
    expect(answer.statusCode).toBe(503);
    expect(answer.body).toContain('npm run build -w web');
    await app.close();
  });
});
