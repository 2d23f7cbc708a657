-- pgmcp state schema, version 4.
-- description: audit rows keep the id of the HTTP request they were made for
--
-- Additive only: a nullable column, so an instance that predates it keeps writing audit rows
-- (its INSERT names its columns) while a newer instance has already migrated; see
-- docs/operations.md, "Upgrades and migrations".
ALTER TABLE pgmcp.audit ADD COLUMN IF NOT EXISTS request_id text;
