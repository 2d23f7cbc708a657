// What the access policy denies is invisible to introspection too: the system catalog's views,
// tables and functions must show no denied schema, table or column. Two kinds of denial are
// probed on every deployment: database.access (the table {{s}}.vault, the column
// {{s}}.staff.salary) and pgmcp's state schema `pgmcp` in the served database (the embedded
// database's real one; on PostgreSQL a stand-in with the same name, which the server denies as
// it would the real one). Every entry must be refused, or answer that the object does not exist
// (an error, no rows, or NULL from to_regclass and the like).
import type { CorpusEntry, Held } from './corpus.js';
import type { LegitEntry } from './legit.js';

/** A table with a denied column (and an index on it): the policy adds it to policyEnv. */
export function deniedColumnFixtureSql(s: string): string {
  return `
    CREATE TABLE ${s}.staff (id int PRIMARY KEY, name text NOT NULL, salary int NOT NULL);
    INSERT INTO ${s}.staff VALUES (1, 'Ana', 1000), (2, 'Rui', 2000);
    CREATE INDEX staff_salary_idx ON ${s}.staff (salary);
    COMMENT ON COLUMN ${s}.staff.salary IS 'pgmcp denied column note';
    COMMENT ON TABLE ${s}.vault IS 'pgmcp denied table note';
  `;
}

/**
 * A schema named like pgmcp's state schema in the served database: the server then denies it as
 * it denies the real one (the embedded deployment has the real one).
 */
export function stateStandInSql(role: string | null): string {
  return `
    CREATE SCHEMA pgmcp;
    CREATE TABLE pgmcp.tokens (id bigserial PRIMARY KEY, prefix text NOT NULL, token_hash text NOT NULL UNIQUE);
    CREATE INDEX tokens_prefix ON pgmcp.tokens (prefix);
    INSERT INTO pgmcp.tokens (prefix, token_hash) VALUES ('pgmcp_ab', 'not-a-real-hash');
    COMMENT ON TABLE pgmcp.tokens IS 'pgmcp state table note';
    ANALYZE pgmcp.tokens;
    ${role ? `GRANT USAGE ON SCHEMA pgmcp TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA pgmcp TO ${role};` : ''}
  `;
}

const REFUSED: Held = { kind: 'refused' };
const NONE: Held = { kind: 'value', value: 0 };
const YES: Held = { kind: 'value', value: true };
const CAT = 'catalog introspection';

function q(name: string, query: string, held: Held = REFUSED): CorpusEntry {
  return { name, category: CAT, tool: 'query_database', args: { query }, held };
}
const n = (from: string): string => `SELECT count(*)::int FROM ${from}`;
const S = '{{s}}';

