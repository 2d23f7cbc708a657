import { beforeAll, describe, expect, it } from 'vitest';
import { looksLikeCredential } from '../credentials.js';
import { loadSqlParser } from '../sql-guard.js';
import { maskedDecisions, maskedOutputs, type MaskedScope } from './masked-use.js';
import { tryParse } from '../common/parse-tree.js';

const scope: MaskedScope = {
  columns: new Set(['ssn']),
  relations: new Set(['people', 'p']),
  allColumns: new Set(['id', 'name', 'city', 'ssn', 'person_id', 'amount']),
  setReturning: new Set(['generate_series']),
};

function statement(sql: string): unknown {
  const parsed = tryParse(sql);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.tree.stmts?.[0]?.stmt;
}

describe('masked columns in a statement', () => {
  beforeAll(() => loadSqlParser());

  it('allows them as output only', () => {
    for (const sql of [
      'SELECT id, ssn FROM people',
      'SELECT upper(ssn), count(DISTINCT ssn) FROM people GROUP BY city',
      "SELECT CASE WHEN ssn LIKE '1%' THEN 1 END FROM people",
      'SELECT p FROM people p WHERE p.city = $1 ORDER BY p.id',
      'SELECT ssn FROM people UNION ALL SELECT ssn FROM people',
      'EXPLAIN SELECT ssn FROM people',
    ]) {
      expect(maskedDecisions(statement(sql), scope), sql).toEqual([]);
    }
  });

  it('says where they would decide rows', () => {
    const cases: [string, RegExp][] = [
      ["SELECT id FROM people WHERE ssn = 'x'", /^WHERE uses "ssn"$/],
      ['SELECT id, ssn AS s FROM people ORDER BY s', /^ORDER BY uses "s"/],
      ['SELECT ssn FROM people ORDER BY 1', /output column 1/],
      ['SELECT DISTINCT ssn FROM people', /SELECT DISTINCT/],
      ['SELECT DISTINCT ON (ssn) id FROM people', /DISTINCT ON/],
      ['SELECT count(*) FROM people GROUP BY ssn', /GROUP BY/],
      ['SELECT lag(id) OVER (ORDER BY ssn) FROM people', /window/],
      ['SELECT id FROM people p JOIN orders o ON o.person_id = p.id AND p.ssn > $1', /FROM/],
      ["SELECT id FROM people p WHERE row_to_json(p)::text LIKE '%1%'", /whole row of "p"/],
      ['SELECT generate_series(1, length(ssn)) FROM people', /set-returning/],
      ["SELECT ssn FROM people INTERSECT SELECT 'x'", /UNION \/ INTERSECT/],
      ['UPDATE people SET name = ssn WHERE id = 1', /a write/],
      ["EXPLAIN SELECT id FROM people WHERE ssn = 'x'", /WHERE/],
    ];
    for (const [sql, reason] of cases) {
      const problems = maskedDecisions(statement(sql), scope);
      expect(problems.join('; '), sql).toMatch(reason);
    }
  });

  it('tells which output columns are computed from them', () => {
    expect(
      maskedOutputs(statement('SELECT name, upper(ssn), count(*) FROM people'), scope),
    ).toEqual([false, true, false]);
    expect(maskedOutputs(statement('SELECT * FROM people'), scope)).toBeNull();
    expect(maskedOutputs(statement('SELECT (p).* FROM people p'), scope)).toBeNull();
  });
});

describe('values that read like credentials', () => {
  it('recognises hashes and connection strings, not ordinary text', () => {
    for (const value of [
      'SCRAM-SHA-256$4096:c2FsdA==$aGFzaA==:a2V5',
      'md5' + 'a'.repeat(32),
      'host=db user=rep password=hunter2',
      '{user=bob,password=secret}',
      "ALTER ROLE bob PASSWORD 'hunter2'",
    ]) {
      expect(looksLikeCredential(value), value).toBe(true);
    }
    for (const value of ['password reset requested', 'md5 checksum', 'SCRAM', 'hello']) {
      expect(looksLikeCredential(value), value).toBe(false);
    }
  });
});
