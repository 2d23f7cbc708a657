-- pgmi's SQL interface (schema api) as thin wrappers over pgmcp's handler registry (schema mcp).
-- Applied by `pgmcp install --names pgmi` after the registry, in the same transaction. Every
-- statement is idempotent. Names, argument lists and types follow pgmi's documentation so its
-- examples run as written; see docs/compatibility.md for where they differ from the registry's.

DO $do$
BEGIN
  -- The installer checks this first with a clearer message; this guards a run by hand.
  IF to_regnamespace('api') IS NOT NULL
     AND coalesce(obj_description(to_regnamespace('api'), 'pg_namespace'), '') NOT LIKE 'pgmcp pgmi interface%' THEN
    RAISE EXCEPTION 'schema api exists and was not created by pgmcp; not touching it'
      USING ERRCODE = '42P06', HINT = 'An existing pgmi deployment is served as it is (registry.mode: pgmi).';
  END IF;
END
$do$;

CREATE SCHEMA IF NOT EXISTS api;
COMMENT ON SCHEMA api IS 'pgmcp pgmi interface: pgmi''s api.mcp_* functions over the mcp registry (docs/compatibility.md)';

DO $do$
BEGIN
  IF to_regtype('api.mcp_request') IS NULL THEN
    CREATE TYPE api.mcp_request AS (arguments jsonb, uri text, context jsonb, request_id text);
  END IF;
  IF to_regtype('api.mcp_response') IS NULL THEN
    CREATE TYPE api.mcp_response AS (envelope jsonb);
  END IF;
END
$do$;

-- ---------------------------------------------------------------------------------------------
-- Builders: the registry's, with the envelope wrapped in api.mcp_response.

CREATE OR REPLACE FUNCTION api.mcp_text(p_text text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT mcp.text($1) $$;

CREATE OR REPLACE FUNCTION api.mcp_success(result jsonb, request_id text) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$ SELECT ROW(mcp.success($1, $2))::api.mcp_response $$;

CREATE OR REPLACE FUNCTION api.mcp_error(code integer, message text, request_id text, data jsonb DEFAULT NULL)
RETURNS api.mcp_response LANGUAGE sql IMMUTABLE AS $$ SELECT ROW(mcp.error($1, $2, $3, $4))::api.mcp_response $$;

CREATE OR REPLACE FUNCTION api.mcp_tool_result(
  content jsonb, request_id text, is_error boolean DEFAULT false, structured_content jsonb DEFAULT NULL
) RETURNS api.mcp_response LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW(mcp.tool_result($1, $2, $3, $4))::api.mcp_response
$$;

CREATE OR REPLACE FUNCTION api.mcp_resource_result(contents jsonb, request_id text) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$ SELECT ROW(mcp.resource_result($1, $2))::api.mcp_response $$;

CREATE OR REPLACE FUNCTION api.mcp_prompt_result(messages jsonb, request_id text) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$ SELECT ROW(mcp.prompt_result($1, $2))::api.mcp_response $$;

CREATE OR REPLACE FUNCTION api.mcp_tool_error(message text, request_id text) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$ SELECT ROW(mcp.tool_error($1, $2))::api.mcp_response $$;
CREATE OR REPLACE FUNCTION api.mcp_resource_error(message text, request_id text) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$ SELECT ROW(mcp.resource_error($1, $2))::api.mcp_response $$;
CREATE OR REPLACE FUNCTION api.mcp_prompt_error(message text, request_id text) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$ SELECT ROW(mcp.prompt_error($1, $2))::api.mcp_response $$;

-- ---------------------------------------------------------------------------------------------
-- Registration. pgmi's handler function takes api.mcp_request and returns api.mcp_response; the
-- registry row points at a generated mcp function that calls it, so pgmcp serves it like any
-- registry handler. Where pgmi's own examples break its stated rules (an id that is not a uuid,
-- an empty inputSchema) the example is accepted: a stable uuid is derived from the id, and a
-- tool's schema is always at least {"type": "object"}.

