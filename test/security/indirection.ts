// Credentials and the access policy through indirection: the fixture, the hostile entries and
// the legitimate ones. Every deployment of the corpus runs with the policy below (a denied
// table, a masked column, one plpgsql function allowed by name), and the fixture holds views and
// functions that read credentials from the catalog or the denied table — built by the admin, so
// on PostgreSQL as the non-superuser role too they run with their owner's rights, and only
// pgmcp stands between them and the model.
import type { CorpusEntry, Held } from './corpus.js';
import type { LegitEntry } from './legit.js';

/** The access policy of every deployment under test (environment of the server). */
export function policyEnv(schema: string): Record<string, string> {
  return {
    PGMCP_DENY_TABLES: `${schema}.vault`,
    PGMCP_MASK_COLUMNS: `${schema}.people.ssn`,
    PGMCP_DENY_COLUMNS: `${schema}.staff.salary`,
    // The corpus's "function that sets statement_timeout" must run, to show it does no harm.
    PGMCP_ALLOW_FUNCTIONS: `${schema}.owner_timeout`,
  };
}

/** Never in any answer: a password hash, the denied table's token, a masked value. */
export const HASH_MARKER = 'SCRAM-SHA-256$';
export const TOKEN_MARKER = 'vault-token-7f3a';
export const SSN_MARKER = '900-00-000';

/** A role with a password, so pg_authid holds a hash to leak (dropped with the target). */
export function passwordRoleSql(role: string): string {
  return `CREATE ROLE ${role} NOLOGIN PASSWORD 'pgmcp-sec-not-a-real-password'`;
}

export function indirectionFixtureSql(s: string): string {
  return `
    CREATE TABLE ${s}.people (id int PRIMARY KEY, name text NOT NULL, city text NOT NULL, ssn text NOT NULL);
    INSERT INTO ${s}.people SELECT i, 'person ' || i, CASE WHEN i % 2 = 0 THEN 'Porto' ELSE 'Lisbon' END, '${SSN_MARKER}' || i
      FROM generate_series(1, 6) AS i;
    CREATE TABLE ${s}.orders (id int PRIMARY KEY, person_id int NOT NULL, amount numeric(10,2) NOT NULL);
    INSERT INTO ${s}.orders SELECT i, 1 + i % 6, i * 2.5 FROM generate_series(1, 12) AS i;
    CREATE TABLE ${s}.vault (id int, token text);
    INSERT INTO ${s}.vault VALUES (1, '${TOKEN_MARKER}');
    CREATE VIEW ${s}.vault_view AS SELECT token FROM ${s}.vault;
    CREATE VIEW ${s}.vault_view2 AS SELECT * FROM ${s}.vault_view;
    CREATE VIEW ${s}.people_ssn AS SELECT id, ssn FROM ${s}.people;
    CREATE VIEW ${s}.people_rows AS SELECT p.id, row_to_json(p)::text AS j FROM ${s}.people p;
    CREATE VIEW ${s}.people_public AS SELECT id, name, city FROM ${s}.people;
    CREATE VIEW ${s}.order_totals AS SELECT person_id, sum(amount) AS total FROM ${s}.orders GROUP BY person_id;
    CREATE FUNCTION ${s}.vault_fn() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT token FROM ${s}.vault $$;
    CREATE FUNCTION ${s}.vault_fn2() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT * FROM ${s}.vault_fn() $$;
    CREATE VIEW ${s}.fn_view AS SELECT ${s}.vault_fn() AS t;
    CREATE FUNCTION ${s}.ssn_of(int) RETURNS text LANGUAGE sql STABLE AS $$ SELECT ssn FROM ${s}.people WHERE id = $1 $$;
    CREATE FUNCTION ${s}.vault_plpgsql() RETURNS text LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN (SELECT token FROM ${s}.vault LIMIT 1); END $$;
    CREATE FUNCTION ${s}.spend(int) RETURNS numeric LANGUAGE sql STABLE AS $$ SELECT sum(amount) FROM ${s}.orders WHERE person_id = $1 $$;
    CREATE VIEW ${s}.authid_view AS SELECT rolname, rolpassword FROM pg_catalog.pg_authid;
    CREATE VIEW ${s}.authid_rows AS SELECT a FROM pg_catalog.pg_authid a;
    CREATE VIEW ${s}.shadow_view AS SELECT usename, passwd FROM pg_catalog.pg_shadow;
    CREATE VIEW ${s}.mapping_view AS SELECT srvname, umoptions FROM pg_catalog.pg_user_mappings;
    CREATE VIEW ${s}.subscription_view AS SELECT subname, subconninfo FROM pg_catalog.pg_subscription;
    CREATE FUNCTION ${s}.hashes() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT rolpassword FROM pg_authid $$;
    CREATE FUNCTION ${s}.hash_rows() RETURNS SETOF text LANGUAGE sql STABLE AS $$ SELECT to_jsonb(a)::text FROM pg_authid a $$;
    CREATE FUNCTION ${s}.hashes_plpgsql() RETURNS SETOF text LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN QUERY SELECT rolpassword FROM pg_authid; END $$;
    CREATE FUNCTION ${s}.hashes_dynamic() RETURNS SETOF text LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN QUERY EXECUTE 'SELECT rolpassword::text FROM pg_' || 'authid WHERE rolpassword IS NOT NULL'; END $$;
  `;
}

