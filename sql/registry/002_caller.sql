-- The caller, as handlers and row-level-security policies should read it. pgmcp sets
-- auth.user_id / auth.tenant_id / auth.claims transaction-locally on every call, to '' for an
-- anonymous caller: on a pooled connection a placeholder setting, once created, reads back as
-- '' rather than NULL, so `current_setting('auth.user_id', true) IS NULL` cannot tell an
-- anonymous caller apart. These functions can.

-- The caller's id, or NULL when the caller is anonymous.
CREATE OR REPLACE FUNCTION mcp.caller_id() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$ SELECT nullif(current_setting('auth.user_id', true), '') $$;

-- The caller's tenant, or NULL.
CREATE OR REPLACE FUNCTION mcp.caller_tenant_id() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT nullif(current_setting('auth.tenant_id', true), '') $$;

-- The caller's claims (an empty object when there are none).
CREATE OR REPLACE FUNCTION mcp.caller_claims() RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT coalesce(nullif(current_setting('auth.claims', true), '')::jsonb, '{}'::jsonb) $$;

GRANT EXECUTE ON FUNCTION mcp.caller_id(), mcp.caller_tenant_id(), mcp.caller_claims() TO PUBLIC;

INSERT INTO mcp.schema_version (version, description)
VALUES (2, 'caller functions: mcp.caller_id(), mcp.caller_tenant_id(), mcp.caller_claims()')
ON CONFLICT (version) DO NOTHING;
