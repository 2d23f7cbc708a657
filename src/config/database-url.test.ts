import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import { databaseUrlProblem, parseDatabaseUrl } from './database-url.js';
import { locationOf, resolveDatabases } from './databases.js';
import { configSchema } from './schema.js';

describe('databaseUrlProblem', () => {
  it.each([
    ['postgres://h:port/db', /^expected a valid postgres:\/\/ URL/],
    ['postgres://x@[bad', /^expected a valid postgres:\/\/ URL/],
    ['postgres://h:65536/db', /^expected a valid postgres:\/\/ URL/],
    ['postgres://h/db?port=5432x', /^expected the port parameter to be a port number/],
    ['postgres://h/db?sslmode=bogus', /^expected sslmode to be one of .*, got "bogus"$/],
    ['postgres://h/db?sslmode=no-verify', /^expected sslmode to be one of/],
    ['postgres://h/db?sslmode=verify-ca', /^sslmode=verify-ca needs sslrootcert=/],
    ['postgres://h/db?uselibpqcompat=false', /^uselibpqcompat: /],
    ['postgres://h/db?sslnegotiation=fast', /^expected sslnegotiation to be one of/],
    ['postgres://h/db?sslmode=disable&sslnegotiation=direct', /^sslnegotiation=direct needs SSL/],
  ])('%s: %s', (url, problem) => {
    expect(databaseUrlProblem(url)).toMatch(problem);
  });

  it('never quotes the URL, and cuts a long parameter value', () => {
    const problem = databaseUrlProblem(`postgres://u:s3cret@h/db?sslmode=${'x'.repeat(200)}`);
    expect(problem).not.toContain('s3cret');
    expect(problem!.length).toBeLessThan(140);
  });

  it.each([
    'postgres://h/db',
    'postgres://u:p%40ss@h:5433/db?sslmode=require',
    'postgres://u:a b@h/db', // the driver encodes the space
    'postgres://u@/db?host=/var/run/postgresql',
    'postgres://:pw@/db',
    'postgres://h/db?sslmode=verify-ca&sslrootcert=ca.pem',
    'postgres://h/db?sslmode=require&sslnegotiation=direct',
  ])('%s is usable', (url) => {
    expect(databaseUrlProblem(url)).toBeNull();
  });
});

describe('where a URL points', () => {
  it('reads a URL without a host (a socket directory) as the driver does', () => {
    expect(parseDatabaseUrl('postgres://u@/db?host=/tmp')?.hostless).toBe(true);
    expect(locationOf('postgres://alice@/shop?host=/var/run/postgresql')).toEqual({
      host: '/var/run/postgresql',
      port: 5432,
      database: 'shop',
      user: 'alice',
      sslmode: 'disable',
    });
  });

  it('builds a socket URL from databases[] fields that the driver can read', () => {
    const config = configSchema.parse({
      databases: [
        { name: 'a', host: '/var/run/postgresql', port: 5433, user: 'alice', database: 'shop' },
      ],
    });
    const [db] = resolveDatabases(config, { env: {} });
    expect(parseDatabaseUrl(db!.url!)).not.toBeNull();
    expect(locationOf(db!.url!)).toEqual({
      host: '/var/run/postgresql',
      port: 5433,
      database: 'shop',
      user: 'alice',
      sslmode: 'disable',
    });
  });

  it('puts a databases[] password into a URL without a host', () => {
    const config = configSchema.parse({
      databases: [
        { name: 'a', url: 'postgres://alice@/shop?host=/tmp', passwordEnv: 'A_PASSWORD' },
      ],
    });
    const [db] = resolveDatabases(config, { env: { A_PASSWORD: 'p@ss' } });
    expect(db!.url).toBe('postgres://alice:p%40ss@/shop?host=/tmp');
  });

  it('refuses a databases[] entry whose fields make no usable URL, naming the entry', () => {
    const config = configSchema.parse({ databases: [{ name: 'a', host: 'a[b' }] });
    let caught: unknown;
    try {
      resolveDatabases(config, { env: {} });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect(caught).toMatchObject({ code: ErrorCodes.CONFIG_INVALID, category: 'config' });
    expect((caught as AppError).message).toMatch(/^databases\[0\]: host, port, database and user/);
  });
});
