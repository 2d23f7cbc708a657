import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import { ENV_VARIABLES } from './env.js';
import type { ConfigFlags } from './flags.js';
import { loadConfig } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'pgmcp-config-issues-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;

function failure(flags: ConfigFlags, env: NodeJS.ProcessEnv = {}): AppError {
  try {
    loadConfig({ flags, env, cwd: dir });
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).category).toBe('config');
    return error as AppError;
  }
  throw new Error('expected loadConfig to fail');
}

function fromFile(yaml: string, env: NodeJS.ProcessEnv = {}): { error: AppError; path: string } {
  const path = join(dir, `c${++counter}.yaml`);
  writeFileSync(path, yaml);
  return { error: failure({ config: path }, env), path };
}

// One junk value per environment variable; every one must be caught and attributed.
const badEnv: Record<string, string> = {
  PGMCP_TRANSPORT: 'tcp',
  PGMCP_HTTP_PATH: 'mcp',
  PGMCP_HTTP_ALLOWED_ORIGINS: 'https://app.example.com/',
  PGMCP_HTTP_ALLOWED_HOSTS: 'https://h',
  PGMCP_LOG_LEVEL: 'loud',
  PGMCP_DENIED_FUNCTIONS: 'pg read file',
  PGMCP_ALLOW_SCHEMAS: 'a b',
  PGMCP_DENY_SCHEMAS: 'a;b',
  PGMCP_ALLOW_TABLES: 'a.b.c.d',
  PGMCP_DENY_TABLES: 'x y',
  PGMCP_DENY_COLUMNS: 'a..b',
  PGMCP_MASK_COLUMNS: 'users.email,bad one',
  PGMCP_ALLOW_FUNCTIONS: 'audit.fn,bad fn()',
  PGMCP_ROLES: 'analyst,bad role!',
  PGMCP_TRUSTED_PROXIES: 'proxy.example.com',
  PGMCP_PROXY_USER_HEADER: 'X User',
  PGMCP_ROUTINE_SCHEMAS: 'a b',
};

describe('every environment variable reports its key and its name', () => {
  const testable = ENV_VARIABLES.filter((v) => v.kind !== 'string' || badEnv[v.env] !== undefined);
  it.each(testable.map((v) => [v.env, v] as const))('%s', (name, variable) => {
    const value = badEnv[name] ?? (variable.kind === 'int' ? 'abc' : 'maybe');
    const error = failure({}, { [name]: value });
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.message.startsWith(`${variable.key}`)).toBe(true);
    expect(error.message.endsWith(`(from ${name})`)).toBe(true);
    expect(error.details).toMatchObject({
      key: expect.stringContaining(variable.key),
      source: name,
    });
  });

  it('uses the wording from the brief for a bad port', () => {
    expect(failure({}, { PGMCP_HTTP_PORT: 'abc' }).message).toBe(
      'http.port: expected an integer between 0 and 65535, got "abc" (from PGMCP_HTTP_PORT)',
    );
  });

  it('lists what env accepts for booleans', () => {
    expect(failure({}, { PGMCP_ALLOW_WRITES: 'on' }).message).toBe(
      'database.allowWrites: expected one of true, false, 1, 0, yes, no, got "on" (from PGMCP_ALLOW_WRITES)',
    );
  });

  it('points at the list item that is wrong', () => {
    const error = failure(
      {},
      { PGMCP_HTTP_ALLOWED_ORIGINS: 'https://a.example,https://b.example/' },
    );
    expect(error.message).toMatch(
      /^http\.allowedOrigins\[1\]: expected an origin .* got "https:\/\/b\.example\/" \(from PGMCP_HTTP_ALLOWED_ORIGINS\)$/,
    );
  });
});

