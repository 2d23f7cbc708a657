import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { isHeaderSafe, safeHeaderValue } from '../core/header-value.js';
import { registerHeaderGuard } from './header-guard.js';

describe('header guard (onSend, every response)', () => {
  const app = Fastify({ logger: false });
  registerHeaderGuard(app);
  app.get('/unsafe', async (_req, reply) => {
    reply.header('x-note', 'caf\u00e9 \u2192 done');
    reply.header('x-list', ['plain', 'line\nbreak']);
    return { ok: true };
  });
  app.get('/plain', async (_req, reply) => {
    reply.header('x-note', 'plain ascii');
    return 'text';
  });
  afterAll(() => app.close());

  it('rewrites values Node would refuse, so the answer is not a 500, and keeps the body', async () => {
    const res = await app.inject({ method: 'GET', url: '/unsafe' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(res.headers['x-note']).toBe(safeHeaderValue('caf\u00e9 \u2192 done'));
    expect(isHeaderSafe(String(res.headers['x-note']))).toBe(true);
    expect(res.headers['x-list']).toEqual(['plain', safeHeaderValue('line\nbreak')]);
  });

  it('leaves plain ASCII values and the payload as they are', async () => {
    const res = await app.inject({ method: 'GET', url: '/plain' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('text');
    expect(res.headers['x-note']).toBe('plain ascii');
  });
});