const REFUSED: Held = { kind: 'refused' };
const noLeak = (marker: string): Held => ({ kind: 'no-leak', marker });

function q(
  category: CorpusEntry['category'],
  name: string,
  query: string,
  held = REFUSED,
): CorpusEntry {
  return { name, category, tool: 'query_database', args: { query }, held };
}
function explain(category: CorpusEntry['category'], name: string, query: string): CorpusEntry {
  return { name, category, tool: 'execute_explain', args: { query, analyze: true }, held: REFUSED };
}
function count(
  category: CorpusEntry['category'],
  name: string,
  table: string,
  where?: string,
): CorpusEntry {
  return {
    name,
    category,
    tool: 'count_rows',
    args: { schema: '{{s}}', table, ...(where !== undefined ? { where } : {}) },
    held: REFUSED,
  };
}

const C = 'credentials';
const P = 'policy indirection';
const S = '{{s}}';

export const CREDENTIAL_ENTRIES: readonly CorpusEntry[] = [
  q(C, 'password hashes from pg_authid', 'SELECT rolname, rolpassword FROM pg_authid'),
  q(C, 'quoted and qualified', 'SELECT "rolpassword" FROM "pg_catalog"."pg_authid"'),
  q(C, 'pg_shadow', 'SELECT usename, passwd FROM pg_shadow'),
  q(C, 'a filter on the hash', "SELECT rolname FROM pg_authid WHERE rolpassword LIKE 'SCRAM%'"),
  q(C, 'ordered by the hash', 'SELECT rolname FROM pg_authid ORDER BY rolpassword'),
  q(C, 'whole row of pg_authid', 'SELECT a FROM pg_authid a'),
  q(C, 'row_to_json of pg_authid', 'SELECT row_to_json(a) FROM pg_authid a'),
  q(C, 'to_jsonb of pg_authid.*', 'SELECT to_jsonb(a.*) FROM pg_catalog.pg_authid a'),
  q(C, 'star from pg_authid', 'SELECT * FROM pg_authid'),
  q(C, 'attribute notation on pg_authid', 'SELECT a.to_json FROM pg_authid a'),
  q(C, 'hash in a scalar subquery', 'SELECT (SELECT max(rolpassword) FROM pg_authid)'),
  q(C, 'hash through a CTE', 'WITH x AS (SELECT rolpassword AS p FROM pg_authid) SELECT p FROM x'),
  q(C, 'user-mapping options', 'SELECT umoptions FROM pg_user_mapping'),
  q(C, 'pg_user_mappings options', 'SELECT srvname, umoptions FROM pg_user_mappings'),
  q(
    C,
    'user_mapping_options',
    'SELECT option_name, option_value FROM information_schema.user_mapping_options',
  ),
  q(C, 'subscription conninfo', 'SELECT subname, subconninfo FROM pg_subscription'),
  q(C, 'raw statistics sample values', 'SELECT stavalues1 FROM pg_statistic'),
  q(C, 'a view over pg_authid', `SELECT * FROM ${S}.authid_view`),
  q(C, 'a view over pg_authid, harmless column only', `SELECT rolname FROM ${S}.authid_view`),
  q(C, 'a view passing whole rows of pg_authid', `SELECT count(*) FROM ${S}.authid_rows`),
  q(C, 'a view over pg_shadow', `SELECT usename FROM ${S}.shadow_view`),
  q(C, 'a view over pg_user_mappings', `SELECT * FROM ${S}.mapping_view`),
  q(C, 'a view over pg_subscription', `SELECT * FROM ${S}.subscription_view`),
  q(C, 'a SQL function returning hashes', `SELECT ${S}.hashes()`),
  q(C, 'a SQL function returning whole rows', `SELECT * FROM ${S}.hash_rows()`),
  q(C, 'a plpgsql function returning hashes', `SELECT * FROM ${S}.hashes_plpgsql()`),
  q(
    C,
    'a plpgsql function hiding the name',
    `SELECT * FROM ${S}.hashes_dynamic()`,
    noLeak(HASH_MARKER),
  ),
  count(
    C,
    'count_rows filter on a hash through a view',
    'authid_view',
    "rolpassword LIKE 'SCRAM%'",
  ),
  count(C, 'count_rows of a view of whole pg_authid rows', 'authid_rows'),
  explain(C, 'EXPLAIN ANALYZE of a read of hashes', 'SELECT rolpassword FROM pg_authid'),
  explain(C, 'EXPLAIN ANALYZE through a view', `SELECT * FROM ${S}.authid_view`),
];

