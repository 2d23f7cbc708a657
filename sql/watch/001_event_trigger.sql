-- pgmcp live catalog: an event trigger that announces DDL with NOTIFY pgmcp_catalog, so a
-- running pgmcp reloads its annotated routines (tools) and schema cache without a restart
-- (docs/sql-tools.md, "Live updates").
--
-- Installed by pgmcp at start when its role may (CREATE EVENT TRIGGER needs a superuser);
-- otherwise a DBA may run this file once per database (psql -f), and pgmcp falls back to a
-- TTL poll until then. Idempotent: run it as often as you like.
-- It lives in its own schema, pgmcp_watch, apart from the state tables of the pgmcp schema:
-- removing it is `DROP SCHEMA pgmcp_watch CASCADE` (the event triggers go with the function).

CREATE SCHEMA IF NOT EXISTS pgmcp_watch;
COMMENT ON SCHEMA pgmcp_watch IS 'pgmcp: DDL event trigger that sends NOTIFY pgmcp_catalog';
REVOKE ALL ON SCHEMA pgmcp_watch FROM PUBLIC;

-- One notification per transaction and tag: PostgreSQL folds identical payloads sent in one
-- transaction, and the listener debounces bursts anyway.
CREATE OR REPLACE FUNCTION pgmcp_watch.notify_ddl() RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog
AS $fn$
BEGIN
  PERFORM pg_notify('pgmcp_catalog', json_build_object('tag', tg_tag)::text);
END
$fn$;
REVOKE ALL ON FUNCTION pgmcp_watch.notify_ddl() FROM PUBLIC;

-- (Re)create the triggers when missing or when their tag list differs from this file's.
-- CREATE OR REPLACE FUNCTION and COMMENT both fire ddl_command_end (tags CREATE FUNCTION and
-- COMMENT); DROP fires both ddl_command_end and sql_drop (the latter also for cascaded drops).
DO $do$
DECLARE
  wanted text[] := ARRAY[
    'COMMENT', 'GRANT', 'REVOKE',
    'CREATE FUNCTION', 'ALTER FUNCTION', 'DROP FUNCTION',
    'CREATE PROCEDURE', 'ALTER PROCEDURE', 'DROP PROCEDURE',
    'ALTER ROUTINE', 'DROP ROUTINE',
    'CREATE TABLE', 'CREATE TABLE AS', 'ALTER TABLE', 'DROP TABLE',
    'CREATE VIEW', 'ALTER VIEW', 'DROP VIEW',
    'CREATE MATERIALIZED VIEW', 'ALTER MATERIALIZED VIEW', 'DROP MATERIALIZED VIEW',
    'CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE', 'DROP FOREIGN TABLE',
    'CREATE INDEX', 'ALTER INDEX', 'DROP INDEX',
    'CREATE SCHEMA', 'ALTER SCHEMA', 'DROP SCHEMA',
    'CREATE TYPE', 'ALTER TYPE', 'DROP TYPE',
    'CREATE DOMAIN', 'ALTER DOMAIN', 'DROP DOMAIN',
    'CREATE EXTENSION', 'ALTER EXTENSION', 'DROP EXTENSION',
    'DROP OWNED', 'IMPORT FOREIGN SCHEMA'
  ];
  current_tags text[];
BEGIN
  -- Two pgmcp instances starting together must not race on drop/create.
  PERFORM pg_advisory_xact_lock(hashtext('pgmcp_watch.install'));

  SELECT evttags INTO current_tags FROM pg_event_trigger WHERE evtname = 'pgmcp_watch_ddl';
  IF NOT FOUND OR current_tags IS DISTINCT FROM wanted THEN
    IF FOUND THEN
      DROP EVENT TRIGGER pgmcp_watch_ddl;
    END IF;
    EXECUTE format(
      'CREATE EVENT TRIGGER pgmcp_watch_ddl ON ddl_command_end WHEN TAG IN (%s) EXECUTE FUNCTION pgmcp_watch.notify_ddl()',
      (SELECT string_agg(quote_literal(t), ', ') FROM unnest(wanted) AS t));
  END IF;

  IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'pgmcp_watch_drop') THEN
    CREATE EVENT TRIGGER pgmcp_watch_drop ON sql_drop EXECUTE FUNCTION pgmcp_watch.notify_ddl();
  END IF;
END
$do$;