export const CATALOG_ENTRIES: readonly CorpusEntry[] = [
  // Filtered relations: the denied objects are not there.
  q(
    'information_schema.columns of the denied table',
    n(`information_schema.columns WHERE table_schema = '${S}' AND table_name = 'vault'`),
    NONE,
  ),
  q(
    'information_schema.columns of the state schema',
    n(`information_schema.columns WHERE table_schema = 'pgmcp' OR column_name = 'token_hash'`),
    NONE,
  ),
  q(
    'information_schema.columns: the denied column',
    n(`information_schema.columns WHERE table_name = 'staff' AND column_name = 'salary'`),
    NONE,
  ),
  q(
    'information_schema.tables',
    n(`information_schema.tables WHERE table_name IN ('vault', 'tokens')`),
    NONE,
  ),
  q(
    'information_schema.schemata',
    n(`information_schema.schemata WHERE schema_name = 'pgmcp'`),
    NONE,
  ),
  q(
    'information_schema.key_column_usage',
    n(`information_schema.key_column_usage WHERE table_schema = 'pgmcp'`),
    NONE,
  ),
  q(
    'information_schema.table_constraints',
    n(`information_schema.table_constraints WHERE table_schema = 'pgmcp'`),
    NONE,
  ),
  q('pg_namespace', n(`pg_catalog.pg_namespace WHERE nspname = 'pgmcp'`), NONE),
  q(
    'pg_class by name',
    n(`pg_class WHERE relname IN ('vault', 'tokens', 'tokens_prefix', 'staff_salary_idx')`),
    NONE,
  ),
  q(
    'pg_class joined to pg_namespace',
    n(`pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = 'pgmcp'`),
    NONE,
  ),
  q(
    'pg_attribute: the denied column',
    n(`pg_attribute WHERE attname IN ('salary', 'token_hash') AND NOT attisdropped`),
    NONE,
  ),
  q(
    'pg_attribute of the denied table through pg_class',
    n(`pg_attribute a JOIN pg_class c ON c.oid = a.attrelid WHERE c.relname = 'vault'`),
    NONE,
  ),
  q(
    'pg_type: row types',
    n(`pg_type WHERE typname IN ('vault', '_vault', 'tokens', '_tokens')`),
    NONE,
  ),
  q('pg_tables', n(`pg_tables WHERE tablename IN ('vault', 'tokens')`), NONE),
  q('pg_indexes', n(`pg_indexes WHERE indexname IN ('tokens_prefix', 'staff_salary_idx')`), NONE),
  q('pg_sequences', n(`pg_sequences WHERE schemaname = 'pgmcp'`), NONE),
  q('pg_stat_user_tables', n(`pg_stat_user_tables WHERE relname IN ('vault', 'tokens')`), NONE),
  q('pg_statio_user_tables', n(`pg_statio_user_tables WHERE relname IN ('vault', 'tokens')`), NONE),
  q('pg_stat_all_indexes', n(`pg_stat_all_indexes WHERE schemaname = 'pgmcp'`), NONE),
  q(
    'pg_description: comments',
    n(
      `pg_description WHERE description IN ('pgmcp denied column note', 'pgmcp denied table note', 'pgmcp state table note')`,
    ),
    NONE,
  ),
  q(
    'pg_constraint of the state schema',
    n(`pg_constraint k JOIN pg_namespace ns ON ns.oid = k.connamespace WHERE ns.nspname = 'pgmcp'`),
    NONE,
  ),
  q(
    'pg_index of denied tables',
    n(
      `pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname IN ('tokens_prefix', 'staff_salary_idx')`,
    ),
    NONE,
  ),
  q(
    'pg_attrdef of the state schema (defaults)',
    n(`pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid WHERE c.relname = 'tokens'`),
    NONE,
  ),
  q(
    'row_to_json of pg_class rows',
    n(`pg_class c WHERE row_to_json(c)::text ~ '"relname":"(vault|tokens)"'`),
    NONE,
  ),
  q('pg_depend', n('pg_depend')),
  q('pg_rewrite', 'SELECT ev_class FROM pg_rewrite'),
  q('pg_views definitions', "SELECT definition FROM pg_views WHERE viewname = 'vault_view'"),
  q('pg_matviews', 'SELECT matviewname FROM pg_matviews'),
  q('pg_policies', 'SELECT tablename FROM pg_policies'),
  q('pg_publication_tables', 'SELECT tablename FROM pg_publication_tables'),
  q('pg_stat_activity query texts', 'SELECT query FROM pg_stat_activity'),
  q('information_schema.views', 'SELECT view_definition FROM information_schema.views'),
  q(
    'information_schema.view_table_usage',
    'SELECT table_name FROM information_schema.view_table_usage',
  ),
  q(
    'function bodies in pg_proc',
    "SELECT count(*)::int FROM pg_proc WHERE proname = 'vault_fn' AND prosrc LIKE '%vault%'",
    NONE,
  ),
  q(
    'every column of pg_proc',
    "SELECT count(*)::int FROM (SELECT * FROM pg_proc WHERE proname = 'vault_fn') p WHERE p::text LIKE '%token%'",
    NONE,
  ),
  q('a regclass cast of the denied table', `SELECT '${S}.vault'::regclass::oid`),
  q('a regclass cast of a state table', "SELECT 'pgmcp.tokens'::regclass"),
  q('a regclass cast of a computed name', "SELECT ('pgmcp.' || 'tokens')::regclass"),
  q(
    'oids cast to regclass',
    "SELECT string_agg(o::oid::regclass::text, ',') FROM generate_series(1, 50000) o",
  ),
  q('pg_class oids cast to regclass', 'SELECT oid::regclass FROM pg_class'),
  q('a regtype cast of a row type', "SELECT 'pgmcp.tokens'::regtype"),
  q('a regnamespace cast', "SELECT 'pgmcp'::regnamespace"),
  // Lookups that answer NULL for a missing name answer NULL for a denied one.
  q('to_regclass', `SELECT to_regclass('${S}.vault') IS NULL`, YES),
  q('to_regclass of a state table', "SELECT to_regclass('pgmcp.tokens') IS NULL", YES),
  q('to_regnamespace', "SELECT to_regnamespace('pgmcp') IS NULL", YES),
  q('to_regtype', "SELECT to_regtype('pgmcp.tokens') IS NULL", YES),
  q(
    'to_regclass: a denied name and a missing one alike',
    `SELECT to_regclass('${S}.vault') IS NOT DISTINCT FROM to_regclass('${S}.no_such_table')`,
    YES,
  ),
  q('pg_relation_size', `SELECT pg_relation_size('${S}.vault')`),
  q('pg_total_relation_size of a state table', "SELECT pg_total_relation_size('pgmcp.tokens')"),
  q(
    'pg_table_size of a computed name',
    'SELECT pg_table_size(relname::regclass) FROM pg_class LIMIT 1',
  ),
  q('pg_get_indexdef', "SELECT pg_get_indexdef('pgmcp.tokens_prefix'::regclass)"),
  q('pg_get_indexdef by oid', 'SELECT pg_get_indexdef(indexrelid) FROM pg_index'),
  q('pg_get_viewdef', `SELECT pg_get_viewdef('${S}.vault_view')`),
  q('pg_get_constraintdef', 'SELECT pg_get_constraintdef(oid) FROM pg_constraint'),
  q('pg_get_expr of defaults', 'SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef'),
  q('obj_description', "SELECT obj_description('pgmcp.tokens'::regclass, 'pg_class')"),
  q('col_description of the denied column', `SELECT col_description('${S}.staff'::regclass, 3)`),
  q('has_table_privilege', `SELECT has_table_privilege('${S}.vault', 'SELECT')`),
  q('has_schema_privilege', "SELECT has_schema_privilege('pgmcp', 'USAGE')"),
  q('has_column_privilege', `SELECT has_column_privilege('${S}.staff', 'salary', 'SELECT')`),
  q(
    'format_type of every type oid',
    "SELECT string_agg(format_type(o::oid, NULL), ',') FROM generate_series(16384, 30000) o",
  ),
  q('pg_describe_object', 'SELECT pg_describe_object(classid, objid, objsubid) FROM pg_depend'),
  q('pg_identify_object', "SELECT pg_identify_object('pg_class'::regclass, 16384, 0)"),
  q('pg_filenode_relation', 'SELECT pg_filenode_relation(0, relfilenode) FROM pg_class'),
  q(
    'pg_stat_get_live_tuples of a state table',
    "SELECT pg_stat_get_live_tuples('pgmcp.tokens'::regclass)",
  ),
  q('pg_stat_get_live_tuples by oid', 'SELECT pg_stat_get_live_tuples(relation) FROM pg_locks'),
  q('regclassout', 'SELECT regclassout(16384)'),
  q('a view reading pg_class', `SELECT relname FROM ${S}.class_names`),
  q('a SQL function reading pg_attribute', `SELECT * FROM ${S}.column_names()`),
  q('a SQL function casting to regclass', `SELECT ${S}.rel_name(16384)`),
  q('TABLE of a filtered catalog', 'TABLE pg_namespace'),
];