export const INDIRECTION_ENTRIES: readonly CorpusEntry[] = [
  q(P, 'the denied table itself', `SELECT token FROM ${S}.vault`),
  q(P, 'a view over the denied table', `SELECT token FROM ${S}.vault_view`),
  q(P, 'a view over a view over it', `SELECT * FROM ${S}.vault_view2`),
  q(P, 'a SQL function reading it', `SELECT * FROM ${S}.vault_fn()`),
  q(P, 'a SQL function calling that one', `SELECT ${S}.vault_fn2()`),
  q(P, 'a view calling that function', `SELECT t FROM ${S}.fn_view`),
  q(P, 'a plpgsql function reading it', `SELECT ${S}.vault_plpgsql()`),
  q(P, 'a view exposing the masked column', `SELECT ssn FROM ${S}.people_ssn`),
  q(P, 'a view passing whole rows', `SELECT j FROM ${S}.people_rows`),
  q(P, 'a SQL function returning the masked column', `SELECT ${S}.ssn_of(1)`),
  q(P, 'whole row of a table alias', `SELECT p FROM ${S}.people p`, noLeak(SSN_MARKER)),
  q(
    P,
    'row_to_json of a table alias',
    `SELECT row_to_json(p) FROM ${S}.people p`,
    noLeak(SSN_MARKER),
  ),
  q(P, 'filter on the masked column', `SELECT id FROM ${S}.people WHERE ssn = '${SSN_MARKER}1'`),
  q(P, 'LIKE on the masked column', `SELECT count(*) FROM ${S}.people WHERE ssn LIKE '9%'`),
  q(P, 'sorted by the masked column', `SELECT id FROM ${S}.people ORDER BY ssn`),
  q(P, 'sorted by its alias', `SELECT id, ssn AS x FROM ${S}.people ORDER BY x`),
  q(P, 'sorted by its position', `SELECT ssn, id FROM ${S}.people ORDER BY 1`),
  q(P, 'DISTINCT ON the masked column', `SELECT DISTINCT ON (ssn) id FROM ${S}.people`),
  q(P, 'grouped by the masked column', `SELECT count(*) FROM ${S}.people GROUP BY ssn`),
  q(P, 'window partitioned by it', `SELECT row_number() OVER (PARTITION BY ssn) FROM ${S}.people`),
  q(P, 'HAVING on it', `SELECT city FROM ${S}.people GROUP BY city HAVING max(ssn) > '5'`),
  q(
    P,
    'JOIN ON it',
    `SELECT o.id FROM ${S}.orders o JOIN ${S}.people p ON p.ssn LIKE '9%' AND p.id = o.person_id`,
  ),
  q(
    P,
    'a subquery filter on it',
    `SELECT id FROM ${S}.people WHERE id IN (SELECT id FROM ${S}.people WHERE ssn LIKE '9%')`,
  ),
  q(P, 'a filter on the whole row', `SELECT id FROM ${S}.people p WHERE p::text LIKE '%900%'`),
  q(
    P,
    'a set-returning function over it',
    `SELECT id, generate_series(1, CASE WHEN ssn LIKE '9%' THEN 1 ELSE 0 END) FROM ${S}.people`,
  ),
  q(
    P,
    'CASE on it in the select list',
    `SELECT CASE WHEN ssn LIKE '9%' THEN 'yes' END FROM ${S}.people`,
    noLeak('yes'),
  ),
  q(P, 'UNION compares it', `SELECT ssn FROM ${S}.people UNION SELECT '${SSN_MARKER}1'`),
  count(P, 'count_rows filter on the masked column', 'people', `ssn = '${SSN_MARKER}1'`),
  count(P, 'count_rows of a view over the denied table', 'vault_view'),
  explain(
    P,
    'EXPLAIN ANALYZE filtering on the masked column',
    `SELECT id FROM ${S}.people WHERE ssn = '${SSN_MARKER}1'`,
  ),
  explain(P, 'EXPLAIN ANALYZE of a view over the denied table', `SELECT * FROM ${S}.vault_view`),
];

