-- Row-level security with the caller's identity: each tenant sees only its own rows through
-- pgmcp (docs/sql-tools.md, "Row-level security"). Run with
--   psql -d yourdb -f examples/rls-tenants.sql
-- as the table's owner, then GRANT the serving role as at the end and start pgmcp as that role.
--
-- pgmcp sets auth.tenant_id (and auth.user_id, auth.claims) transaction-locally from the
-- authenticated caller before each call; the model cannot supply it. RLS does not apply to
-- superusers or to roles with BYPASSRLS: pgmcp must connect as an ordinary role.
CREATE SCHEMA IF NOT EXISTS tenants;

CREATE TABLE IF NOT EXISTS tenants.notes (
  id int4 GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id text NOT NULL,
  body text NOT NULL
);

ALTER TABLE tenants.notes ENABLE ROW LEVEL SECURITY;
-- FORCE: the table's owner is held to the policy too (only superusers and BYPASSRLS escape).
ALTER TABLE tenants.notes FORCE ROW LEVEL SECURITY;

-- No tenant (an anonymous call sets auth.tenant_id to ''), no rows. The second argument of
-- current_setting (missing_ok) makes a session that never set it see nothing instead of failing.
DROP POLICY IF EXISTS tenant_isolation ON tenants.notes;
CREATE POLICY tenant_isolation ON tenants.notes
  USING (tenant_id = current_setting('auth.tenant_id', true))
  WITH CHECK (tenant_id = current_setting('auth.tenant_id', true));

INSERT INTO tenants.notes (tenant_id, body)
SELECT * FROM (VALUES ('acme', 'acme: renew the anvil contract'),
                      ('acme', 'acme: order more rockets'),
                      ('globex', 'globex: quarterly review')) AS v(tenant_id, body)
WHERE NOT EXISTS (SELECT 1 FROM tenants.notes);

-- SECURITY INVOKER (the default): the function reads as the calling role, so the policy applies.
-- A SECURITY DEFINER function owned by the table's owner would still be filtered (FORCE), but
-- keep it INVOKER: the policy, not the function, is the wall.
CREATE OR REPLACE FUNCTION tenants.list_notes()
RETURNS TABLE (id int4, body text)
LANGUAGE sql STABLE AS $$
  SELECT n.id, n.body FROM tenants.notes n ORDER BY n.id
$$;
COMMENT ON FUNCTION tenants.list_notes() IS
  E'@mcp The notes of the calling tenant.\n@authorize';

-- The serving role (here PUBLIC; name pgmcp's role instead in a real database).
GRANT USAGE ON SCHEMA tenants TO PUBLIC;
GRANT SELECT ON tenants.notes TO PUBLIC;