CREATE OR REPLACE FUNCTION api.handler_function_name(type text, name text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN octet_length('mcp_' || $1 || '_' || $2) <= 63 THEN 'mcp_' || $1 || '_' || $2
    ELSE left('mcp_' || $1 || '_' || $2, 54) || '_' || left(md5($1 || ':' || $2), 8)
  END
$$;

CREATE OR REPLACE FUNCTION api.create_or_replace_mcp_handler(metadata jsonb, body text) RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
  v_meta jsonb := metadata;
  v_type text := metadata->>'type';
  v_name text := metadata->>'name';
  v_function text;
  v_schema jsonb;
  v_id uuid;
BEGIN
  IF metadata IS NULL OR jsonb_typeof(metadata) <> 'object' THEN
    RAISE EXCEPTION 'handler metadata must be a JSON object' USING ERRCODE = '22023';
  END IF;
  IF v_type IS NULL OR v_type NOT IN ('tool', 'resource', 'prompt') THEN
    RAISE EXCEPTION 'handler type must be tool, resource or prompt (got %)', coalesce(v_type, 'nothing')
      USING ERRCODE = '22023';
  END IF;
  IF v_name IS NULL OR v_name !~ '^[a-zA-Z][a-zA-Z0-9_.-]{0,48}$' THEN
    RAISE EXCEPTION 'handler name % is invalid', coalesce(quote_literal(v_name), 'missing')
      USING ERRCODE = '22023', HINT = 'A letter, then up to 48 letters, digits, _ . or -';
  END IF;
  IF v_meta ? 'id' AND v_meta->>'id' !~* '^[0-9a-f]{8}-?([0-9a-f]{4}-?){3}[0-9a-f]{12}$' THEN
    -- Stable per handler: examples reuse one placeholder id ('uuid-here') for several handlers.
    v_meta := jsonb_set(v_meta, '{id}',
      to_jsonb(md5(concat_ws(':', 'pgmi', v_meta->>'id', v_type, v_name))::uuid::text));
  END IF;
  IF v_type = 'tool' THEN
    v_schema := v_meta->'inputSchema';
    IF v_schema IS NULL OR jsonb_typeof(v_schema) <> 'object' THEN
      v_schema := '{"type": "object"}'::jsonb;
    ELSIF NOT v_schema ? 'type' THEN
      v_schema := '{"type": "object"}'::jsonb || v_schema;
    END IF;
    v_meta := jsonb_set(v_meta, '{inputSchema}', v_schema);
  END IF;
  IF body IS NULL OR btrim(body) = '' THEN
    RAISE EXCEPTION 'handler % has no body', v_name USING ERRCODE = '22023';
  END IF;

  v_function := api.handler_function_name(v_type, v_name);
  EXECUTE format('CREATE OR REPLACE FUNCTION api.%I(request api.mcp_request) RETURNS api.mcp_response LANGUAGE plpgsql AS %L',
    v_function, body);
  EXECUTE format('COMMENT ON FUNCTION api.%I(api.mcp_request) IS %L', v_function,
    format('pgmi %s handler %s (generated by api.create_or_replace_mcp_handler)', v_type, v_name));
  v_id := mcp.create_or_replace_handler(v_meta, format(
    'BEGIN RETURN (api.%I(ROW((request).arguments, (request).uri, (request).context, (request).request_id)::api.mcp_request)).envelope; END',
    v_function));
  RETURN v_id;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Server identity, handshake, discovery, invocation. pgmi's request ids are jsonb (a string or
-- a number, echoed verbatim); the text forms accept the literal its examples pass ('test-1').

CREATE OR REPLACE FUNCTION api.mcp_server_info() RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT mcp.server_info() $$;

CREATE OR REPLACE FUNCTION api.mcp_server_capabilities() RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT mcp.server_capabilities() $$;

CREATE OR REPLACE FUNCTION api.with_id(envelope jsonb, request_id jsonb) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$
  SELECT ROW(CASE WHEN $1 IS NULL THEN NULL ELSE $1 || jsonb_build_object('id', coalesce($2, 'null'::jsonb)) END)::api.mcp_response
$$;

