// Read replicas and a rotated password (SIGHUP), and their state in /health. On a cluster of
// the test's own with password (SCRAM) authentication, two "replicas" on the same server
// (told apart by who answers): one whose URL has no password (it follows the primary's, read
// from its passwordFile) and one with its own role and password in its URL. After both roles'
// passwords change in PostgreSQL, the password file and the replica URL are rewritten and
// SIGHUP: new replica connections log in and reads go to the replicas again. A third database
// has a replica that is down: /health says why, /ready stays 200.
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
if (!ready) reportSkipped('replica-rotation', 'no local PostgreSQL server binaries (initdb)');

const text = (result: unknown): string =>
  ((result as { content: Array<{ text?: string }> }).content ?? [])
    .map((c) => c.text ?? '')
    .join('');

interface HealthBody {
  status: string;
  database: string;
  databases: Array<{
    name: string;
    status: string;
    replicas?: Array<{ replica: string; usable: boolean; reason: string }>;
  }>;
}

describe.skipIf(!ready)('read replicas: password rotation and /health', () => {
  let cluster: Cluster;
  let dir: string;
  let passwordFile: string;
  let configPath: string;
  let server: HttpServer;
  let client: Client;

  const config = (readerPassword: string): string =>
    [
      'databases:',
      '  - name: app',
      '    host: 127.0.0.1',
      `    port: ${cluster.port}`,
      '    database: postgres',
      '    user: app',
      `    passwordFile: ${passwordFile}`,
      '    readReplicas:',
      `      - postgres://app@127.0.0.1:${cluster.port}/follower`,
      `      - postgres://reader:${readerPassword}@127.0.0.1:${cluster.port}/postgres`,
      '  - name: spare',
      '    host: 127.0.0.1',
      `    port: ${cluster.port}`,
      '    database: postgres',
      '    user: app',
      `    passwordFile: ${passwordFile}`,
      // Nothing listens there: refused at once.
      '    readReplicas: ["postgres://app:not-shown@127.0.0.1:1/postgres"]',
      '',
    ].join('\n');

  /** Who answered a read: `user@database` (the primary is app@postgres). */
  const whoAnswers = async (): Promise<string> => {
    const result = await client.callTool({
      name: 'query_database',
      arguments: { query: "SELECT current_user || '@' || current_database() AS who" },
    });
    if (result.isError === true) return `error: ${text(result)}`;
    return /\w+@\w+/.exec(text(result))?.[0] ?? text(result);
  };
  /** The answers of a few reads in a row (replicas take them in turn). */
  const answers = async (): Promise<Set<string>> => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add(await whoAnswers());
    return seen;
  };
  const dropConnections = () =>
    cluster.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename IN ('app', 'reader')",
    );

  beforeAll(async () => {
    cluster = await startCluster();
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
    await cluster.query("CREATE ROLE reader LOGIN PASSWORD 'first-reader'");
    await cluster.query('CREATE DATABASE follower');
    dir = mkdtempSync(join(tmpdir(), 'pgmcp-replica-rotate-'));
    passwordFile = join(dir, 'app-password');
    writeFileSync(passwordFile, 'first-secret\n');
    configPath = join(dir, 'pgmcp.yaml');
    writeFileSync(configPath, config('first-reader'));
    server = await startHttpServer(['--config', configPath], {
      env: serverEnv({ PGMCP_DEMO: 'false', PGMCP_LOG_LEVEL: 'info' }),
    });
    client = new Client({ name: 'replica-rotation-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  }, 120_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await server?.stop();
    cluster?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a rotated password reaches the replicas: reads go to them again after SIGHUP', async () => {
    // Both replicas log in: the one without a password with the primary's.
    await vi.waitFor(
      async () =>
        expect([...(await answers())].sort()).toEqual(['app@follower', 'reader@postgres']),
      { timeout: 10_000 },
    );

    await cluster.query("ALTER ROLE app PASSWORD 'second-secret'");
    await cluster.query("ALTER ROLE reader PASSWORD 'second-reader'");
    writeFileSync(passwordFile, 'second-secret\n');
    writeFileSync(configPath, config('second-reader'));
    server.process.kill('SIGHUP');
    await vi.waitFor(() => expect(server.stderr()).toContain('passwordsRotated'), {
      timeout: 10_000,
    });
    expect(server.stderr()).not.toContain('cannot apply while pgmcp runs');
    await dropConnections();
    // New logins on both replicas (each checked again within a second or so).
    await vi.waitFor(
      async () =>
        expect([...(await answers())].sort(), server.stderr().slice(-3000)).toEqual([
          'app@follower',
          'reader@postgres',
        ]),
      { timeout: 15_000, interval: 500 },
    );
    expect(server.stderr()).not.toMatch(/first-secret|second-secret|first-reader|second-reader/);
  }, 60_000);

  it('/health shows each replica, a down one with its reason; /ready stays 200', async () => {
    // /health answers with the last checks' findings and starts the checks that are due.
    let raw = '';
    let body = {} as HealthBody;
    await vi.waitFor(
      async () => {
        const health = await fetch(`${server.origin}/health`);
        raw = await health.text();
        expect(health.status).toBe(200);
        body = JSON.parse(raw) as HealthBody;
        const spare = body.databases.find((d) => d.name === 'spare');
        expect(spare?.replicas?.[0]?.reason).toMatch(/refused/);
        const app = body.databases.find((d) => d.name === 'app');
        expect(app?.replicas?.map((r) => r.usable)).toEqual([true, true]);
      },
      { timeout: 10_000, interval: 200 },
    );
    // The keys clients know are still there.
    expect(body).toMatchObject({ status: 'ok', database: 'up' });
    const app = body.databases.find((d) => d.name === 'app')!;
    expect(app.status).toBe('up');
    expect(app.replicas).toEqual([
      { replica: `127.0.0.1:${cluster.port}`, usable: true, reason: expect.stringMatching(/lag/) },
      { replica: `127.0.0.1:${cluster.port}`, usable: true, reason: expect.stringMatching(/lag/) },
    ]);
    const spare = body.databases.find((d) => d.name === 'spare')!;
    expect(spare.status).toBe('up');
    expect(spare.replicas).toEqual([
      { replica: '127.0.0.1:1', usable: false, reason: expect.stringMatching(/refused/) },
    ]);
    expect(raw).not.toMatch(/not-shown|secret|reader@/);

    const readiness = await fetch(`${server.origin}/ready`);
    expect(readiness.status).toBe(200);
  });
});
