import { beforeAll, describe, expect, it } from 'vitest';
import { loadSqlParser } from '../sql-guard.js';
import { relationUses } from './cte-scope.js';
import { tryParse } from '../common/parse-tree.js';

/** `name` for a CTE reference, `schema.name` or `name!` for a relation, in walk order. */
function uses(sql: string): string[] {
  const parsed = tryParse(sql);
  if (!parsed.ok) throw new Error(parsed.message);
  return relationUses(parsed.tree).map((u) =>
    u.cte ? `cte:${u.name}` : u.schema === null ? `${u.name}!` : `${u.schema}.${u.name}`,
  );
}

describe('relation names resolved against CTEs as PostgreSQL resolves them', () => {
  beforeAll(() => loadSqlParser());

  it('reads an unqualified name as the CTE in scope, at its level or an outer one', () => {
    expect(uses('WITH pg_class AS (SELECT 1) SELECT * FROM pg_class')).toEqual(['cte:pg_class']);
    expect(
      uses('WITH t AS (SELECT 1) SELECT (SELECT count(*) FROM t), x.* FROM (SELECT * FROM t) x'),
    ).toEqual(['cte:t', 'cte:t']);
    expect(uses('WITH t AS (SELECT 1) SELECT * FROM t UNION ALL SELECT * FROM t')).toEqual([
      'cte:t',
      'cte:t',
    ]);
    // A later CTE of the same list sees an earlier one.
    expect(uses('WITH a AS (SELECT 1), b AS (SELECT * FROM a) SELECT * FROM b')).toEqual([
      'cte:a',
      'cte:b',
    ]);
  });

  it('reads a schema-qualified name, and a write’s target, as a relation', () => {
    expect(uses('WITH pg_class AS (SELECT 1) SELECT * FROM pg_catalog.pg_class')).toEqual([
      'pg_catalog.pg_class',
    ]);
    expect(uses('WITH t AS (SELECT 1) INSERT INTO t SELECT * FROM t')).toEqual(['t!', 'cte:t']);
  });

  it('gives a plain CTE no sight of itself or of later ones; a recursive list sees all', () => {
    expect(uses('WITH t AS (SELECT * FROM t) SELECT * FROM t')).toEqual(['t!', 'cte:t']);
    expect(uses('WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a')).toEqual([
      'b!',
      'cte:a',
    ]);
    expect(
      uses(
        'WITH RECURSIVE a AS (SELECT * FROM b), b AS (SELECT 1 UNION ALL SELECT * FROM b) SELECT * FROM a',
      ),
    ).toEqual(['cte:b', 'cte:b', 'cte:a']);
  });

  it('keeps a CTE inside the subquery that defines it', () => {
    expect(
      uses('SELECT * FROM (WITH pg_class AS (SELECT 1) SELECT * FROM pg_class) s, pg_class'),
    ).toEqual(['cte:pg_class', 'pg_class!']);
    expect(uses('(WITH t AS (SELECT 1) SELECT * FROM t) UNION ALL SELECT * FROM t')).toEqual([
      'cte:t',
      't!',
    ]);
  });
});
