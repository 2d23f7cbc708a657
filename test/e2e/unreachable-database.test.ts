// A database that cannot be reached when `pgmcp serve` starts: the server starts anyway (the
// database may come up later; /ready says it is down), and the start banner says which database
// cannot be reached and why, in safe words (never the URL's password), pointing to
// `pgmcp doctor`. A reachable database gets no such line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { realPostgres, throwawayDatabase, type RealPostgres } from '../helpers/postgres.js';
import { rawHttp, serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/unreachable-database.test.ts (a database that is down)');

const SECRET = 'hunter2-unreachable-s3cret';
const WARNING = /^warning: database (\S+) cannot be reached now: (.*)$/gm;

/** A port on 127.0.0.1 nothing listens on (bound once, then closed). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The URL of `info`'s server, as `user` with `password`, on database `db`. */
function urlOn(info: RealPostgres, db: string, password = SECRET): string {
  const u = new URL(info.adminUrl);
  u.password = password;
  u.pathname = `/${db}`;
  return u.toString();
}

describe.skipIf(!pg)('pgmcp serve with a database that cannot be reached', () => {
  const info = pg as RealPostgres;
  // The state (tokens, sessions) in a database of its own, so each start takes a second.
  const state = throwawayDatabase(info, 'pgmcp_unreach_state');
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-unreach-'));
  const servers: HttpServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    rmSync(root, { recursive: true, force: true });
  });

  /** Starts the server and waits for its whole banner (the client configuration ends it). */
  async function start(args: string[], env: Record<string, string> = {}): Promise<HttpServer> {
    const server = await startHttpServer(args, {
      env: serverEnv({ PGMCP_STATE_URL: state.url, ...env }),
    });
    servers.push(server);
    await vi.waitFor(() => expect(server.stdout()).toContain('"mcpServers"'), { timeout: 10_000 });
    return server;
  }

  function warnings(server: HttpServer): { database: string; reason: string }[] {
    return [...server.stdout().matchAll(WARNING)].map((m) => ({
      database: m[1]!,
      reason: m[2]!,
    }));
  }

  function expectNoSecret(server: HttpServer): void {
    expect(server.stdout()).not.toContain(SECRET);
    expect(server.stderr()).not.toContain(SECRET);
  }

  it('a database that does not exist: named in the banner, with the server reason', async () => {
    const missing = `pgmcp_no_such_db_${process.pid}`;
    const server = await start(['--database', urlOn(info, missing)]);
    const lines = server.stdout().split('\n');
    const at = lines.findIndex((line) => line.startsWith('database: '));
    expect(lines[at]).toBe(`database: ${missing} (postgres, read-only)`);
    // Right after the database line, one line saying what is wrong and what to run.
    expect(lines[at + 1]).toBe(
      `warning: database ${missing} cannot be reached now: database "${missing}" does not exist. pgmcp serves anyway and connects once it answers; run \`pgmcp doctor\` to check the connection.`,
    );
    expect(warnings(server)).toHaveLength(1);
    // The log says it too, for a service whose stdout nobody reads.
    expect(server.stderr()).toContain(`database ${missing} cannot be reached now:`);
    expectNoSecret(server);
    // It serves: /live answers, /ready says the database is down.
    expect((await rawHttp(`${server.origin}/live`)).status).toBe(200);
    const ready = await rawHttp(`${server.origin}/ready`);
    expect(ready.status).toBe(503);
    expect(ready.json).toMatchObject({
      status: 'not ready',
      reason: 'unavailable',
      checks: { database: 'down', state: 'up' },
    });
  });

  it('a closed port: connection refused', async () => {
    const port = await closedPort();
    const server = await start([
      '--database',
      `postgres://someone:${SECRET}@127.0.0.1:${port}/app`,
    ]);
    expect(warnings(server)).toEqual([
      { database: 'app', reason: expect.stringMatching(/^connection refused \(ECONNREFUSED\)\. /) },
    ]);
    expect(server.stdout()).toContain('`pgmcp doctor`');
    expectNoSecret(server);
  });

  it('several databases: a line for each one that cannot be reached, none for the others', async () => {
    const port = await closedPort();
    const missing = `pgmcp_no_such_db_${process.pid}_b`;
    const config = join(root, 'several.yaml');
    writeFileSync(
      config,
      [
        'databases:',
        '  - name: good',
        `    url: ${info.url}`,
        '    default: true',
        '  - name: missing',
        `    url: ${urlOn(info, missing, '')}`,
        '    passwordEnv: UNREACH_PASSWORD',
        '  - name: closed',
        `    url: postgres://someone@127.0.0.1:${port}/app`,
        '    passwordEnv: UNREACH_PASSWORD',
      ].join('\n'),
    );
    const server = await start(['--config', config], {
      UNREACH_PASSWORD: SECRET,
    });
    const found = warnings(server);
    expect(found.map((w) => w.database)).toEqual(['missing', 'closed']);
    expect(found[0]!.reason).toMatch(new RegExp(`^database "${missing}" does not exist\\. `));
    expect(found[1]!.reason).toMatch(/^connection refused \(ECONNREFUSED\)\. /);
    // `pgmcp doctor` alone checks database.url: an entry's line says to give its URL.
    for (const w of found) expect(w.reason).toContain('`pgmcp doctor --database URL` with its URL');
    expectNoSecret(server);
    // The default database answers, so the instance is ready.
    expect((await rawHttp(`${server.origin}/ready`)).status).toBe(200);
  });

  it('a database that answers: no such line', async () => {
    const server = await start(['--database', info.url]);
    expect(server.stdout()).toContain(`database: ${info.database} (postgres, read-only)`);
    expect(server.stdout()).not.toContain('cannot be reached');
    expect(server.stderr()).not.toContain('cannot be reached');
    expect((await rawHttp(`${server.origin}/ready`)).status).toBe(200);
  });
});
