// A database password rotated while pgmcp serves: the role's password changes in PostgreSQL,
// its passwordFile is rewritten, SIGHUP. New connections log in with the new password and the
// session opened before goes on; before the reload, a new connection with the old password is
// refused by the server. On a cluster of the test's own with password (SCRAM) authentication.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serverBinDir, startCluster, type Cluster } from '../helpers/pg-cluster.js';
import { reportSkipped } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const ready = serverBinDir() !== null;
if (!ready) reportSkipped('password-rotation', 'no local PostgreSQL server binaries (initdb)');

const text = (result: unknown): string =>
  ((result as { content: Array<{ text?: string }> }).content ?? [])
    .map((c) => c.text ?? '')
    .join('');

describe.skipIf(!ready)('a database password rotated with SIGHUP', () => {
  let cluster: Cluster;
  let dir: string;
  let passwordFile: string;
  let server: HttpServer;
  let client: Client;

  const whoAmI = async (): Promise<{ isError: boolean; text: string }> => {
    const result = await client.callTool({
      name: 'query_database',
      arguments: { query: 'SELECT current_user AS who' },
    });
    return { isError: result.isError === true, text: text(result) };
  };
  /** Ends the server's connections, so its next call needs a new one (a new login). */
  const dropConnections = () =>
    cluster.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'app'");

  beforeAll(async () => {
    cluster = await startCluster();
    // The superuser keeps trust on loopback (the test's own statements); everyone else logs in
    // with a password.
    writeFileSync(
      join(cluster.dataDir, 'pg_hba.conf'),
      [
        'local all all trust',
        'host all postgres 127.0.0.1/32 trust',
        'host all all 127.0.0.1/32 scram-sha-256',
        '',
      ].join('\n'),
    );
    await cluster.query('SELECT pg_reload_conf()');
    await cluster.query("CREATE ROLE app LOGIN PASSWORD 'first-secret'");
    dir = mkdtempSync(join(tmpdir(), 'pgmcp-rotate-'));
    passwordFile = join(dir, 'app-password');
    writeFileSync(passwordFile, 'first-secret\n');
    const configPath = join(dir, 'pgmcp.yaml');
    writeFileSync(
      configPath,
      [
        'databases:',
        '  - name: app',
        '    host: 127.0.0.1',
        `    port: ${cluster.port}`,
        '    database: postgres',
        '    user: app',
        `    passwordFile: ${passwordFile}`,
        '',
      ].join('\n'),
    );
    server = await startHttpServer(['--config', configPath], {
      env: serverEnv({ PGMCP_DEMO: 'false', PGMCP_LOG_LEVEL: 'info' }),
    });
    client = new Client({ name: 'rotation-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  }, 120_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await server?.stop();
    cluster?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('new connections use the new password after SIGHUP; the session goes on', async () => {
    expect(await whoAmI()).toEqual({ isError: false, text: expect.stringContaining('app') });

    // The credential rotates in PostgreSQL and in the file pgmcp reads it from.
    await cluster.query("ALTER ROLE app PASSWORD 'second-secret'");
    writeFileSync(passwordFile, 'second-secret\n');
    await dropConnections();
    // Not reloaded yet: a new login with the old password is refused by the server.
    const before = await whoAmI();
    expect(before.isError).toBe(true);
    expect(before.text).not.toContain('first-secret');

    server.process.kill('SIGHUP');
    await vi.waitFor(() => expect(server.stderr()).toContain('passwordsRotated'), {
      timeout: 10_000,
    });
    expect(server.stderr()).not.toContain('cannot apply while pgmcp runs');
    await dropConnections();
    const after = await whoAmI();
    expect(after, server.stderr().slice(-3000)).toEqual({
      isError: false,
      text: expect.stringContaining('app'),
    });
    // Neither password reached the log.
    expect(server.stderr()).not.toMatch(/first-secret|second-secret/);
  });
});
