// `pgmcp token` and `pgmcp user` as an operator runs them: against the embedded default with no
// server (the command starts the database itself), while `pgmcp serve` holds the same data
// directory (the command goes through the server's socket), and against a PostgreSQL state
// database. What the commands wrote is checked through the TokenStore, as a server would see it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { createAuth } from '../../src/auth/index.js';
import { openStateDatabase, type StateDb } from '../../src/state/index.js';
import { realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import {
  rawHttp,
  runPgmcp,
  serverEnv,
  spawnPgmcp,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const logger = pino({ level: 'silent' });
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});
function dataDir(): string {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-authcli-'));
  roots.push(root);
  return join(root, 'data');
}

const lookupOn = (db: StateDb) =>
  createAuth(db, {
    sessionTtlSeconds: 60,
    cacheTtlMs: 0,
    lockout: { maxFailures: 5, maxFailuresPerAddress: 20, windowSeconds: 60, lockSeconds: 60 },
  });

/** `pgmcp <args>` with `input` on stdin (a pipe, as a script would give it). */
async function runWithInput(args: string[], input: string, env = serverEnv()) {
  const run = spawnPgmcp(args, { env, stdin: 'pipe' });
  run.process.stdin!.end(input);
  const timer = setTimeout(() => run.process.kill('SIGKILL'), 90_000);
  const exit = await run.exited;
  clearTimeout(timer);
  return { ...exit, stdout: run.stdout(), stderr: run.stderr() };
}

describe('pgmcp token with the embedded state database', () => {
  it('starts the embedded database itself when no server runs', { timeout: 180_000 }, async () => {
    const dir = dataDir();
    const created = await runPgmcp(
      ['token', 'create', '--name', 'solo', '--expires', '12h', '--data-dir', dir],
      {
        timeoutMs: 120_000,
      },
    );
    expect(created.code, created.stderr).toBe(0);
    const token = created.stdout.trim();
    expect(token).toMatch(/^pgmcp_[A-Za-z0-9_-]{43}$/);
    expect(created.stderr).toContain('shown only this once');
    // A data directory that did not exist: the operator hears a new state database was made.
    expect(created.stderr).toContain(`no state database in ${dir} yet; creating one there`);
    const again = await runPgmcp(['token', 'list', '--data-dir', dir], { timeoutMs: 120_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('no state database');

    // The command stopped its database: this process can start it again.
    const db = await openStateDatabase({ url: null, dataDir: dir, logger });
    try {
      expect(db.mode).toBe('embedded-started');
      const principal = await lookupOn(db).tokens.verify(token);
      expect(principal).toMatchObject({ kind: 'token', userId: 'solo' });
    } finally {
      await db.close();
    }
  });

  it(
    'goes through the socket of a server that holds the data directory',
    { timeout: 240_000 },
    async () => {
      const dir = dataDir();
      let server: HttpServer | undefined;
      try {
        server = await startHttpServer(['--data-dir', dir]);
        const created = await runPgmcp(
          [
            'token',
            'create',
            '--name',
            'live',
            '--role',
            'reader',
            '--bind-database',
            'demo',
            '--data-dir',
            dir,
          ],
          { timeoutMs: 60_000 },
        );
        expect(created.code, created.stderr).toBe(0);
        const token = created.stdout.trim();

        const added = await runWithInput(
          ['user', 'add', 'alice', '--role', 'analyst', '--data-dir', dir],
          'a-long-password\n',
        );
        expect(added.code, added.stderr).toBe(0);

        const db = await openStateDatabase({ url: null, dataDir: dir, logger });
        try {
          expect(db.mode).toBe('embedded-attached');
          const auth = lookupOn(db);
          expect(await auth.tokens.verify(token)).toMatchObject({
            kind: 'token',
            userId: 'live',
            roles: ['reader'],
            boundDatabase: 'demo',
          });
          const login = await auth.sessions.login('alice', 'a-long-password', null);
          expect(await auth.authenticateBearer(login.sessionToken)).toMatchObject({
            kind: 'user',
            userId: 'alice',
          });
        } finally {
          await db.close();
        }

        const listed = await runPgmcp(['token', 'list', '--json', '--data-dir', dir]);
        expect(listed.code, listed.stderr).toBe(0);
        const tokens = JSON.parse(listed.stdout) as { name: string; prefix: string }[];
        expect(tokens.map((t) => t.name)).toEqual(['live']);
        expect(listed.stdout).not.toContain(token);

        const revoked = await runPgmcp(['token', 'revoke', tokens[0]!.prefix, '--data-dir', dir]);
        expect(revoked.code, revoked.stderr).toBe(0);
        const again = await openStateDatabase({ url: null, dataDir: dir, logger });
        try {
          expect(await lookupOn(again).tokens.verify(token)).toEqual({ reason: 'revoked' });
        } finally {
          await again.close();
        }

        // The server kept serving throughout.
        const health = await rawHttp(`${server.origin}/health`);
        expect(health.status).toBe(200);
      } finally {
        await server?.stop();
      }
    },
  );

  it(
    'never takes a password from a flag, and refuses an empty one',
    { timeout: 120_000 },
    async () => {
      const dir = dataDir();
      const flag = await runPgmcp(['user', 'add', 'bob', '--password', 'x', '--data-dir', dir]);
      expect(flag.code).not.toBe(0);
      const empty = await runWithInput(['user', 'add', 'bob', '--data-dir', dir], '\n');
      expect(empty.code).toBe(2);
      expect(empty.stderr).toMatch(/password/);
    },
  );
});

const pgInfo = await realPostgres('test/e2e/auth-cli.test.ts (state.url on PostgreSQL)');

describe.skipIf(!pgInfo)('pgmcp token with PGMCP_STATE_URL', () => {
  const info = pgInfo as RealPostgres;
  const dbName = `pgmcp_authcli_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  afterAll(async () => {
    await withClient(info.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  it('writes to the PostgreSQL state database', { timeout: 60_000 }, async () => {
    await withClient(info.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
    const url = new URL(info.adminUrl);
    url.pathname = `/${dbName}`;
    const env = serverEnv({ PGMCP_STATE_URL: url.toString() });
    const created = await runPgmcp(['token', 'create', '--name', 'shared', '--expires', 'never'], {
      env,
    });
    expect(created.code, created.stderr).toBe(0);
    const db = await openStateDatabase({ url: url.toString(), dataDir: '/nonexistent', logger });
    try {
      expect(await lookupOn(db).tokens.verify(created.stdout.trim())).toMatchObject({
        userId: 'shared',
      });
    } finally {
      await db.close();
    }
    const bad = await runPgmcp(['token', 'list'], {
      env: serverEnv({ PGMCP_STATE_URL: 'postgres://127.0.0.1:1/nothing' }),
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/state database .*cannot be reached/);
  });
});