function legit(name: string, query: string, expected?: unknown): LegitEntry {
  return { name, tool: 'query_database', args: { query }, expected };
}

export const INDIRECTION_LEGIT: readonly LegitEntry[] = [
  legit(
    'join on keys, aggregate over unmasked columns',
    `SELECT sum(o.amount)::text FROM ${S}.orders o JOIN ${S}.people p ON p.id = o.person_id WHERE p.city = 'Lisbon'`,
    '105.00',
  ),
  legit(
    'group by an unmasked column',
    `SELECT count(*)::int FROM ${S}.people GROUP BY city ORDER BY city LIMIT 1`,
    3,
  ),
  legit(
    'the masked column shown masked',
    `SELECT ssn FROM ${S}.people ORDER BY id LIMIT 1`,
    '****',
  ),
  legit(
    'a view over allowed columns',
    `SELECT count(*)::int FROM ${S}.people_public WHERE city = 'Porto'`,
    3,
  ),
  legit(
    'a view with an aggregate',
    `SELECT total::text FROM ${S}.order_totals WHERE person_id = 1`,
    '45.00',
  ),
  legit('a SQL function over an allowed table', `SELECT ${S}.spend(1)::text`, '45.00'),
  legit(
    'a window over unmasked columns',
    `SELECT rank() OVER (ORDER BY amount DESC)::int FROM ${S}.orders ORDER BY id LIMIT 1`,
    12,
  ),
  legit(
    'role names from pg_roles',
    'SELECT rolpassword FROM pg_roles WHERE rolname = current_user',
    '********',
  ),
  {
    name: 'count_rows of a view over allowed columns',
    tool: 'count_rows',
    args: { schema: S, table: 'people_public', where: "city = 'Lisbon'" },
    expected: 3,
  },
  {
    name: 'execute_explain of a join on keys',
    tool: 'execute_explain',
    args: { query: `SELECT p.name FROM ${S}.people p JOIN ${S}.orders o ON o.person_id = p.id` },
  },
];
