import { parse as parseConnectionString } from 'pg-connection-string';
import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import { ENV_VARIABLES, buildLibpqUrl, readEnv } from './env.js';
import { configSchema } from './schema.js';

describe('buildLibpqUrl', () => {
  it('builds a URL from host, port, user, password, database and sslmode', () => {
    const url = buildLibpqUrl({
      PGHOST: 'db.example.com',
      PGPORT: '5433',
      PGUSER: 'alice',
      PGPASSWORD: 'pw',
      PGDATABASE: 'shop',
      PGSSLMODE: 'require',
    });
    expect(url).toBe('postgres://alice:pw@db.example.com:5433/shop?sslmode=require');
  });

  it('encodes special characters so the driver decodes the same password back', () => {
    const password = 'p@ss:w/rd?#%& é';
    const url = buildLibpqUrl({
      PGHOST: 'h',
      PGUSER: 'bob smith',
      PGPASSWORD: password,
      PGDATABASE: 'db',
    });
    const parsed = parseConnectionString(url);
    expect(parsed.password).toBe(password);
    expect(parsed.user).toBe('bob smith');
    expect(parsed.host).toBe('h');
    expect(parsed.database).toBe('db');
  });

  it('puts a unix socket directory and its port into the query string', () => {
    const url = buildLibpqUrl({ PGHOST: '/var/run/postgresql', PGPORT: '5432', PGDATABASE: 'app' });
    expect(url).toBe('postgres:///app?host=%2Fvar%2Frun%2Fpostgresql&port=5432');
    const parsed = parseConnectionString(url);
    expect(parsed.host).toBe('/var/run/postgresql');
    expect(parsed.port).toBe('5432');
    expect(parsed.database).toBe('app');
  });

  it('brackets an IPv6 host', () => {
    expect(buildLibpqUrl({ PGHOST: '::1', PGPORT: '5432' })).toBe('postgres://[::1]:5432/');
    expect(buildLibpqUrl({ PGHOST: '[::1]' })).toBe('postgres://[::1]/');
  });

  it('keeps a password without a user', () => {
    expect(buildLibpqUrl({ PGDATABASE: 'db', PGPASSWORD: 's' })).toBe('postgres://:s@/db');
  });

  it('rejects a non-numeric PGPORT without echoing the password', () => {
    const run = () => buildLibpqUrl({ PGHOST: 'h', PGPORT: 'x', PGPASSWORD: 'hunter2' });
    expect(run).toThrow(AppError);
    expect(run).toThrow(/PGPORT/);
    try {
      run();
    } catch (error) {
      expect((error as AppError).code).toBe(ErrorCodes.CONFIG_INVALID);
      expect((error as AppError).message).not.toContain('hunter2');
    }
  });
});

describe('readEnv', () => {
  const urlOf = (env: NodeJS.ProcessEnv) =>
    readEnv(env).find((value) => value.key === 'database.url');

  it('prefers PGMCP_DATABASE_URL over DATABASE_URL over the PG* variables', () => {
    const all = {
      PGMCP_DATABASE_URL: 'postgres://a/1',
      DATABASE_URL: 'postgres://b/2',
      PGHOST: 'c',
    };
    expect(urlOf(all)).toMatchObject({ value: 'postgres://a/1', source: 'PGMCP_DATABASE_URL' });
    expect(urlOf({ ...all, PGMCP_DATABASE_URL: undefined })).toMatchObject({
      value: 'postgres://b/2',
      source: 'DATABASE_URL',
    });
    expect(urlOf({ PGHOST: 'c' })?.value).toBe('postgres://c/');
    expect(urlOf({ PGDATABASE: 'd' })?.value).toBe('postgres:///d');
  });

  it('ignores PGUSER alone and empty variables', () => {
    expect(urlOf({ PGUSER: 'u', PGPASSWORD: 'p' })).toBeUndefined();
    expect(readEnv({ PGMCP_HTTP_PORT: '', DATABASE_URL: '' })).toEqual([]);
  });

  it('parses ints, booleans and lists, and passes unrecognized text through for the schema', () => {
    const values = readEnv({
      PGMCP_HTTP_PORT: ' 9000 ',
      PGMCP_ALLOW_WRITES: 'YES',
      PGMCP_DEMO: '0',
      PGMCP_HTTP_ALLOWED_ORIGINS: 'https://a.example, ,https://b.example',
      PGMCP_MAX_ROWS: '12abc',
      PGMCP_SHOW_QUERY_TEXT: 'maybe',
    });
    const byKey = Object.fromEntries(values.map((value) => [value.key, value.value]));
    expect(byKey).toEqual({
      'http.port': 9000,
      'database.allowWrites': true,
      'embedded.demo': false,
      'http.allowedOrigins': ['https://a.example', 'https://b.example'],
      'database.maxRows': '12abc',
      'database.showQueryText': 'maybe',
    });
  });

  it('has one row per scalar setting, each naming a real key, with unique names', () => {
    const names = ENV_VARIABLES.map((variable) => variable.env);
    expect(new Set(names).size).toBe(names.length);
    const defaults = configSchema.parse({}) as unknown as Record<string, Record<string, unknown>>;
    for (const { key } of ENV_VARIABLES) {
      const [section, name] = key.split('.') as [string, string | undefined];
      if (name === undefined) expect(defaults).toHaveProperty(section);
      else expect(defaults[section]).toHaveProperty(name);
    }
    // Every setting except database.url (which has its own variables) and llm.providers (a
    // mapping of providers, from the file and the providers' own variables) is reachable from env.
    const settings = Object.entries(defaults).flatMap(([section, value]) =>
      typeof value === 'object' && value !== null
        ? Object.keys(value).map((k) => `${section}.${k}`)
        : [section],
    );
    // Nested sections (database.access) count as covered when their keys are.
    const covered = new Set(
      ENV_VARIABLES.map((variable) => variable.key.split('.').slice(0, 2).join('.')),
    );
    expect(settings.filter((key) => !covered.has(key))).toEqual(['database.url', 'llm.providers']);
  });
});
