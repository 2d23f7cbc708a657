import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DENIED_FUNCTIONS, loadSqlParser } from '../sql-guard.js';
import { buildCountSql } from './where-clause.js';

const target = {
  schema: 'shop',
  table: 'orders',
  columns: new Set(['id', 'status', 'total', 'created_at', 'note', 'Mixed Case', 'tags', 'meta']),
};

const build = (where: string | undefined) => buildCountSql(target, where, DEFAULT_DENIED_FUNCTIONS);

beforeAll(async () => {
  await loadSqlParser();
});

describe('count_rows where validation', () => {
  it('counts the whole table without a filter, identifiers quoted', () => {
    expect(build(undefined)).toBe('SELECT count(*) FROM "shop"."orders"');
    expect(build('   ')).toBe('SELECT count(*) FROM "shop"."orders"');
    expect(
      buildCountSql({ schema: 'we"ird', table: 'ta ble', columns: new Set() }, undefined, []),
    ).toBe('SELECT count(*) FROM "we""ird"."ta ble"');
  });

  it.each([
    "status = 'paid'",
    "status = 'paid' AND total > 10",
    'total BETWEEN 1 AND 2 OR id IN (1, 2, 3)',
    "created_at >= now() - interval '7 days'",
    "lower(note) LIKE '%refund%'",
    'pg_catalog.lower(status) = $$paid$$',
    "$$)$$ = note OR note = ')'",
    "note = '--not a comment' OR note = '/* nor this */'",
    '"Mixed Case" IS NOT NULL',
    'orders.id = 1 AND shop.orders.total > 0',
    "coalesce(total, 0) > 0 AND status <> ALL (ARRAY['void', 'test'])",
    "meta ->> 'channel' = 'web' AND tags @> ARRAY['x']",
    'NOT (total < 0) -- a trailing comment on its own line\n',
    "status::text = 'paid'",
    'id = 1 /* balanced comment */',
    "current_setting('auth.user_id') = note",
  ])('accepts %s', (where) => {
    expect(build(where)).toBe(`SELECT count(*) FROM "shop"."orders" WHERE (${where})`);
  });

  it.each([
    ['1=1) UNION SELECT count(*) FROM secrets WHERE (true', /UNION|embedded|not a valid/],
    ['true) OR (SELECT count(*) FROM secrets) > 0 OR (false', /subqueries|not a valid/],
    ['true; DROP TABLE orders', /one statement|not a valid/],
    ['true; DROP TABLE orders; --', /one statement|not a valid/],
    ['id = (SELECT max(id) FROM secrets)', /subqueries/],
    ['EXISTS (SELECT 1 FROM secrets)', /subqueries/],
    ['id IN (SELECT id FROM secrets)', /subqueries/],
    ['id = ANY (SELECT id FROM secrets)', /subqueries/],
    ['true --', /comment or unterminated/],
    ['true -- )', /comment or unterminated/],
    ['true /*', /not a valid/],
    ['note = $$x', /not a valid/],
    ['note = $q$ ) OR true --', /not a valid/],
    ["note = 'unterminated", /not a valid/],
    ['pg_sleep(10) IS NULL', /pg_sleep/],
    ["pg_read_file('/etc/passwd') <> ''", /pg_read_file/],
    ["set_config('statement_timeout', '0', true) IS NOT NULL", /set_config/],
    ["query_to_xml('select * from secrets', true, true, '') IS NOT NULL", /query_to_xml/],
    ["ts_stat('select v from secrets') IS NOT NULL", /ts_stat/],
    ["pg_relation_size('secrets') > 0", /pg_relation_size/],
    ["has_table_privilege('secrets', 'select')", /has_table_privilege/],
    ["to_regclass('secrets') IS NOT NULL", /to_regclass/],
    ["'secrets'::regclass IS NOT NULL", /regclass/],
    ["obj_description(1259) <> ''", /obj_description/],
    ["nextval('orders_id_seq') > 0", /nextval/],
    ['public.lookup_secret(id) > 0', /built-in functions/],
    ['id OPERATOR(public.===) 1', /built-in operators/],
    ['id = $1', /parameters/],
    ['secret_column = 1', /not a column of shop.orders/],
    ['orders IS NOT NULL', /not a column/],
    ["row_to_json(orders)::text LIKE '%x%'", /not a column/],
    ['orders.* IS NOT NULL', /whole-row/],
    ['secrets.id = 1', /not a column of this table/],
    ['other.orders.id = 1', /not a column of this table/],
    ['true ORDER BY 1', /only an expression/],
    ['true GROUP BY id HAVING count(*) > 1', /only an expression/],
    ['true LIMIT 1', /only an expression/],
    ['true FOR UPDATE', /only an expression/],
    ['true WINDOW w AS ()', /only an expression/],
    ['count(*) OVER () > 1', /window functions/],
    ['1, 2', /not a valid/],
    ['SELECT 1', /not a valid/],
    ['true\0', /NUL/],
    ['x'.repeat(9000), /longer than/],
  ])('refuses %s', (where, reason) => {
    let error: unknown;
    try {
      build(where);
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'PGMCP301', category: 'input' });
    expect((error as Error).message).toMatch(reason);
    expect((error as Error).message).toMatch(/^Refused where: /);
  });

  it('honours the configured deny-list', () => {
    expect(() => buildCountSql(target, "md5(note) = ''", ['md5'])).toThrow(/md5/);
    expect(buildCountSql(target, "md5(note) = ''", [])).toContain('md5(note)');
  });
});
