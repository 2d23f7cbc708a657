// The command line as a user meets it: configuration mistakes, --print-config, --version,
// --help and `pgmcp doctor`.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import {
  REPO_ROOT,
  realPostgres,
  reportSkipped,
  uniqueSchemaName,
  withClient,
} from '../helpers/postgres.js';
import { runPgmcp, serverEnv } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/cli.test.ts (pgmcp doctor against PostgreSQL)');
const adminIsSuperuser =
  pg !== null &&
  (await withClient(
    pg.adminUrl,
    async (c) =>
      (await c.query('select rolsuper from pg_roles where rolname = current_user')).rows[0]
        .rolsuper as boolean,
  ));
if (pg && !adminIsSuperuser)
  reportSkipped(
    'test/e2e/cli.test.ts "warns when the role is a superuser"',
    'the admin URL does not name a superuser',
  );
const VERSION = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

describe('configuration errors exit 2 with a message naming the key', () => {
  it.each([
    [['serve', '--http', 'abc'], {}, /^pgmcp: http: .*"abc".*--http/m],
    [['serve', '--http', '127.0.0.1:99999'], {}, /^pgmcp: http\.port: .*"99999"/m],
    [['serve', '--stdio', '--http', '8080'], {}, /^pgmcp: transport: /m],
    [
      ['serve', '--database', 'mysql://x@h/db'],
      {},
      /^pgmcp: database\.url: expected a URL starting with postgres:\/\//m,
    ],
    [['serve'], { PGMCP_MAX_ROWS: 'abc' }, /^pgmcp: database\.maxRows: .*PGMCP_MAX_ROWS/m],
  ])('pgmcp %j %j', async (args, env, message) => {
    const run = await runPgmcp(args, { env: serverEnv(env) });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });

  it('says at once, before any database starts, that the port is in use', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const dataDir = join(mkdtempSync(join(tmpdir(), 'pgmcp-port-')), 'data');
    try {
      const run = await runPgmcp(['serve', '--http', `127.0.0.1:${port}`, '--data-dir', dataDir]);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr.trim()).toBe(
        `pgmcp: http: 127.0.0.1:${port} is already in use by another process; stop it, or choose another port (--http HOST:PORT, http.port)`,
      );
      // The embedded database never started: its data directory was not even created.
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
      rmSync(dirname(dataDir), { recursive: true, force: true });
    }
  });

  it('never echoes a password from a bad database URL', async () => {
    const run = await runPgmcp(['serve', '--database', 'mysql://u:hunter2@h/db']);
    expect(run.code).toBe(2);
    expect(`${run.stdout}${run.stderr}`).not.toContain('hunter2');
  });
});

