-- pgmcp catalog generation: a number that every committed DDL transaction raises, so a running
-- pgmcp can reuse what it learned from the catalog (the access policy's lookups: relations,
-- views, functions) and check in the same round trip as the next statement, before it runs,
-- that nothing has changed since (docs/security.md, "Cost").
--
-- Installed with 001_event_trigger.sql (pgmcp install, or psql -f by a superuser); the embedded
-- database gets it at every start. Without it pgmcp looks the catalog up on every call.
-- Idempotent. Removing it (DROP SCHEMA pgmcp_watch CASCADE) only brings back the lookups.
--
-- Why a table and not a sequence: the increment must become visible with the DDL it counts, at
-- commit, never before (nextval is visible at once). Why slots: concurrent DDL transactions take
-- different rows (SKIP LOCKED) instead of waiting for each other; the generation is their sum.
-- Why ALWAYS: the triggers fire under session_replication_role = replica too.

CREATE SCHEMA IF NOT EXISTS pgmcp_watch;

CREATE TABLE IF NOT EXISTS pgmcp_watch.generation (
  slot integer PRIMARY KEY,
  n bigint NOT NULL DEFAULT 0
);
COMMENT ON TABLE pgmcp_watch.generation IS
  'pgmcp: DDL transactions counted (sum of n); pgmcp reuses its catalog lookups while it stays the same';
INSERT INTO pgmcp_watch.generation (slot)
  SELECT s FROM pg_catalog.generate_series(0, 63) AS s ON CONFLICT DO NOTHING;

-- Every role pgmcp serves as reads it (a count, nothing else); only the trigger writes it.
GRANT USAGE ON SCHEMA pgmcp_watch TO PUBLIC;
REVOKE ALL ON pgmcp_watch.generation FROM PUBLIC;
GRANT SELECT ON pgmcp_watch.generation TO PUBLIC;

-- Once per transaction (a migration of a thousand statements takes one row once). A missing
-- table must never make DDL fail: then nothing is counted, and pgmcp, which cannot read the
-- generation either, looks the catalog up on every call.
CREATE OR REPLACE FUNCTION pgmcp_watch.count_ddl() RETURNS event_trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog
AS $fn$
DECLARE
  chosen integer;
BEGIN
  IF current_setting('pgmcp_watch.counted', true) = txid_current()::text THEN
    RETURN;
  END IF;
  BEGIN
    SELECT slot INTO chosen FROM pgmcp_watch.generation ORDER BY random() LIMIT 1
      FOR UPDATE SKIP LOCKED;
    IF chosen IS NULL THEN
      -- Every slot is taken by another DDL transaction: wait for one.
      SELECT slot INTO chosen FROM pgmcp_watch.generation WHERE slot = (random() * 63)::integer
        FOR UPDATE;
    END IF;
    UPDATE pgmcp_watch.generation SET n = n + 1 WHERE slot = chosen;
  EXCEPTION WHEN undefined_table THEN
    RETURN;
  END;
  PERFORM set_config('pgmcp_watch.counted', txid_current()::text, true);
END
$fn$;
REVOKE ALL ON FUNCTION pgmcp_watch.count_ddl() FROM PUBLIC;

DO $do$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('pgmcp_watch.install'));
  IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'pgmcp_watch_generation') THEN
    CREATE EVENT TRIGGER pgmcp_watch_generation ON ddl_command_end
      EXECUTE FUNCTION pgmcp_watch.count_ddl();
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_event_trigger WHERE evtname = 'pgmcp_watch_generation_drop') THEN
    CREATE EVENT TRIGGER pgmcp_watch_generation_drop ON sql_drop
      EXECUTE FUNCTION pgmcp_watch.count_ddl();
  END IF;
  ALTER EVENT TRIGGER pgmcp_watch_generation ENABLE ALWAYS;
  ALTER EVENT TRIGGER pgmcp_watch_generation_drop ENABLE ALWAYS;
END
$do$;