describe('file values', () => {
  it.each([
    ['http:\n  port: 70000\n', 'http.port: expected an integer between 0 and 65535, got 70000'],
    ['http:\n  port: 80.5\n', 'http.port: expected an integer between 0 and 65535, got 80.5'],
    ['http:\n  bodyLimitBytes: 0\n', 'http.bodyLimitBytes: expected a positive integer, got 0'],
    ['http:\n  keepAliveMs: -1\n', 'http.keepAliveMs: expected an integer of at least 0, got -1'],
    ['http:\n  allowedHosts: h\n', 'http.allowedHosts: expected a list of strings, got "h"'],
    ['http:\n  host: ""\n', 'http.host: expected a non-empty string, got ""'],
    ['server:\n  name: 5\n', 'server.name: expected a string or null, got 5'],
    [
      'database:\n  showQueryText: "yes"\n',
      'database.showQueryText: expected true or false, got "yes"',
    ],
    ['embedded:\n  demo: 1\n', 'embedded.demo: expected true or false, got 1'],
    [
      'log:\n  level: verbose\n',
      'log.level: expected one of trace, debug, info, warn, error, fatal, silent, got "verbose"',
    ],
    ['transport: sse\n', 'transport: expected one of stdio, http, got "sse"'],
  ])('%j', (yaml, expected) => {
    const { error, path } = fromFile(yaml);
    expect(error.message).toBe(`${expected} (from ${path})`);
  });

  it('counts the other problems', () => {
    const { error } = fromFile('http:\n  port: x\n  path: y\nlog:\n  level: z\n');
    expect(error.message).toMatch(/^http\.port: .* \(and 2 more problems\)$/);
    expect(fromFile('http:\n  port: x\n  path: y\n').error.message).toMatch(
      /\(and 1 more problem\)$/,
    );
  });

  it('attributes an env override inside a file section to the variable', () => {
    const { error } = fromFile('http:\n  port: 1\n', { PGMCP_HTTP_PORT: '-5' });
    expect(error.message).toBe(
      'http.port: expected an integer between 0 and 65535, got -5 (from PGMCP_HTTP_PORT)',
    );
  });
});

describe('cross-field rules', () => {
  it('defaultRows may not exceed maxRows, whichever source set them', () => {
    const { error, path } = fromFile('database:\n  maxRows: 50\n', { PGMCP_DEFAULT_ROWS: '100' });
    expect(error.message).toBe(
      `database.defaultRows: must not exceed database.maxRows (50, from ${path}), got 100 (from PGMCP_DEFAULT_ROWS)`,
    );
    expect(error.details).toEqual({ key: 'database.defaultRows', source: 'PGMCP_DEFAULT_ROWS' });
    expect(path).toBeTruthy();
  });
});

describe('flags', () => {
  it('names the flag', () => {
    expect(failure({ logLevel: 'chatty' }).message).toMatch(
      /^log\.level: .*got "chatty" \(from --log-level\)$/,
    );
    expect(failure({ http: 'x:y' }).message).toMatch(
      /^http: expected \[HOST:\]PORT.*\(from --http\)$/,
    );
    expect(failure({ http: '99999' }).message).toMatch(/^http\.port: .*\(from --http\)$/);
    expect(failure({ dataDir: '' }).message).toBe(
      'embedded.dataDir: expected a non-empty string, got "" (from --data-dir)',
    );
  });
});