describe('pgmcp serve --print-config', () => {
  it('prints the effective configuration as YAML with the password masked', async () => {
    const run = await runPgmcp([
      'serve',
      '--print-config',
      '--database',
      'postgres://u:secret@h/db',
      '--http',
      '0.0.0.0:9090',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('secret');
    const config = parseYaml(run.stdout) as Record<string, any>;
    expect(config['database']).toMatchObject({ url: 'postgres://u:****@h/db', allowWrites: false });
    expect(config['http']).toMatchObject({ host: '0.0.0.0', port: 9090, path: '/mcp' });
    expect(config['transport']).toBe('http');
  });

  it('masks the password given through the environment too', async () => {
    const run = await runPgmcp(['serve', '--print-config'], {
      env: serverEnv({ PGMCP_DATABASE_URL: 'postgresql://me:s3cr3t@db.internal:6432/app' }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('s3cr3t');
    expect((parseYaml(run.stdout) as Record<string, any>)['database'].url).toBe(
      'postgresql://me:****@db.internal:6432/app',
    );
  });
});

describe('pgmcp serve --print-config: a maxRows below 100 alone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-max-rows-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('from a file: defaultRows follows it down', async () => {
    const path = join(dir, 'pgmcp.yaml');
    writeFileSync(path, 'database:\n  maxRows: 50\n');
    const run = await runPgmcp(['serve', '--print-config', '--config', path]);
    expect(run.code, run.stderr).toBe(0);
    const config = parseYaml(run.stdout) as Record<string, any>;
    expect(config['database']).toMatchObject({ maxRows: 50, defaultRows: 50 });
  });

  it('from PGMCP_MAX_ROWS: defaultRows follows it down', async () => {
    const run = await runPgmcp(['serve', '--print-config'], {
      env: serverEnv({ PGMCP_MAX_ROWS: '20' }),
    });
    expect(run.code, run.stderr).toBe(0);
    const config = parseYaml(run.stdout) as Record<string, any>;
    expect(config['database']).toMatchObject({ maxRows: 20, defaultRows: 20 });
  });

  it('both set, defaultRows above maxRows: refused, naming both values as set', async () => {
    const run = await runPgmcp(['serve', '--print-config'], {
      env: serverEnv({ PGMCP_MAX_ROWS: '20', PGMCP_DEFAULT_ROWS: '30' }),
    });
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(
      'pgmcp: database.defaultRows: must not exceed database.maxRows (20, from PGMCP_MAX_ROWS), got 30 (from PGMCP_DEFAULT_ROWS)',
    );
  });
});

describe('pgmcp --version and --help', () => {
  it('--version prints the package version', async () => {
    for (const flag of ['--version', '-v']) {
      const run = await runPgmcp([flag]);
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe(VERSION);
    }
  });

  it('--help lists the commands; serve --help lists its options', async () => {
    const run = await runPgmcp(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Usage: pgmcp/);
    expect(run.stdout).toMatch(/^\s+serve\b/m);
    expect(run.stdout).toMatch(/^\s+doctor\b/m);
    const serve = await runPgmcp(['serve', '--help']);
    expect(serve.code).toBe(0);
    for (const option of [
      '--stdio',
      '--http',
      '--database',
      '--data-dir',
      '--allow-writes',
      '--print-config',
    ]) {
      expect(serve.stdout).toContain(option);
    }
  });

  it('usage errors exit 2 with one line saying what is wrong', async () => {
    for (const [args, said] of [
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['serve', '--bogus'], /unknown option '--bogus'/],
      [['serve', '--log-level', 'loud'], /argument 'loud' is invalid/],
      [['token', 'create'], /required option '--name <name>' not specified/],
      [['token', 'create', '--name', 'x', '--expires', '3w'], /^pgmcp: expected a lifetime/],
      ...['0', '-5', '1.5', '12abc', '10001'].map(
        (n) =>
          [
            ['embed', '--table', 't', '--text-column', 'c', '--batch-size', n],
            /argument '.*' is invalid\. expected a whole number from 1 to 10000/,
          ] as const,
      ),
      [
        ['embed', '--table', 't', '--text-column', 'c', '--create-index', 'btree'],
        /argument 'btree' is invalid/,
      ],
    ] as const) {
      const run = await runPgmcp([...args]);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n')[0]).toMatch(said);
      expect(run.stdout).toBe('');
    }
  });
});

describe.skipIf(!pg)('pgmcp doctor', () => {
  it('prints the server version, the role, its writability and the extensions', async () => {
    const run = await runPgmcp(['doctor', '--database', pg!.url]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const version = await withClient(
      pg!.url,
      async (c) => (await c.query('select version() as v')).rows[0].v as string,
    );
    expect(run.stdout).toContain(`server: ${version}`);
    expect(run.stdout).toContain(`connected as role "${pg!.role}"`);
    expect(run.stdout).toMatch(/^extensions: .*plpgsql/m);
    expect(run.stdout).toContain('mode: read-only transactions');
    expect(run.stdout).toContain('role privileges: cannot write anywhere (good)');
    expect(run.stdout).not.toContain(new URL(pg!.url).password || '\u0000never');
  });

  it('warns when the role could write', async () => {
    // A role made for this test, so the condition holds whatever role the admin URL names.
    const writer = uniqueSchemaName('pgmcp_writer');
    const password = 'doctor-test-only';
    await withClient(pg!.adminUrl, async (c) => {
      await c.query(`CREATE ROLE ${writer} LOGIN NOSUPERUSER NOBYPASSRLS PASSWORD '${password}'`);
      await c.query(`CREATE SCHEMA ${writer}`);
      await c.query(`CREATE TABLE ${writer}.notes (id int)`);
      await c.query(`GRANT USAGE ON SCHEMA ${writer} TO ${writer}`);
      await c.query(`GRANT INSERT ON ${writer}.notes TO ${writer}`);
    });
    try {
      const url = new URL(pg!.adminUrl);
      url.username = writer;
      url.password = password;
      const run = await runPgmcp(['doctor', '--database', url.toString()]);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toContain(`connected as role "${writer}"`);
      expect(run.stdout).toMatch(
        new RegExp(
          `^WARNING: role "${writer}" .*can INSERT/UPDATE/DELETE/TRUNCATE some tables`,
          'm',
        ),
      );
      expect(run.stdout).not.toContain('is a superuser');
      expect(run.stdout).toContain('What to fix:');
      expect(run.stdout).not.toContain(password);
    } finally {
      await withClient(pg!.adminUrl, async (c) => {
        await c.query(`DROP SCHEMA IF EXISTS ${writer} CASCADE`);
        await c.query(`DROP OWNED BY ${writer}`);
        await c.query(`DROP ROLE IF EXISTS ${writer}`);
      });
    }
  });

  // Making a superuser takes one; on a server whose admin URL is not one, say so loudly.
  it.skipIf(!adminIsSuperuser)('warns when the role is a superuser', async () => {
    const role = await withClient(
      pg!.adminUrl,
      async (c) => (await c.query('select current_user as u')).rows[0].u as string,
    );
    const run = await runPgmcp(['doctor', '--database', pg!.adminUrl]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`connected as role "${role}"`);
    expect(run.stdout).toContain(`WARNING: role "${role}" is a superuser`);
    expect(run.stdout).toContain('What to fix:');
  });

  it('fails with exit 1 and no password when the database cannot be reached', async () => {
    const run = await runPgmcp(['doctor', '--database', 'postgres://u:hunter2@127.0.0.1:1/db']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('ERROR: could not use the database');
    expect(`${run.stdout}${run.stderr}`).not.toContain('hunter2');
  });
});
