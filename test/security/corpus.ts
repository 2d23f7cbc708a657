// The hostile corpus: inputs an agent (or whoever steers it) could send to break the read-only
// promise. Each entry names the tool, the arguments and what "held" means for it; the harness
// (harness.ts) adds the checks every entry gets: no write, no setting or session state that
// survives the call, the server still answers, memory bounded.
//
// Arguments are written with placeholders so one corpus serves every deployment:
//   {{s}}       the fixture schema (sentinel table, sequence, owner-defined functions)
//   {{db}}      the database name          {{victim}}  a backend pid that must survive
//   {{file}}    a path prefix no file may ever appear under
//   {{role}}    the role the server connects as

import { CATALOG_ENTRIES } from './catalog.js';
import { CREDENTIAL_ENTRIES, INDIRECTION_ENTRIES } from './indirection.js';

export type Category =
  | 'multi-statement'
  | 'transaction control'
  | 'SET and session characteristics'
  | 'set_config'
  | 'side-effect functions'
  | 'attribute notation'
  | 'COPY'
  | 'procedural code'
  | 'session state'
  | 'writes dressed as reads'
  | 'roles, grants, DDL'
  | 'lexer tricks'
  | 'resource exhaustion'
  | 'count_rows where'
  | 'params'
  | 'tool arguments'
  | 'credentials'
  | 'policy indirection'
  | 'catalog introspection';

/**
 * What "held" means for an entry, beyond the checks every entry gets:
 * - refused: the call answers isError (whichever wall stopped it);
 * - timeout: isError saying it timed out at the configured limit, close to that limit;
 * - bounded: a timeout, a too-large refusal, or an answer cut by the row or byte cap — never
 *   the whole result, and within the limit plus a margin;
 * - no-leak: refused, or answered without `marker` (a server file's content) in the answer;
 * - value: the text was read as one harmless statement (a literal, a comment, a parameter):
 *   the call succeeds and its first cell is exactly `value`;
 * - missing: an error that says the object `… does not exist`, as PostgreSQL answers for a
 *   missing one (any other error would tell a denied object from a missing one).
 */
export type Held =
  | { kind: 'refused' }
  | { kind: 'missing' }
  | { kind: 'no-leak'; marker: string }
  | { kind: 'timeout' }
  | { kind: 'bounded' }
  | { kind: 'value'; value: unknown };

export type Tool = 'query_database' | 'count_rows' | 'execute_explain';

export interface CorpusEntry {
  name: string;
  category: Category;
  tool: Tool;
  /** Tool arguments; strings may hold the placeholders above. */
  args: Record<string, unknown>;
  held: Held;
}

const REFUSED: Held = { kind: 'refused' };
const TIMEOUT: Held = { kind: 'timeout' };
const BOUNDED: Held = { kind: 'bounded' };
const value = (v: unknown): Held => ({ kind: 'value', value: v });

function q(
  category: Category,
  name: string,
  query: string,
  held: Held = REFUSED,
  extra: Record<string, unknown> = {},
): CorpusEntry {
  return { name, category, tool: 'query_database', args: { query, ...extra }, held };
}

function where(name: string, filter: string, held: Held = REFUSED): CorpusEntry {
  return {
    name,
    category: 'count_rows where',
    tool: 'count_rows',
    args: { schema: '{{s}}', table: 'sentinel', where: filter },
    held,
  };
}

const DELETE = 'DELETE FROM {{s}}.sentinel';
const MB = 1024 * 1024;

