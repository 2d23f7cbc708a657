// The HTTP edge of the built server, end to end: HTTPS with a certificate made for the test
// (the official SDK clients trusting that certificate alone), clear exit-2 errors for bad TLS
// files, two servers sharing one Redis budget, a server whose Redis is down, and CORS.
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernHttpTransport,
} from '@modelcontextprotocol/client';
import { rmSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchTrusting, makeCertificate, type TestCertificate } from '../helpers/https.js';
import { realPostgres } from '../helpers/postgres.js';
import { realRedis, uniquePrefix } from '../helpers/redis.js';
import {
  MODERN_VERSION,
  modernRequest,
  postRpc,
  rawHttp,
  runPgmcp,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const pg = await realPostgres('test/e2e/edge.test.ts (TLS, rate limits, CORS)');
const redisUrl = await realRedis('test/e2e/edge.test.ts (rate limits shared through Redis)');

const CLIENT_INFO = { name: 'pgmcp-e2e-edge', version: '1.0.0' };

/** A modern tools/list: needs no session, so each request stands alone. */
function listTools(url: string, headers: Record<string, string> = {}) {
  const { message, headers: rpcHeaders } = modernRequest('list', 'tools/list');
  return postRpc(url, message, { ...rpcHeaders, ...headers });
}

describe.skipIf(!pg)('HTTPS with --tls-cert / --tls-key', () => {
  let cert: TestCertificate;
  let server: HttpServer;

  beforeAll(async () => {
    cert = makeCertificate();
    server = await startHttpServer([
      '--database',
      pg!.url,
      '--tls-cert',
      cert.certPath,
      '--tls-key',
      cert.keyPath,
    ]);
  });

  afterAll(async () => {
    const exit = await server?.stop();
    rmSync(cert.dir, { recursive: true, force: true });
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('prints an https:// URL', () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('serves initialize and tools/list to the SDK client (legacy era) trusting only this cert', async () => {
    const client = new LegacyClient(CLIENT_INFO);
    const transport = new LegacyHttpTransport(new URL(server.url), {
      fetch: fetchTrusting(cert.cert),
    });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBeTruthy();
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('query_database');
    } finally {
      await client.close();
    }
  });

  it('serves the modern-era SDK client over HTTPS too', async () => {
    const client = new ModernClient(CLIENT_INFO, {
      versionNegotiation: { mode: { pin: MODERN_VERSION } },
    });
    const transport = new ModernHttpTransport(new URL(server.url), {
      fetch: fetchTrusting(cert.cert),
    });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t: { name: string }) => t.name)).toContain('query_database');
    } finally {
      await client.close();
    }
  });

  it('is refused by a client that does not trust the certificate', async () => {
    const error = await new Promise<NodeJS.ErrnoException>((resolve) => {
      const req = httpsGet(new URL('/health', server.url), () => resolve(new Error('answered')));
      req.on('error', (e) => resolve(e as NodeJS.ErrnoException));
    });
    expect(error.code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY/);
  });
});

describe.skipIf(!pg)('bad TLS files stop the server with exit code 2', () => {
  let a: TestCertificate;
  let b: TestCertificate;
  beforeAll(() => {
    a = makeCertificate();
    b = makeCertificate();
  });
  afterAll(() => {
    rmSync(a.dir, { recursive: true, force: true });
    rmSync(b.dir, { recursive: true, force: true });
  });

  const serve = (...tls: string[]) =>
    runPgmcp(['serve', '--http', '127.0.0.1:0', '--database', pg!.url, ...tls], {
      env: serverEnv(),
    });

  it('names a certificate file that does not exist', async () => {
    const missing = join(a.dir, 'missing.pem');
    const run = await serve('--tls-cert', missing, '--tls-key', a.keyPath);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`http.tls.cert: cannot read ${missing}: no such file`);
    expect(run.stdout).not.toContain('serving MCP');
  });

  it('names a key that belongs to another certificate', async () => {
    const run = await serve('--tls-cert', a.certPath, '--tls-key', b.keyPath);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `http.tls.key: ${b.keyPath} is not the private key of the certificate in ${a.certPath}`,
    );
  });

  it('names a file that is not PEM', async () => {
    const run = await serve('--tls-cert', a.keyPath, '--tls-key', a.keyPath);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`http.tls.cert: ${a.keyPath} holds no PEM certificate`);
  });

  it('refuses a certificate without a key', async () => {
    const run = await serve('--tls-cert', a.certPath);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'http.tls.key: expected a file: http.tls.cert and http.tls.key are given together',
    );
  });
});

describe.skipIf(!pg || !redisUrl)('rate limits shared by two servers through Redis', () => {
  let first: HttpServer;
  let second: HttpServer;
  const prefix = uniquePrefix('e2e');

  beforeAll(async () => {
    const env = serverEnv({
      PGMCP_RATE_LIMIT_MCP: '3',
      PGMCP_RATE_LIMIT_REDIS: redisUrl!,
      PGMCP_RATE_LIMIT_REDIS_KEY_PREFIX: prefix,
      PGMCP_HTTP_ALLOWED_ORIGINS: 'https://app.example.com',
      PGMCP_HTTP_CORS_ORIGINS: 'https://app.example.com',
    });
    [first, second] = await Promise.all([
      startHttpServer(['--database', pg!.url], { env }),
      startHttpServer(['--database', pg!.url], { env }),
    ]);
  });

  afterAll(async () => {
    const exits = await Promise.all([first?.stop(), second?.stop()]);
    expect(exits).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
  });

  it('spend one budget whichever server answers, then answer 429 with Retry-After', async () => {
    expect((await listTools(first.url)).status).toBe(200);
    expect((await listTools(second.url)).status).toBe(200);
    expect((await listTools(first.url)).status).toBe(200);
    const refused = await listTools(second.url);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.json).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { retryAfter } },
    });
    expect((await listTools(first.url)).status).toBe(429);
    // /health is not limited.
    expect((await rawHttp(`${first.origin}/health`)).status).toBe(200);
  });

  it('answer a CORS preflight from an allowed origin', async () => {
    const res = await rawHttp(first.url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-protocol-version, mcp-method',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(res.headers['access-control-allow-headers'])).toMatch(/Mcp-Method/i);
  });
});

describe.skipIf(!pg)('a rate-limit Redis that is down', () => {
  let server: HttpServer;

  beforeAll(async () => {
    server = await startHttpServer(['--database', pg!.url], {
      env: serverEnv({ PGMCP_RATE_LIMIT_MCP: '2', PGMCP_RATE_LIMIT_REDIS: 'redis://127.0.0.1:1' }),
    });
  });

  afterAll(async () => {
    const exit = await server?.stop();
    expect(exit).toEqual({ code: 0, signal: null });
  });

  it('neither stops the server nor lifts the limit: this instance counts on its own', async () => {
    expect((await listTools(server.url)).status).toBe(200);
    expect((await listTools(server.url)).status).toBe(200);
    expect((await listTools(server.url)).status).toBe(429);
    expect((await rawHttp(`${server.origin}/health`)).status).toBe(200);
    expect(server.stderr()).toContain('Redis not reachable at start');
  });
});