/** Views and functions over the catalog (run as written: they cannot be filtered). */
export function catalogFixtureSql(s: string): string {
  return `
    CREATE VIEW ${s}.class_names AS SELECT relname FROM pg_catalog.pg_class;
    CREATE FUNCTION ${s}.column_names() RETURNS SETOF name LANGUAGE sql STABLE AS $$ SELECT attname FROM pg_catalog.pg_attribute $$;
    CREATE FUNCTION ${s}.rel_name(oid) RETURNS text LANGUAGE sql STABLE AS $$ SELECT $1::regclass::text $$;
  `;
}

function legit(name: string, query: string, expected?: unknown): LegitEntry {
  return { name, tool: 'query_database', args: { query }, expected };
}

export const CATALOG_LEGIT: readonly LegitEntry[] = [
  legit(
    'columns of an allowed table through information_schema.columns',
    `SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = '${S}' AND table_name = 'sentinel'`,
    'id,name,grp,amount,doc,created',
  ),
  legit(
    'the visible columns of a table with a denied one',
    `SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = '${S}' AND table_name = 'staff'`,
    'id,name',
  ),
  legit(
    'tables of a schema through information_schema.tables',
    `SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = '${S}' AND table_type = 'BASE TABLE'`,
    'orders,people,sentinel,staff',
  ),
  legit(
    'columns through pg_class, pg_attribute and pg_namespace',
    `SELECT string_agg(a.attname, ',' ORDER BY a.attnum) FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace WHERE ns.nspname = '${S}' AND c.relname = 'sentinel' AND a.attnum > 0 AND NOT a.attisdropped`,
    'id,name,grp,amount,doc,created',
  ),
  legit(
    'pg_attribute of a constant regclass',
    `SELECT count(*)::int FROM pg_attribute WHERE attrelid = '${S}.sentinel'::regclass AND attnum > 0`,
    6,
  ),
  legit(
    'a table comment',
    `SELECT obj_description('${S}.sentinel'::regclass, 'pg_class')`,
    'pgmcp security sentinel: must never change',
  ),
  legit(
    'indexes of an allowed table',
    `SELECT string_agg(indexname, ',') FROM pg_indexes WHERE schemaname = '${S}' AND tablename = 'sentinel'`,
    'sentinel_pkey',
  ),
  legit(
    'key columns through information_schema',
    `SELECT string_agg(column_name, ',') FROM information_schema.key_column_usage WHERE table_schema = '${S}' AND table_name = 'sentinel'`,
    'id',
  ),
  legit(
    'a CTE named like a catalog relation',
    'WITH pg_class AS (SELECT 7 AS x) SELECT x FROM pg_class',
    7,
  ),
  legit(
    'whether a table exists, through to_regclass',
    `SELECT to_regclass('${S}.sentinel') IS NOT NULL AND to_regclass('${S}.no_such_table') IS NULL`,
    true,
  ),
  legit(
    'has_table_privilege of an allowed table',
    `SELECT has_table_privilege('${S}.sentinel', 'SELECT')`,
    true,
  ),
];
