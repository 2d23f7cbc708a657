// SIGHUP: the configuration is read again. A renewed TLS certificate (same paths, new files) is
// served to new connections; a change that cannot apply live (database.maxRows here) is refused
// with a log line and the running configuration stays, as it does when the file cannot be read;
// an open session goes on through all of it.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fetchTrusting, makeCertificate, type TestCertificate } from '../helpers/https.js';
import { realPostgres, type RealPostgres } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, tail, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/faults-reload.test.ts (SIGHUP)');

const fingerprintOf = (pem: Buffer): string => new X509Certificate(pem).fingerprint256;

/** The certificate a new TLS connection to `port` is served. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe.skipIf(!pg)('SIGHUP reloads what can change live, and refuses the rest', () => {
  const info = pg as RealPostgres;
  let dir: string;
  let first: TestCertificate;
  let second: TestCertificate;
  let configPath: string;
  let server: HttpServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pgmcp-reload-'));
    first = makeCertificate(dir);
    second = makeCertificate(mkdtempSync(join(tmpdir(), 'pgmcp-reload-next-')));
    configPath = join(dir, 'pgmcp.yaml');
    writeFileSync(configPath, 'database:\n  maxRows: 1000\n');
    server = await startHttpServer(
      [
        '--config',
        configPath,
        '--database',
        info.url,
        '--tls-cert',
        first.certPath,
        '--tls-key',
        first.keyPath,
      ],
      { env: serverEnv() },
    );
  });
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    rmSync(dir, { recursive: true, force: true });
    rmSync(second.dir, { recursive: true, force: true });
  });

  const post = async (ca: Buffer, body: object, headers: Record<string, string> = {}) =>
    fetchTrusting(ca)(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });
  const logged = (text: string): number => server.stderr().split(text).length - 1;

  it('a renewed certificate is served after SIGHUP; the session opened before goes on', async () => {
    const port = Number(new URL(server.url).port);
    expect(await servedFingerprint(port)).toBe(fingerprintOf(first.cert));
    const init = await post(first.cert, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'reload-test', version: '1' },
      },
    });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id')!;
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    await post(first.cert, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);

    copyFileSync(second.certPath, first.certPath);
    copyFileSync(second.keyPath, first.keyPath);
    server.process.kill('SIGHUP');
    await vi.waitFor(() =>
      expect(logged('SIGHUP: configuration reloaded'), server.stderr()).toBe(1),
    );
    expect(await servedFingerprint(port)).toBe(fingerprintOf(readFileSync(second.certPath)));

    const list = await post(second.cert, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
    expect(list.status).toBe(200);
    expect(await list.text()).toContain('query_database');

    // A change that cannot apply while serving: refused whole, with the key named.
    writeFileSync(configPath, 'database:\n  maxRows: 500\n');
    server.process.kill('SIGHUP');
    await vi.waitFor(() =>
      expect(logged('cannot apply while pgmcp runs'), tail(server.stderr(), 5)).toBe(1),
    );
    expect(server.stderr()).toContain('database.maxRows');

    // A file that cannot be read: the running configuration stays.
    writeFileSync(configPath, 'database: [unclosed\n');
    server.process.kill('SIGHUP');
    await vi.waitFor(() => expect(logged('the configuration cannot be read')).toBe(1));

    const again = await post(second.cert, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, headers);
    expect(again.status, tail(server.stderr())).toBe(200);
    expect(server.process.exitCode).toBeNull();
    expect(logged('SIGHUP: configuration reloaded')).toBe(1);
  });
});