export const HOSTILE: readonly CorpusEntry[] = [
  // -------------------------------------------------------------------------------------------
  // More than one statement, however the second one is hidden.
  q('multi-statement', 'select then delete', `SELECT 1; ${DELETE}`),
  q('multi-statement', 'second statement after a newline', `SELECT 1\n;\n${DELETE}`),
  q('multi-statement', 'leading block comment', `/* report */ SELECT 1; ${DELETE}`),
  q('multi-statement', 'line comment ends at the newline', `SELECT 1 -- harmless\n; ${DELETE}`),
  q('multi-statement', 'line comment ends at a carriage return', `SELECT 1 -- x\r; ${DELETE}`),
  q('multi-statement', 'dollar-quoted first statement', `SELECT $$a$$; ${DELETE}`),
  q('multi-statement', 'tagged dollar quote then delete', `SELECT $t$ ; $t$; ${DELETE}`),
  q('multi-statement', 'empty statements around a delete', `;;SELECT 1;;${DELETE};;`),
  q('multi-statement', 'drop table as second statement', 'SELECT 1; DROP TABLE {{s}}.sentinel'),
  q(
    'multi-statement',
    'write first, select second',
    `INSERT INTO {{s}}.sentinel (id, name, grp, amount, doc, created) VALUES (-1, 'x', 'x', 0, '{}', now()); SELECT 1`,
  ),

  // -------------------------------------------------------------------------------------------
  // Leaving the one-call transaction, or changing its mode.
  q('transaction control', 'commit; delete', `COMMIT; ${DELETE}`),
  q('transaction control', 'rollback; delete', `ROLLBACK; ${DELETE}`),
  q('transaction control', 'end; delete', `END; ${DELETE}`),
  q('transaction control', 'abort; delete', `ABORT; ${DELETE}`),
  q('transaction control', 'begin read write; delete', `BEGIN READ WRITE; ${DELETE}`),
  q('transaction control', 'start transaction read write', 'START TRANSACTION READ WRITE'),
  q('transaction control', 'commit alone', 'COMMIT'),
  q('transaction control', 'abort alone', 'ABORT'),
  q('transaction control', 'savepoint, release, delete', `SAVEPOINT a; RELEASE a; ${DELETE}`),
  q('transaction control', 'rollback to savepoint', 'ROLLBACK TO SAVEPOINT a'),
  q('transaction control', 'prepare transaction', "PREPARE TRANSACTION 'pgmcp_sec_evil'"),
  q('transaction control', 'commit and chain', 'COMMIT AND CHAIN'),

  // -------------------------------------------------------------------------------------------
  q('SET and session characteristics', 'set transaction read write', 'SET TRANSACTION READ WRITE'),
  q(
    'SET and session characteristics',
    'set transaction read write; delete',
    `SET TRANSACTION READ WRITE; ${DELETE}`,
  ),
  q(
    'SET and session characteristics',
    'set session characteristics read write',
    'SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE',
  ),
  q(
    'SET and session characteristics',
    'default_transaction_read_only off',
    'SET default_transaction_read_only = off',
  ),
  q('SET and session characteristics', 'statement_timeout 0', 'SET statement_timeout = 0'),
  q(
    'SET and session characteristics',
    'set local statement_timeout',
    'SET LOCAL statement_timeout = 0',
  ),
  q('SET and session characteristics', 'set role', 'SET ROLE postgres'),
  q(
    'SET and session characteristics',
    'set session authorization',
    'SET SESSION AUTHORIZATION postgres',
  ),
  q(
    'SET and session characteristics',
    'standard_conforming_strings off',
    'SET standard_conforming_strings = off',
  ),
  q('SET and session characteristics', 'search_path', 'SET search_path = pg_temp, {{s}}'),
  q('SET and session characteristics', 'reset all', 'RESET ALL'),

  // -------------------------------------------------------------------------------------------
  // set_config, the function form of SET, in every disguise.
  q(
    'set_config',
    'transaction_read_only off',
    "SELECT set_config('transaction_read_only', 'off', true)",
  ),
  q(
    'set_config',
    'statement_timeout for the session',
    "SELECT set_config('statement_timeout', '0', false)",
  ),
  q(
    'set_config',
    'statement_timeout for the transaction',
    "SELECT set_config('statement_timeout', '0', true)",
  ),
  q('set_config', 'caller identity', "SELECT set_config('auth.user_id', 'admin', false)"),
  q('set_config', 'role', "SELECT set_config('role', 'postgres', false)"),
  q(
    'set_config',
    'schema-qualified',
    "SELECT pg_catalog.set_config('statement_timeout', '0', false)",
  ),
  q('set_config', 'quoted name', `SELECT "set_config"('statement_timeout', '0', false)`),
  q(
    'set_config',
    'quoted and qualified',
    `SELECT "pg_catalog"."set_config"('statement_timeout', '0', false)`,
  ),
  q('set_config', 'in FROM', "SELECT * FROM set_config('statement_timeout', '0', false)"),
  q(
    'set_config',
    'in ROWS FROM',
    "SELECT * FROM ROWS FROM (set_config('statement_timeout', '0', false))",
  ),
  q('set_config', 'in a subquery', "SELECT (SELECT set_config('statement_timeout', '0', false))"),
  q(
    'set_config',
    'in a CTE',
    "WITH c AS (SELECT set_config('standard_conforming_strings', 'off', false)) SELECT * FROM c",
  ),
  q(
    'set_config',
    'unicode-escaped identifier',
    `SELECT U&"\\0073et_config"('statement_timeout', '0', false)`,
  ),
  q(
    'set_config',
    'unicode identifier with UESCAPE',
    `SELECT U&"!0073et_config" UESCAPE '!'('statement_timeout', '0', false)`,
  ),
  q('set_config', 'upper case', "SELECT SET_CONFIG('statement_timeout', '0', false)"),
  q(
    'set_config',
    'through pg_settings',
    "UPDATE pg_settings SET setting = '0' WHERE name = 'statement_timeout'",
  ),
  q(
    'set_config',
    'through query_to_xml',
    "SELECT query_to_xml('SELECT set_config(''statement_timeout'', ''0'', false)', true, true, '')",
  ),
  q(
    'set_config',
    'through ts_stat',
    "SELECT * FROM ts_stat('SELECT to_tsvector(set_config(''search_path'', ''pg_temp'', false))')",
  ),

  // -------------------------------------------------------------------------------------------
  // Functions whose effect reaches beyond the statement: files, other sessions, other servers,
  // the server's configuration, session-level locks, notifications, sequences.
  q('side-effect functions', 'pg_read_file', "SELECT pg_read_file('/etc/passwd')"),
  q('side-effect functions', 'pg_read_binary_file', "SELECT pg_read_binary_file('/etc/hostname')"),
  q('side-effect functions', 'pg_ls_dir', "SELECT pg_ls_dir('.')"),
  q('side-effect functions', 'pg_stat_file', "SELECT pg_stat_file('postgresql.conf')"),
  q('side-effect functions', 'lo_import', "SELECT lo_import('/etc/hostname')"),
  q('side-effect functions', 'lo_export', "SELECT lo_export(1, '{{file}}-lo')"),
  q(
    'side-effect functions',
    'lo_from_bytea (allowed in READ ONLY)',
    "SELECT lo_from_bytea(0, 'x')",
  ),
  q('side-effect functions', 'pg_terminate_backend', 'SELECT pg_terminate_backend({{victim}})'),
  q('side-effect functions', 'pg_cancel_backend', 'SELECT pg_cancel_backend({{victim}})'),
  q('side-effect functions', 'pg_reload_conf', 'SELECT pg_reload_conf()'),
  q('side-effect functions', 'pg_rotate_logfile', 'SELECT pg_rotate_logfile()'),
  q('side-effect functions', 'pg_notify', "SELECT pg_notify('pgmcp_sec', 'x')"),
  q('side-effect functions', 'pg_advisory_lock', 'SELECT pg_advisory_lock(4242)'),
  q('side-effect functions', 'pg_try_advisory_lock', 'SELECT pg_try_advisory_lock(4242)'),
  q(
    'side-effect functions',
    'dblink',
    `SELECT * FROM dblink('dbname={{db}}', '${DELETE}') AS t(x int)`,
  ),
  q('side-effect functions', 'dblink_exec', `SELECT dblink_exec('dbname={{db}}', '${DELETE}')`),
  q(
    'side-effect functions',
    'query_to_xml running a delete',
    `SELECT query_to_xml('${DELETE} RETURNING 1', true, true, '')`,
  ),
  q(
    'side-effect functions',
    'table_to_xml',
    "SELECT table_to_xml('{{s}}.sentinel', true, true, '')",
  ),
  q(
    'side-effect functions',
    'nextval (read-only or privileges stop it)',
    "SELECT nextval('{{s}}.sentinel_seq')",
  ),
  q('side-effect functions', 'setval', "SELECT setval('{{s}}.sentinel_seq', 1000)"),
  q(
    'side-effect functions',
    'pg_logical_emit_message',
    "SELECT pg_logical_emit_message(true, 'x', 'y')",
  ),
  q('side-effect functions', 'pg_switch_wal', 'SELECT pg_switch_wal()'),
  // These three run even inside READ ONLY for a superuser: only the parser stops them.
  q('side-effect functions', 'pg_stat_reset', 'SELECT pg_stat_reset()'),
  q('side-effect functions', 'pg_stat_reset_shared', "SELECT pg_stat_reset_shared('bgwriter')"),
  q(
    'side-effect functions',
    'pg_log_backend_memory_contexts',
    'SELECT pg_log_backend_memory_contexts(pg_backend_pid())',
  ),
  q(
    'side-effect functions',
    'pg_import_system_collations',
    "SELECT pg_import_system_collations('pg_catalog')",
  ),
  q(
    'side-effect functions',
    'XML external entity',
    `SELECT xmlparse(document '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>')::text`,
    { kind: 'no-leak', marker: 'root:' },
  ),

  // -------------------------------------------------------------------------------------------
  // (expr).f is PostgreSQL's attribute notation for f(expr): a function call that is not a
  // FuncCall in the parse tree.
  q('attribute notation', 'pg_read_file', "SELECT ('/etc/passwd'::text).pg_read_file"),
  q(
    'attribute notation',
    'pg_advisory_lock (session lock)',
    'SELECT (4242::bigint).pg_advisory_lock',
  ),
  q('attribute notation', 'pg_terminate_backend', 'SELECT ({{victim}}).pg_terminate_backend'),
  q('attribute notation', 'lo_import', "SELECT ('/etc/hostname'::text).lo_import"),
  q('attribute notation', 'pg_ls_dir', "SELECT ('.'::text).pg_ls_dir"),
  q(
    'attribute notation',
    'column.function from a subquery',
    "SELECT path.pg_read_file FROM (SELECT '/etc/passwd'::text AS path) s",
  ),

  // -------------------------------------------------------------------------------------------
  q('COPY', 'to program', "COPY {{s}}.sentinel TO PROGRAM 'touch {{file}}-program'"),
  q('COPY', 'query to program', "COPY (SELECT 1) TO PROGRAM 'touch {{file}}-program'"),
  q('COPY', 'to a server file', "COPY {{s}}.sentinel TO '{{file}}-copy'"),
  q('COPY', 'from a server file', "COPY {{s}}.sentinel FROM '/etc/hostname'"),
  q('COPY', 'from stdin', 'COPY {{s}}.sentinel FROM STDIN'),
  q('COPY', 'to stdout', 'COPY {{s}}.sentinel TO STDOUT'),

  // -------------------------------------------------------------------------------------------
  q('procedural code', 'DO block', `DO $$ BEGIN ${DELETE}; END $$`),
  q('procedural code', 'DO with a language', `DO LANGUAGE plpgsql 'BEGIN ${DELETE}; END'`),
  q(
    'procedural code',
    'create function',
    `CREATE FUNCTION {{s}}.pgmcp_sec_evil() RETURNS int LANGUAGE sql AS $$ ${DELETE} RETURNING 1 $$`,
  ),
  q(
    'procedural code',
    'create function then call it',
    `CREATE FUNCTION {{s}}.pgmcp_sec_evil() RETURNS int LANGUAGE sql AS $$ ${DELETE} RETURNING 1 $$; SELECT {{s}}.pgmcp_sec_evil()`,
  ),
  q('procedural code', 'call a function that was never created', 'SELECT {{s}}.pgmcp_sec_evil()'),
  q(
    'procedural code',
    'create procedure',
    `CREATE PROCEDURE {{s}}.pgmcp_sec_evil() LANGUAGE sql AS $$ ${DELETE} $$`,
  ),
  q('procedural code', 'CALL an existing procedure that deletes', 'CALL {{s}}.purge()'),
  q('procedural code', 'owner-defined function that deletes', 'SELECT {{s}}.owner_writer()'),
  q('procedural code', 'SECURITY DEFINER function that deletes', 'SELECT {{s}}.definer_writer()'),
  q(
    'procedural code',
    'EXPLAIN ANALYZE of a deleting function',
    'EXPLAIN ANALYZE SELECT {{s}}.owner_writer()',
  ),
  // The function runs (the parser cannot know what it does); pgmcp re-asserts the timeout in
  // every transaction, so the probe after it must still see the configured value.
  q(
    'procedural code',
    'owner-defined function sets statement_timeout for the session',
    'SELECT {{s}}.owner_timeout()',
    value('ok'),
  ),

  // -------------------------------------------------------------------------------------------
  q('session state', 'lock table', 'LOCK TABLE {{s}}.sentinel IN ACCESS EXCLUSIVE MODE'),
  q('session state', 'vacuum', 'VACUUM {{s}}.sentinel'),
  q('session state', 'vacuum full', 'VACUUM FULL'),
  q('session state', 'analyze', 'ANALYZE {{s}}.sentinel'),
  q('session state', 'prepare a delete', `PREPARE pgmcp_sec_evil AS ${DELETE}`),
  q('session state', 'execute a prepared statement', 'EXECUTE pgmcp_sec_evil'),
  q('session state', 'deallocate all', 'DEALLOCATE ALL'),
  q('session state', 'listen', 'LISTEN pgmcp_sec'),
  q('session state', 'notify', 'NOTIFY pgmcp_sec'),
  q('session state', 'unlisten', 'UNLISTEN *'),
  q('session state', 'discard all', 'DISCARD ALL'),
  q('session state', 'declare a holdable cursor', 'DECLARE c CURSOR WITH HOLD FOR SELECT 1'),
  q('session state', 'checkpoint', 'CHECKPOINT'),
  q('session state', 'load a library', "LOAD 'plpgsql'"),

  // -------------------------------------------------------------------------------------------
  q(
    'writes dressed as reads',
    'data-modifying CTE',
    `WITH d AS (${DELETE} RETURNING *) SELECT count(*) FROM d`,
  ),
  q(
    'writes dressed as reads',
    'data-modifying CTE nested in a subquery',
    `SELECT * FROM (WITH d AS (${DELETE} RETURNING 1) SELECT * FROM d) x`,
  ),
  q(
    'writes dressed as reads',
    'select into',
    'SELECT * INTO {{s}}.pgmcp_sec_evil FROM {{s}}.sentinel',
  ),
  q('writes dressed as reads', 'select for update', 'SELECT * FROM {{s}}.sentinel FOR UPDATE'),
  q(
    'writes dressed as reads',
    'select for share nowait',
    'SELECT * FROM {{s}}.sentinel FOR SHARE NOWAIT',
  ),
  q('writes dressed as reads', 'explain analyze delete', `EXPLAIN ANALYZE ${DELETE}`),
  q(
    'writes dressed as reads',
    'explain (analyze) update',
    "EXPLAIN (ANALYZE, BUFFERS) UPDATE {{s}}.sentinel SET name = 'x'",
  ),
  q(
    'writes dressed as reads',
    'explain analyze create table as',
    'EXPLAIN ANALYZE CREATE TABLE {{s}}.pgmcp_sec_evil AS SELECT 1',
  ),
  q('writes dressed as reads', 'explain execute', 'EXPLAIN EXECUTE pgmcp_sec_evil'),
  q('writes dressed as reads', 'create temp table', 'CREATE TEMP TABLE pgmcp_sec_evil (x int)'),
  q('writes dressed as reads', 'create table as', 'CREATE TABLE {{s}}.pgmcp_sec_evil AS SELECT 1'),
  q(
    'writes dressed as reads',
    'merge',
    `MERGE INTO {{s}}.sentinel t USING (SELECT 1 AS id) s ON t.id = s.id WHEN MATCHED THEN DELETE`,
  ),
  q(
    'writes dressed as reads',
    'insert on conflict do nothing',
    "INSERT INTO {{s}}.sentinel (id, name, grp, amount, doc, created) VALUES (1, 'x', 'x', 0, '{}', now()) ON CONFLICT DO NOTHING",
  ),
  q('writes dressed as reads', 'truncate', 'TRUNCATE {{s}}.sentinel'),
  q(
    'writes dressed as reads',
    'refresh materialized view',
    'REFRESH MATERIALIZED VIEW {{s}}.pgmcp_sec_evil',
  ),

  // -------------------------------------------------------------------------------------------
  q('roles, grants, DDL', 'alter system', "ALTER SYSTEM SET statement_timeout = '0'"),
  q('roles, grants, DDL', 'alter system reset all', 'ALTER SYSTEM RESET ALL'),
  q('roles, grants, DDL', 'create role', 'CREATE ROLE pgmcp_sec_evil SUPERUSER LOGIN'),
  q('roles, grants, DDL', 'alter own role superuser', 'ALTER ROLE {{role}} SUPERUSER'),
  q(
    'roles, grants, DDL',
    'alter own role settings',
    'ALTER ROLE {{role}} SET statement_timeout = 0',
  ),
  q('roles, grants, DDL', 'grant to public', 'GRANT ALL ON {{s}}.sentinel TO PUBLIC'),
  q('roles, grants, DDL', 'grant role membership', 'GRANT pg_read_server_files TO {{role}}'),
  q(
    'roles, grants, DDL',
    'alter database',
    'ALTER DATABASE {{db}} SET default_transaction_read_only = off',
  ),
  q('roles, grants, DDL', 'create extension', 'CREATE EXTENSION IF NOT EXISTS file_fdw'),
  q('roles, grants, DDL', 'create schema', 'CREATE SCHEMA pgmcp_sec_evil'),
  q('roles, grants, DDL', 'drop table', 'DROP TABLE {{s}}.sentinel'),
  q('roles, grants, DDL', 'comment on', "COMMENT ON TABLE {{s}}.sentinel IS 'changed'"),
  q('roles, grants, DDL', 'create database', 'CREATE DATABASE pgmcp_sec_evil'),

  // -------------------------------------------------------------------------------------------
  // The guard and the server must read the text the same way. Where they do, a "hidden" write
  // is just text: the call succeeds and returns it.
  q(
    'lexer tricks',
    'nested block comment hides a delete',
    `SELECT 1 AS v /* outer /* inner */ ; ${DELETE}; */`,
    value(1),
  ),
  q('lexer tricks', 'line comment hides a delete', `SELECT 1 AS v -- ; ${DELETE}`, value(1)),
  q('lexer tricks', 'unterminated block comment', `SELECT 1 /* ; ${DELETE}`),
  q(
    'lexer tricks',
    'dollar quote hides a delete',
    `SELECT $a$ $$; ${DELETE}; $$ $a$ AS v`,
    value(` $$; DELETE FROM {{s}}.sentinel; $$ `),
  ),
  q('lexer tricks', 'unterminated dollar quote', `SELECT $a$ ; ${DELETE}`),
  q(
    'lexer tricks',
    'E-string with an escaped quote',
    `SELECT E'\\'; ${DELETE}; --' AS v`,
    value(`'; DELETE FROM {{s}}.sentinel; --`),
  ),
  // Read with standard_conforming_strings off (the fixture database's default!) this is a
  // string, then lo_from_bytea — which even a READ ONLY transaction allows. pgmcp turns the
  // setting on in the transaction, so the server reads one string, as the guard did.
  q(
    'lexer tricks',
    'backslash-quote under standard_conforming_strings',
    `SELECT '\\'' || lo_from_bytea(0, $$pwned$$) --' AS v`,
    value(`\\' || lo_from_bytea(0, $$pwned$$) --`),
  ),
  q('lexer tricks', 'backslash-quote then a delete', `SELECT 'a\\'; ${DELETE}; --'`),
  q(
    'lexer tricks',
    'unicode-escaped string literal',
    `SELECT U&'\\0027; ${DELETE}; --' AS v`,
    value(`'; DELETE FROM {{s}}.sentinel; --`),
  ),
  q(
    'lexer tricks',
    'long identifier truncated to 63 bytes',
    `SELECT "set_config${'x'.repeat(60)}"('statement_timeout', '0', false)`,
  ),
  q('lexer tricks', 'very long relation name', `SELECT * FROM "${'a'.repeat(10_000)}"`),
  q('lexer tricks', 'very long alias', `SELECT 1 AS "${'b'.repeat(10_000)}"`, value(1)),
  q('lexer tricks', 'NUL byte before a second statement', `SELECT 1\u0000; ${DELETE}`),
  q('lexer tricks', 'NUL byte inside a literal', "SELECT 'a\u0000b'"),
  q('lexer tricks', 'empty query', '   '),
  q('lexer tricks', 'only a comment', '-- nothing here'),

  // -------------------------------------------------------------------------------------------
  // Work without end: the statement timeout, the row cap and the byte cap must bound it.
  q('resource exhaustion', 'pg_sleep(60)', 'SELECT pg_sleep(60)', TIMEOUT),
  q('resource exhaustion', "pg_sleep_for('1 hour')", "SELECT pg_sleep_for('1 hour')", TIMEOUT),
  q(
    'resource exhaustion',
    'count over generate_series(1, 1e9)',
    'SELECT count(*) FROM generate_series(1, 1e9)',
    TIMEOUT,
  ),
  q(
    'resource exhaustion',
    'generate_series(1, 1e9) rows',
    'SELECT generate_series(1, 1e9)',
    BOUNDED,
  ),
  q(
    'resource exhaustion',
    'generate_series(1, 1e9) in FROM',
    'SELECT * FROM generate_series(1, 1e9)',
    BOUNDED,
  ),
  q(
    'resource exhaustion',
    'endless recursive CTE',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r',
    BOUNDED,
  ),
  q(
    'resource exhaustion',
    'endless recursive CTE, counted',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r',
    TIMEOUT,
  ),
  q(
    'resource exhaustion',
    'exponential recursive CTE',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT r.n FROM r, (VALUES (1), (2)) v(x)) SELECT count(*) FROM r',
    BOUNDED,
  ),
  q(
    'resource exhaustion',
    'cross join of big series',
    'SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b',
    TIMEOUT,
  ),
  q('resource exhaustion', "repeat('x', 100000000)", "SELECT repeat('x', 100000000)", BOUNDED),
  q(
    'resource exhaustion',
    '200 MB in one value',
    "SELECT string_agg(repeat('x', 1000000), '') FROM generate_series(1, 200)",
    BOUNDED,
  ),
  q(
    'resource exhaustion',
    '200 MB over 200 rows',
    "SELECT repeat('x', 1000000) FROM generate_series(1, 200)",
    BOUNDED,
  ),
  q(
    'resource exhaustion',
    '10 MB values (cut to the byte cap)',
    "SELECT repeat('x', 10000000) FROM generate_series(1, 20)",
    BOUNDED,
  ),
  q(
    'resource exhaustion',
    '1 MB rows skipped by a huge offset',
    "SELECT repeat('x', 1000000) FROM generate_series(1, 1000000)",
    BOUNDED,
    { offset: 1_000_000, limit: 1000 },
  ),
  q(
    'resource exhaustion',
    'parentheses 20000 deep',
    `SELECT ${'('.repeat(20_000)}1${')'.repeat(20_000)}`,
  ),
  q(
    'resource exhaustion',
    'expression with 300000 terms',
    `SELECT ${Array(300_000).fill('1').join(' + ')}`,
  ),
  q(
    'resource exhaustion',
    'subqueries 3000 deep',
    `SELECT ${'(SELECT '.repeat(3000)}1${')'.repeat(3000)}`,
  ),
  q(
    'resource exhaustion',
    '5 MB query hiding a second statement',
    `SELECT 1 -- ${'x'.repeat(5 * MB)}\n; ${DELETE}`,
  ),
  q(
    'resource exhaustion',
    '5 MB string literal',
    `SELECT length('${'y'.repeat(5 * MB)}') AS n`,
    value(5 * MB),
  ),

  // -------------------------------------------------------------------------------------------
  // count_rows pastes `where` into its statement: it must stay one expression over the table.
  where(
    'closes the parenthesis and ORs a subquery',
    '1=1) OR (SELECT count(*) FROM pg_authid) > 0 OR (1=1',
  ),
  where('ends the statement', `true; ${DELETE}`),
  where('ends the statement then drops', 'true; DROP TABLE {{s}}.sentinel; --'),
  where('line comment swallows the closing parenthesis', 'id = 1 --'),
  where('unterminated block comment', 'id = 1 /*'),
  where('subquery over the same table', 'id IN (SELECT id FROM {{s}}.sentinel)'),
  where('subquery over a catalog', 'EXISTS (SELECT 1 FROM pg_authid)'),
  where('union', 'true UNION SELECT 1'),
  where('pg_read_file', "pg_read_file('/etc/passwd') IS NOT NULL"),
  where('pg_read_file in a scalar subquery', "(SELECT pg_read_file('/etc/passwd')) IS NOT NULL"),
  where('set_config', "set_config('statement_timeout', '0', false) = '0'"),
  where('pg_catalog.set_config', "pg_catalog.set_config('statement_timeout', '0', false) = '0'"),
  where('attribute notation: pg_read_file', '(name).pg_read_file IS NOT NULL'),
  where('attribute notation: pg_advisory_lock', '(id::bigint).pg_advisory_lock IS NULL'),
  where('attribute notation: pg_terminate_backend', '({{victim}}).pg_terminate_backend'),
  where('nextval', "nextval('{{s}}.sentinel_seq') > 0"),
  where('lo_from_bytea', "lo_from_bytea(0, 'x') > 0"),
  where('pg_sleep', 'pg_sleep(60) IS NOT NULL'),
  where('parameter placeholder', 'id = $1'),
  where('whole-row reference', 'sentinel.* IS NOT NULL'),
  where('another table', 'pg_class.oid = 1'),
  where('regclass cast', "'{{s}}.sentinel'::regclass IS NOT NULL"),
  where('query_to_xml', "query_to_xml('SELECT 1', true, true, '') IS NOT NULL"),
  where('user-defined function', '{{s}}.owner_writer() = 1'),
  where('expensive but legal expression', 'length(repeat(name, 100000000)) > 0', TIMEOUT),
  {
    name: 'table name injection',
    category: 'count_rows where',
    tool: 'count_rows',
    args: { schema: '{{s}}', table: `sentinel"; ${DELETE}; --` },
    held: REFUSED,
  },
  {
    name: 'schema name injection',
    category: 'count_rows where',
    tool: 'count_rows',
    args: { schema: `{{s}}"; ${DELETE}; --`, table: 'sentinel' },
    held: REFUSED,
  },

  // -------------------------------------------------------------------------------------------
  // Parameters are values, never SQL.
  q('params', 'quote-and-delete as a value', 'SELECT $1::text AS v', value(`'); ${DELETE}; --`), {
    params: [`'); ${DELETE}; --`],
  }),
  q(
    'params',
    'classic OR 1=1 as a value',
    'SELECT count(*)::int AS n FROM {{s}}.sentinel WHERE name = $1',
    value(0),
    { params: ["x' OR '1'='1"] },
  ),
  q('params', 'dollar quote as a value', 'SELECT $1::text AS v', value(`$$; ${DELETE}; $$`), {
    params: [`$$; ${DELETE}; $$`],
  }),
  q(
    'params',
    'SQL in an integer parameter',
    'SELECT * FROM {{s}}.sentinel WHERE id = $1',
    REFUSED,
    {
      params: [`1; ${DELETE}`],
    },
  ),
  q('params', 'set_config with parameters', 'SELECT set_config($1, $2, false)', REFUSED, {
    params: ['statement_timeout', '0'],
  }),
  q('params', 'NUL byte in a parameter', 'SELECT $1::text', REFUSED, { params: ['a\u0000b'] }),
  q('params', 'more placeholders than values', 'SELECT $1, $2', REFUSED, { params: ['x'] }),

  // -------------------------------------------------------------------------------------------
  q('tool arguments', 'limit above the cap', 'SELECT 1', REFUSED, { limit: 1_000_000_000 }),
  q('tool arguments', 'negative offset', 'SELECT 1', REFUSED, { offset: -1 }),
  q('tool arguments', 'confirm nonce on a read-only database', `${DELETE}`, REFUSED, {
    confirm: 'forged',
  }),
  q('tool arguments', 'object as a parameter', 'SELECT $1', REFUSED, {
    params: [{ toPostgres: 'DELETE' }],
  }),
  // -------------------------------------------------------------------------------------------
  // Credentials in the catalog and the access policy through views and functions (indirection.ts).
  ...CREDENTIAL_ENTRIES,
  ...INDIRECTION_ENTRIES,
  // What the policy denies does not show through the system catalog (catalog.ts).
  ...CATALOG_ENTRIES,
];

/** Replace the placeholders in every string of `args`. */
export function fill(
  args: Record<string, unknown>,
  vars: Record<string, string>,
): Record<string, unknown> {
  const sub = (v: unknown): unknown =>
    typeof v === 'string'
      ? v.replace(/\{\{(\w+)\}\}/g, (whole, key: string) => vars[key] ?? whole)
      : Array.isArray(v)
        ? v.map(sub)
        : v;
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, sub(v)]));
}