CREATE OR REPLACE FUNCTION api.mcp_initialize(params jsonb, request_id jsonb) RETURNS api.mcp_response
LANGUAGE sql STABLE AS $$ SELECT api.with_id(mcp.initialize($1, $2 #>> '{}'), $2) $$;
CREATE OR REPLACE FUNCTION api.mcp_initialize(params jsonb, request_id text) RETURNS api.mcp_response
LANGUAGE sql STABLE AS $$ SELECT ROW(mcp.initialize($1, $2))::api.mcp_response $$;

CREATE OR REPLACE FUNCTION api.mcp_ping(request_id jsonb) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$ SELECT api.with_id(mcp.ping($1 #>> '{}'), $1) $$;
CREATE OR REPLACE FUNCTION api.mcp_ping(request_id text) RETURNS api.mcp_response
LANGUAGE sql IMMUTABLE AS $$ SELECT ROW(mcp.ping($1))::api.mcp_response $$;

CREATE OR REPLACE FUNCTION api.mcp_list_tools(p_tags text[] DEFAULT NULL) RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT mcp.list_tools($1) $$;
CREATE OR REPLACE FUNCTION api.mcp_list_resources() RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT mcp.list_resources() $$;
CREATE OR REPLACE FUNCTION api.mcp_list_resource_templates() RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT mcp.list_resource_templates() $$;
CREATE OR REPLACE FUNCTION api.mcp_list_prompts() RETURNS jsonb
LANGUAGE sql STABLE AS $$ SELECT mcp.list_prompts() $$;

CREATE OR REPLACE FUNCTION api.mcp_call_tool(name text, args jsonb, context jsonb, request_id jsonb)
RETURNS api.mcp_response LANGUAGE sql AS $$ SELECT api.with_id(mcp.call_tool($1, $2, $3, $4 #>> '{}'), $4) $$;
CREATE OR REPLACE FUNCTION api.mcp_call_tool(name text, args jsonb, context jsonb, request_id text)
RETURNS api.mcp_response LANGUAGE sql AS $$ SELECT ROW(mcp.call_tool($1, $2, $3, $4))::api.mcp_response $$;

CREATE OR REPLACE FUNCTION api.mcp_read_resource(uri text, context jsonb, request_id jsonb)
RETURNS api.mcp_response LANGUAGE sql AS $$ SELECT api.with_id(mcp.read_resource($1, $2, $3 #>> '{}'), $3) $$;
CREATE OR REPLACE FUNCTION api.mcp_read_resource(uri text, context jsonb, request_id text)
RETURNS api.mcp_response LANGUAGE sql AS $$ SELECT ROW(mcp.read_resource($1, $2, $3))::api.mcp_response $$;

CREATE OR REPLACE FUNCTION api.mcp_get_prompt(name text, args jsonb, context jsonb, request_id jsonb)
RETURNS api.mcp_response LANGUAGE sql AS $$ SELECT api.with_id(mcp.get_prompt($1, $2, $3, $4 #>> '{}'), $4) $$;
CREATE OR REPLACE FUNCTION api.mcp_get_prompt(name text, args jsonb, context jsonb, request_id text)
RETURNS api.mcp_response LANGUAGE sql AS $$ SELECT ROW(mcp.get_prompt($1, $2, $3, $4))::api.mcp_response $$;

-- NULL envelope for a notification: nothing goes on the wire.
CREATE OR REPLACE FUNCTION api.mcp_handle_request(request jsonb, context jsonb DEFAULT NULL)
RETURNS api.mcp_response LANGUAGE sql AS $$ SELECT ROW(mcp.handle_request($1, $2))::api.mcp_response $$;

-- What the role pgmcp serves as needs to run pgmi handlers (besides mcp.grant_runtime).
CREATE OR REPLACE FUNCTION api.grant_runtime(role_name name) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM mcp.grant_runtime(role_name);
  EXECUTE format('GRANT USAGE ON SCHEMA api TO %I', role_name);
  EXECUTE format('GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA api TO %I', role_name);
  EXECUTE format('REVOKE EXECUTE ON FUNCTION api.mcp_handle_request(jsonb, jsonb), '
    'api.mcp_call_tool(text, jsonb, jsonb, jsonb), api.mcp_call_tool(text, jsonb, jsonb, text), '
    'api.mcp_read_resource(text, jsonb, jsonb), api.mcp_read_resource(text, jsonb, text), '
    'api.mcp_get_prompt(text, jsonb, jsonb, jsonb), api.mcp_get_prompt(text, jsonb, jsonb, text), '
    'api.create_or_replace_mcp_handler(jsonb, text), api.grant_runtime(name) FROM %I', role_name);
END
$$;

-- As in the registry: whoever calls these can claim any identity through `context`.
REVOKE EXECUTE ON FUNCTION api.mcp_handle_request(jsonb, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION api.mcp_call_tool(text, jsonb, jsonb, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION api.mcp_call_tool(text, jsonb, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION api.mcp_read_resource(text, jsonb, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION api.mcp_read_resource(text, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION api.mcp_get_prompt(text, jsonb, jsonb, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION api.mcp_get_prompt(text, jsonb, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION api.create_or_replace_mcp_handler(jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION api.grant_runtime(name) FROM PUBLIC;

-- ---------------------------------------------------------------------------------------------
-- pgmi's troubleshooting views: the routes (handlers), the handler table and the exchange log.

CREATE OR REPLACE VIEW api.mcp_route AS
  SELECT h.id, h.type AS mcp_type, h.name, h.description, h.uri_template, h.mime_type, h.tags,
         h.requires_auth, h.created_at, h.updated_at
  FROM mcp.handler h;

CREATE OR REPLACE VIEW api.handler AS
  SELECT h.id, 'mcp_' || h.type AS handler_type, h.name, h.function_name AS handler_function,
         h.requires_auth, h.created_at, h.updated_at
  FROM mcp.handler h;

CREATE OR REPLACE VIEW api.mcp_exchange AS
  SELECT e.id, e.created_at, e.user_id, e.tenant_id, e.method, e.name, e.duration_ms, e.outcome,
         e.error_code, e.arguments
  FROM mcp.exchange e;
