import { describe, expect, it } from 'vitest';
import { databaseUrlProblem } from './database-url.js';
import { connectTargets, isKeywordForm, keywordsToUrl, withPassword } from './multi-host.js';
import { configSchema } from './schema.js';
import { resolveDatabases } from './databases.js';

function targets(url: string) {
  const t = connectTargets(url);
  if (typeof t === 'string') throw new Error(t);
  return t;
}

describe('multi-host connection strings', () => {
  it('reads several host:port pairs, each as a single-host URL without pgmcp-only parameters', () => {
    const t = targets(
      'postgres://u:s3cret@h1:5432,[::1]:5433,h3/app?target_session_attrs=read-write&sslmode=require&connect_timeout=1',
    );
    expect(t.hosts).toEqual([
      { host: 'h1', port: 5432 },
      { host: '::1', port: 5433 },
      { host: 'h3', port: 5432 },
    ]);
    expect(t.targetSessionAttrs).toBe('read-write');
    expect(t.loadBalanceHosts).toBe('disable');
    expect(t.connectTimeoutMs).toBe(2000); // libpq counts under 2 s as 2
    expect(t.urlFor(t.hosts[1]!)).toBe('postgres://u:s3cret@[::1]:5433/app?sslmode=require');
  });

  it('reads ?host=a,b&port=1,2 and socket directories', () => {
    const t = targets(
      'postgres://u@/app?host=/run/a,/run/b&port=5432,5433&load_balance_hosts=random',
    );
    expect(t.hosts).toEqual([
      { host: '/run/a', port: 5432 },
      { host: '/run/b', port: 5433 },
    ]);
    expect(t.loadBalanceHosts).toBe('random');
    expect(t.urlFor(t.hosts[1]!)).toBe('postgres://u@/app?host=%2Frun%2Fb&port=5433');
  });

  it('leaves a single-host URL as written', () => {
    const url = 'postgres://u:p%40ss@db.example.com:6432/app?sslmode=verify-full';
    expect(targets(url).urlFor(targets(url).hosts[0]!)).toBe(url);
  });

  it('refuses unknown target_session_attrs and load_balance_hosts, never quoting the URL', () => {
    for (const url of [
      'postgres://u:hunter2@h1,h2/db?target_session_attrs=master',
      'postgres://u:hunter2@h1,h2/db?load_balance_hosts=yes',
      'postgres://u:hunter2@h1,h2/db?port=1,2,3',
      'postgres://u:hunter2@h1:99999,h2/db',
    ]) {
      const problem = databaseUrlProblem(url);
      expect(problem).toMatch(/^expected/);
      expect(problem).not.toContain('hunter2');
    }
    expect(databaseUrlProblem('postgres://u@h1:5432,h2:5433/db?target_session_attrs=standby')).toBe(
      null,
    );
  });

  it('turns the keyword form into the URL form', () => {
    const text =
      "host=h1,h2 port=5432,5433 dbname=app user=me password='it''s' target_session_attrs=primary";
    expect(isKeywordForm(text)).toBe(true);
    expect(isKeywordForm('postgres://h/db')).toBe(false);
    const url = keywordsToUrl(
      "host=h1,h2 port=5432,5433 dbname=app user=me password='a b' target_session_attrs=primary",
    );
    expect(url).toBe('postgres://me:a%20b@h1:5432,h2:5433/app?target_session_attrs=primary');
    expect(keywordsToUrl('host=a,b,c port=1,2')).toEqual([
      'expected one port, or as many ports as hosts (3)',
    ]);
  });

  it('puts a password into a multi-host URL', () => {
    expect(withPassword('postgres://me@h1,h2/db', 'p@ss')).toBe('postgres://me:p%40ss@h1,h2/db');
  });

  it('configuration takes the keyword form and multi-host fields, and shows every host', () => {
    const config = configSchema.parse({
      database: {
        url: 'host=h1,h2 port=5432,5433 dbname=app user=me target_session_attrs=read-write',
      },
      databases: [
        {
          name: 'ha',
          host: 'a,b',
          port: [5432, 5433],
          database: 'app',
          targetSessionAttrs: 'primary',
          loadBalanceHosts: 'random',
          connectTimeout: 3,
        },
      ],
    });
    expect(config.database.url).toBe(
      'postgres://me@h1:5432,h2:5433/app?target_session_attrs=read-write',
    );
    const [db] = resolveDatabases(config);
    expect(db!.url).toBe(
      'postgres://postgres@a:5432,b:5433/app?target_session_attrs=primary&load_balance_hosts=random&connect_timeout=3',
    );
    expect(db!.location.host).toBe('a:5432,b:5433');
    expect(() =>
      resolveDatabases(
        configSchema.parse({ databases: [{ name: 'x', host: 'a,b,c', port: [1, 2] }] }),
      ),
    ).toThrow(/databases\[0\]\.port: expected one port, or one per host \(3\)/);
  });
});