describe('secrets never appear in messages', () => {
  const secret = 'hunter2-s3cret';

  it('database.url with a wrong scheme, from each source', () => {
    const url = `mysql://root:${secret}@h/db`;
    const cases = [
      failure({ database: url }),
      failure({}, { DATABASE_URL: url }),
      failure({}, { PGMCP_DATABASE_URL: url }),
      fromFile(`database:\n  url: "${url}"\n`).error,
    ];
    for (const error of cases) {
      expect(error.message).toMatch(
        /^database\.url: expected a URL starting with postgres:\/\/ or postgresql:\/\/ \(from /,
      );
      expect(error.message).not.toContain(secret);
      expect(JSON.stringify(error.details)).not.toContain(secret);
    }
  });

  it('stateSecret of the wrong type or empty', () => {
    const wrongType = fromFile(`server:\n  stateSecret: [${secret}]\n`).error;
    expect(wrongType.message).toMatch(/^server\.stateSecret: expected a string or null \(from /);
    expect(wrongType.message).not.toContain(secret);
    expect(fromFile('server:\n  stateSecret: ""\n').error.message).not.toContain('got');
  });

  it('a section holding a secret is not echoed when it is not a mapping', () => {
    const error = fromFile(`server: ${secret}\n`).error;
    expect(error.message).toMatch(/^server: expected a mapping of keys to values \(from /);
    expect(error.message).not.toContain(secret);
  });

  it('a connection string pasted into another key is shown redacted', () => {
    const error = failure({}, { PGMCP_HTTP_PATH: `postgres://u:${secret}@h/db` });
    expect(error.message).toContain('postgres://u:****@h/db');
    expect(error.message).not.toContain(secret);
  });

  it('a password in PG* variables does not leak through a bad PGPORT', () => {
    const error = failure({}, { PGHOST: 'h', PGPORT: 'fifty', PGPASSWORD: secret });
    expect(error.message).toContain('PGPORT');
    expect(error.message).not.toContain(secret);
  });
});

describe('auth.trustedProxies', () => {
  it.each(['10.0.0.0/33', '1.2.3', '300.1.1.1', '::1/129', '10.0.0.1/8/1', 'proxy.example.com'])(
    'refuses %s as a config error',
    (value) => {
      const error = failure({}, { PGMCP_TRUSTED_PROXIES: value });
      expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
      expect(error.message).toMatch(/^auth\.trustedProxies/);
    },
  );
});

describe('secrets in databases: entries', () => {
  it('never echoes a databases[].url in a message', () => {
    const { error } = fromFile('databases:\n  - name: a\n    url: mysql://u:s3cr3t@h/db\n');
    expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
    expect(error.message).not.toContain('s3cr3t');
  });
});

describe('database URLs the driver cannot use are refused when the configuration is read', () => {
  const secret = 'hunter2-s3cret';
  const unparseable = [
    `postgres://u:${secret}@h:port/db`,
    `postgres://u:${secret}@[bad`,
    `postgres://u:${secret}@h:99999/db`,
    `postgres://u:${secret}@h/db?port=abc`,
  ];

  it.each(unparseable)('%s, from each source, names the key and the source', (url) => {
    const cases: Array<[AppError, string, string]> = [
      [failure({ database: url }), 'database.url', '--database'],
      [failure({}, { DATABASE_URL: url }), 'database.url', 'DATABASE_URL'],
      [failure({}, { PGMCP_DATABASE_URL: url }), 'database.url', 'PGMCP_DATABASE_URL'],
      [failure({}, { PGMCP_STATE_URL: url }), 'state.url', 'PGMCP_STATE_URL'],
    ];
    const single = fromFile(`database:\n  url: "${url}"\n`);
    cases.push([single.error, 'database.url', single.path]);
    const several = fromFile(`databases:\n  - name: a\n    url: "${url}"\n`);
    cases.push([several.error, 'databases[0].url', several.path]);
    const state = fromFile(`state:\n  url: "${url}"\n`);
    cases.push([state.error, 'state.url', state.path]);
    for (const [error, key, source] of cases) {
      expect(error.code).toBe(ErrorCodes.CONFIG_INVALID);
      expect(error.message).toMatch(new RegExp(`^${key.replace(/[.[\]]/g, '\\$&')}: expected `));
      expect(error.message.endsWith(`(from ${source})`)).toBe(true);
      expect(error.message).not.toContain('\n');
      expect(error.message).not.toContain(secret);
      expect(JSON.stringify(error.details)).not.toContain(secret);
    }
  });

  it('an unknown sslmode is named, the URL is not', () => {
    const error = failure({ database: `postgres://u:${secret}@h/db?sslmode=bogus` });
    expect(error.message).toBe(
      'database.url: expected sslmode to be one of disable, allow, prefer, require, verify-ca, verify-full, got "bogus" (from --database)',
    );
    const libpq = failure({}, { PGHOST: 'h', PGPASSWORD: secret, PGSSLMODE: 'Require' });
    expect(libpq.message).toMatch(/^database\.url: expected sslmode to be one of .*got "Require"/);
    expect(libpq.message).not.toContain(secret);
  });

  it('a value that does not look like a setting is not repeated (it may be part of a password)', () => {
    const error = failure({ database: 'postgres://u:12?sslmode=hunter2@h/db' });
    expect(error.message).toBe(
      'database.url: expected sslmode to be one of disable, allow, prefer, require, verify-ca, verify-full, got a value it does not take (from --database)',
    );
    expect(error.message).not.toContain('hunter2');
  });

  it('sslmode=verify-ca without sslrootcert, and uselibpqcompat other than true', () => {
    expect(failure({ database: 'postgres://h/db?sslmode=verify-ca' }).message).toMatch(
      /^database\.url: sslmode=verify-ca needs sslrootcert=/,
    );
    expect(
      failure({ database: 'postgres://h/db?sslmode=require&uselibpqcompat=false' }).message,
    ).toMatch(/^database\.url: uselibpqcompat: pgmcp always reads sslmode as libpq does/);
  });

  it('accepts what the driver accepts: libpq modes, sockets, no host, encoded passwords', () => {
    for (const url of [
      'postgres://u:p%40ss@db.example.com:5433/shop?sslmode=verify-full',
      'postgresql://h/db?sslmode=disable&application_name=pgmcp',
      'postgres://h/db?sslmode=verify-ca&sslrootcert=/etc/ssl/ca.pem',
      'postgres://h/db?sslmode=require&uselibpqcompat=true',
      'postgres://u@/db?host=/var/run/postgresql',
      'postgres:///db?host=%2Ftmp&port=5432',
      'postgres://[::1]:5432/db',
    ]) {
      expect(loadConfig({ flags: { database: url }, env: {}, cwd: dir }).database.url).toBe(url);
    }
  });
});
