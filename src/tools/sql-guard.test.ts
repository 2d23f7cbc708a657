import { beforeAll, describe, expect, it } from 'vitest';
import { sqlParses } from './common/parse-tree.js';
import { checkStatement, DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from './sql-guard.js';

const readOnly = { allowWrites: false, deniedFunctions: DEFAULT_DENIED_FUNCTIONS };
const writable = { allowWrites: true, deniedFunctions: DEFAULT_DENIED_FUNCTIONS };

beforeAll(async () => {
  await loadSqlParser();
});

describe('sql guard', () => {
  it.each([
    'select 1',
    'with t as (select 1 as x) select x from t',
    'select id, rank() over (partition by a order by b) from t',
    'select percentile_cont(0.5) within group (order by x) from t',
    'select * from a, lateral (select * from b where b.a = a.id) c',
    "select data->>'k', data #> '{a,b}' from docs",
    'explain select * from t',
    'show work_mem',
    'select $1::int + 1',
    "select 'a;b' as semi, $$x; commit; y$$ as dollar -- ; drop table t",
  ])('lets %s through as a read', (sql) => {
    expect(checkStatement(sql, readOnly).kind).toBe('read');
  });

  it.each([
    ['select 1; select 2', /2 statements/],
    ['', /empty/],
    ['commit', /transaction control/],
    ['begin read write', /transaction control/],
    ['set transaction read write', /transaction control|SET/],
    ['set statement_timeout = 0', /SET and RESET/],
    ['reset all', /SET and RESET/],
    ["select set_config('statement_timeout', '0', false)", /set_config/],
    ["select pg_catalog.set_config('role', 'postgres', false)", /set_config/],
    ["select pg_read_file('/etc/passwd')", /pg_read_file/],
    ['select lo_import($1)', /lo_import/],
    ["select dblink_exec('x', 'y')", /dblink_exec/],
    ["select query_to_xml('delete from t', true, true, '')", /query_to_xml/],
    ["copy t to program 'rm -rf /'", /COPY/],
    ['do $$ begin perform 1; end $$', /DO/],
    ['lock table t', /LOCK/],
    ['vacuum t', /VACUUM/],
    ['listen ch', /LISTEN/],
    ["notify ch, 'x'", /NOTIFY/],
    ['prepare p as select 1', /prepared/],
    ['insert into t values (1)', /cannot execute INSERT in a read-only transaction/],
    ['with d as (delete from t returning *) select * from d', /data-modifying WITH/],
    ['select * into newt from t', /SELECT INTO/],
    ['select * from t for update', /FOR UPDATE/],
    ['explain analyze delete from t', /DELETE in a read-only/],
    ['create table x (a int)', /read-only/],
    ['drop table t', /read-only/],
    ['call p()', /read-only/],
    ['alter system set fsync = off', /ALTER SYSTEM/],
  ])('refuses %s', (sql, reason) => {
    expect(() => checkStatement(sql, readOnly)).toThrow(reason);
  });

  it('allows writes only where configured, never transaction control', () => {
    expect(checkStatement('update t set a = 1', writable).kind).toBe('write');
    expect(() => checkStatement('rollback', writable)).toThrow(/transaction control/);
    expect(() => checkStatement("select set_config('a','b',true)", writable)).toThrow(/set_config/);
  });

  it('reports syntax errors with SQLSTATE 42601 and a position', () => {
    try {
      checkStatement('select * form t', readOnly);
      expect.unreachable();
    } catch (error) {
      expect((error as { details: Record<string, unknown> }).details).toMatchObject({
        sqlstate: '42601',
      });
    }
  });

  it.each([
    ['select 1', 0],
    ['select $1::int + $3::int', 3],
    ['explain select * from t where id = $2', 2],
    ['with w as (select $1::int as x) select x from w', 1],
    ['insert into t values ($1, $2)', 2],
    ['call p($1)', 1],
    ['create table t2 as select $1::int as x', 1],
    // PostgreSQL wants no values for these: a function body's $1 is the function's argument.
    ['create function pg_temp.f(int) returns int language sql return $1 + 1', null],
    ['create function pg_temp.g(int) returns int language sql begin atomic select $1; end', null],
    ['create view v as select $1::int as x', null],
    ["select 'costs $1' as text", 0],
  ])('%s wants %s params', (sql, params) => {
    expect(checkStatement(sql, writable).params).toBe(params);
  });

  it('collects relations, functions and CTE names', () => {
    const result = checkStatement(
      'with c as (select 1) select lower(x), v.* from s.t join u v on true, c',
      readOnly,
    );
    expect(result.relations).toEqual(
      expect.arrayContaining([
        { schema: 's', name: 't', alias: null },
        { schema: null, name: 'u', alias: 'v' },
        { schema: null, name: 'c', alias: null },
      ]),
    );
    expect(result.columns).toEqual([['x'], ['v', '*']]);
    expect(result.functions).toContain('lower');
    expect(result.ctes).toEqual(['c']);
  });

  it('keeps the verdicts used most recently when it drops one (counted parses)', () => {
    // Its own options: verdicts are kept per text and options, so no other test's count in.
    const options = { allowWrites: false, deniedFunctions: ['lru_test_*'] };
    const parsed = (sql: string): number => {
      const before = sqlParses();
      checkStatement(sql, options);
      return sqlParses() - before;
    };
    const text = (i: number) => `select ${i} as lru_probe`;
    // As many as are kept: each parsed once, then answered from the cache.
    for (let i = 0; i < 512; i++) expect(parsed(text(i))).toBe(1);
    expect(parsed(text(0))).toBe(0);
    // One more: the least recently used (1, since 0 was just used) is dropped, not 0.
    expect(parsed(text(512))).toBe(1);
    expect(parsed(text(0))).toBe(0);
    expect(parsed(text(2))).toBe(0);
    expect(parsed(text(1))).toBe(1);
  });
});
