-- pgmcp handler registry, version 1: tools, resources and prompts written as PL/pgSQL bodies,
-- a JSON-RPC dispatcher callable from psql, and the exchange log.
-- Applied by `pgmcp install` in one transaction; every statement is idempotent, so re-running
-- this file by hand is harmless too.

CREATE SCHEMA IF NOT EXISTS mcp;
COMMENT ON SCHEMA mcp IS 'pgmcp handler registry (see docs/sql-tools.md)';

CREATE TABLE IF NOT EXISTS mcp.schema_version (
  version integer PRIMARY KEY,
  description text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);

-- What every generated handler receives. `arguments` holds the tool or prompt arguments, or the
-- variables of a resource template; `context` the caller's identity {user_id, tenant_id, claims}.
DO $do$
BEGIN
  IF to_regtype('mcp.request') IS NULL THEN
    CREATE TYPE mcp.request AS (arguments jsonb, uri text, context jsonb, request_id text);
  END IF;
END
$do$;

CREATE TABLE IF NOT EXISTS mcp.handler (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  type text NOT NULL CHECK (type IN ('tool', 'resource', 'prompt')),
  -- 49 characters at most: the generated function name must fit PostgreSQL's 63 bytes.
  name text NOT NULL CHECK (name ~ '^[a-zA-Z][a-zA-Z0-9_.-]{0,48}$'),
  description text,
  input_schema jsonb CHECK (
    input_schema IS NULL
    OR (jsonb_typeof(input_schema) = 'object' AND (input_schema ? 'type' OR input_schema ? 'properties'))
  ),
  output_schema jsonb CHECK (
    output_schema IS NULL
    OR (jsonb_typeof(output_schema) = 'object' AND (output_schema ? 'type' OR output_schema ? 'properties'))
  ),
  uri_template text,
  mime_type text,
  arguments jsonb CHECK (arguments IS NULL OR jsonb_typeof(arguments) = 'array'),
  tags text[] NOT NULL DEFAULT '{}',
  requires_auth boolean NOT NULL DEFAULT true,
  function_name text NOT NULL,
  function_oid oid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (type, name),
  CHECK (type <> 'tool' OR input_schema IS NOT NULL),
  CHECK (type <> 'resource' OR uri_template IS NOT NULL),
  CHECK (type = 'resource' OR (uri_template IS NULL AND mime_type IS NULL)),
  CHECK (type = 'prompt' OR arguments IS NULL)
);
COMMENT ON TABLE mcp.handler IS
  'pgmcp registry handlers; write with mcp.create_or_replace_handler(), never by hand';

-- One row per request pgmcp answered through the registry. Never tokens; arguments only when
-- pgmcp is configured to log them.
CREATE TABLE IF NOT EXISTS mcp.exchange (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  user_id text,
  tenant_id text,
  database text,
  method text NOT NULL,
  name text,
  duration_ms double precision NOT NULL CHECK (duration_ms >= 0),
  outcome text NOT NULL CHECK (outcome IN ('ok', 'error')),
  error_code text,
  arguments jsonb
);
CREATE INDEX IF NOT EXISTS exchange_created_at_idx ON mcp.exchange (created_at);

-- ---------------------------------------------------------------------------------------------
-- Response builders. Each returns a JSON-RPC 2.0 envelope {jsonrpc, id, result | error}.

CREATE OR REPLACE FUNCTION mcp.text(text text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT jsonb_build_object('type', 'text', 'text', coalesce($1, '')) $$;

CREATE OR REPLACE FUNCTION mcp.success(result jsonb, request_id text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('jsonrpc', '2.0', 'id', $2, 'result', coalesce($1, '{}'::jsonb))
$$;

CREATE OR REPLACE FUNCTION mcp.error(code integer, message text, request_id text DEFAULT NULL, data jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object(
    'jsonrpc', '2.0',
    'id', $3,
    'error', jsonb_build_object('code', $1, 'message', coalesce($2, 'Error'))
      || CASE WHEN $4 IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('data', $4) END)
$$;

-- mcp.error(code, message, data) for bodies that have no request id at hand.
CREATE OR REPLACE FUNCTION mcp.error(code integer, message text, data jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$ SELECT mcp.error($1, $2, NULL::text, $3) $$;

CREATE OR REPLACE FUNCTION mcp.tool_result(
  content jsonb, request_id text, is_error boolean DEFAULT false, structured_content jsonb DEFAULT NULL
) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT mcp.success(
    jsonb_build_object('content', coalesce($1, '[]'::jsonb))
      || CASE WHEN coalesce($3, false) THEN '{"isError": true}'::jsonb ELSE '{}'::jsonb END
      || CASE WHEN $4 IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('structuredContent', $4) END,
    $2)
$$;

CREATE OR REPLACE FUNCTION mcp.resource_result(contents jsonb, request_id text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT mcp.success(jsonb_build_object('contents', coalesce($1, '[]'::jsonb)), $2)
$$;

CREATE OR REPLACE FUNCTION mcp.prompt_result(messages jsonb, request_id text, description text DEFAULT NULL)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT mcp.success(
    jsonb_build_object('messages', coalesce($1, '[]'::jsonb))
      || CASE WHEN $3 IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('description', $3) END,
    $2)
$$;

-- Convenience wrappers: JSON-RPC internal error (-32603).
CREATE OR REPLACE FUNCTION mcp.tool_error(message text, request_id text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT mcp.error(-32603, $1, $2) $$;
CREATE OR REPLACE FUNCTION mcp.resource_error(message text, request_id text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT mcp.error(-32603, $1, $2) $$;
CREATE OR REPLACE FUNCTION mcp.prompt_error(message text, request_id text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT mcp.error(-32603, $1, $2) $$;

-- ---------------------------------------------------------------------------------------------
-- URI templates: RFC 6570 level 1 ({name}: one path segment) plus {+name} (the rest, '/' too).

CREATE OR REPLACE FUNCTION mcp.percent_decode(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  bytes bytea := ''::bytea;
  i integer := 1;
  n integer := length(value);
  c text;
BEGIN
  IF position('%' IN value) = 0 THEN
    RETURN value;
  END IF;
  WHILE i <= n LOOP
    c := substr(value, i, 1);
    IF c = '%' AND substr(value, i + 1, 2) ~ '^[0-9A-Fa-f]{2}$' THEN
      bytes := bytes || decode(substr(value, i + 1, 2), 'hex');
      i := i + 3;
    ELSE
      bytes := bytes || convert_to(c, 'UTF8');
      i := i + 1;
    END IF;
  END LOOP;
  RETURN convert_from(bytes, 'UTF8');
EXCEPTION WHEN others THEN
  RETURN value; -- not valid UTF-8 once decoded: keep the text as sent
END
$$;

-- The variables of `uri` under `template` as a jsonb object, or NULL when it does not match.
CREATE OR REPLACE FUNCTION mcp.match_uri_template(template text, uri text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  pattern text := '^';
  names text[] := '{}';
  rest text := template;
  m text[];
  pos integer;
  values text[];
  result jsonb := '{}'::jsonb;
BEGIN
  LOOP
    m := regexp_match(rest, '\{(\+?)([A-Za-z0-9_]+)\}');
    EXIT WHEN m IS NULL;
    pos := position('{' || m[1] || m[2] || '}' IN rest);
    pattern := pattern || regexp_replace(substr(rest, 1, pos - 1), '([.^$*+?()\[\]{}|\\-])', '\\\1', 'g');
    pattern := pattern || CASE WHEN m[1] = '+' THEN '(.+)' ELSE '([^/?#]+)' END;
    names := names || m[2];
    rest := substr(rest, pos + length(m[1]) + length(m[2]) + 2);
  END LOOP;
  pattern := pattern || regexp_replace(rest, '([.^$*+?()\[\]{}|\\-])', '\\\1', 'g') || '$';
  values := regexp_match(uri, pattern);
  IF values IS NULL THEN
    RETURN NULL;
  END IF;
  FOR pos IN 1 .. coalesce(array_length(names, 1), 0) LOOP
    result := result || jsonb_build_object(names[pos], mcp.percent_decode(values[pos]));
  END LOOP;
  RETURN result;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Registration.

CREATE OR REPLACE FUNCTION mcp.handler_function_name(type text, name text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  -- 'handler_resource_' + 49 characters exceeds 63 bytes: long names get a stable hash suffix.
  SELECT CASE
    WHEN octet_length('handler_' || $1 || '_' || $2) <= 63 THEN 'handler_' || $1 || '_' || $2
    ELSE left('handler_' || $1 || '_' || $2, 54) || '_' || left(md5($1 || ':' || $2), 8)
  END
$$;

CREATE OR REPLACE FUNCTION mcp.create_or_replace_handler(metadata jsonb, body text) RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
  allowed constant text[] := ARRAY['id', 'type', 'name', 'description', 'inputSchema', 'outputSchema',
    'uriTemplate', 'mimeType', 'arguments', 'tags', 'requiresAuth'];
  v_type text := metadata->>'type';
  v_name text := metadata->>'name';
  v_key text;
  v_function text;
  v_old_function text;
  v_oid oid;
  v_tags text[] := '{}';
  v_id uuid;
  v_arg jsonb;
BEGIN
  IF metadata IS NULL OR jsonb_typeof(metadata) <> 'object' THEN
    RAISE EXCEPTION 'handler metadata must be a JSON object' USING ERRCODE = '22023';
  END IF;
  FOR v_key IN SELECT jsonb_object_keys(metadata) LOOP
    IF NOT v_key = ANY (allowed) THEN
      RAISE EXCEPTION 'unknown handler metadata key "%"', v_key
        USING ERRCODE = '22023', HINT = 'Allowed keys: ' || array_to_string(allowed, ', ');
    END IF;
  END LOOP;
  IF v_type IS NULL OR v_type NOT IN ('tool', 'resource', 'prompt') THEN
    RAISE EXCEPTION 'handler type must be tool, resource or prompt (got %)', coalesce(v_type, 'nothing')
      USING ERRCODE = '22023';
  END IF;
  IF v_name IS NULL OR v_name !~ '^[a-zA-Z][a-zA-Z0-9_.-]{0,48}$' THEN
    RAISE EXCEPTION 'handler name % is invalid', coalesce(quote_literal(v_name), 'missing')
      USING ERRCODE = '22023', HINT = 'A letter, then up to 48 letters, digits, _ . or -';
  END IF;
  IF body IS NULL OR btrim(body) = '' THEN
    RAISE EXCEPTION 'handler % has no body', v_name USING ERRCODE = '22023';
  END IF;
  IF v_type = 'tool' AND (metadata->'inputSchema' IS NULL OR jsonb_typeof(metadata->'inputSchema') <> 'object'
      OR NOT (metadata->'inputSchema' ? 'type' OR metadata->'inputSchema' ? 'properties')) THEN
    RAISE EXCEPTION 'tool % needs an inputSchema: a JSON Schema object with "type" or "properties"', v_name
      USING ERRCODE = '22023', HINT = 'e.g. {"type": "object", "properties": {}}';
  END IF;
  IF metadata ? 'outputSchema' AND v_type <> 'tool' THEN
    RAISE EXCEPTION 'only tools have an outputSchema' USING ERRCODE = '22023';
  END IF;
  IF v_type = 'resource' THEN
    IF metadata->>'uriTemplate' IS NULL THEN
      RAISE EXCEPTION 'resource % needs a uriTemplate', v_name USING ERRCODE = '22023';
    END IF;
    IF metadata->>'uriTemplate' !~ '^[^{}\s]*(\{\+?[A-Za-z0-9_]+\}[^{}\s]*)*$' THEN
      RAISE EXCEPTION 'uriTemplate % is not supported', metadata->>'uriTemplate'
        USING ERRCODE = '22023', HINT = 'Use {name} for one path segment and {+name} for the rest of the URI';
    END IF;
  ELSIF metadata ? 'uriTemplate' OR metadata ? 'mimeType' THEN
    RAISE EXCEPTION 'only resources have a uriTemplate or mimeType' USING ERRCODE = '22023';
  END IF;
  IF metadata ? 'arguments' THEN
    IF v_type <> 'prompt' THEN
      RAISE EXCEPTION 'only prompts have arguments (tools declare an inputSchema)' USING ERRCODE = '22023';
    END IF;
    IF jsonb_typeof(metadata->'arguments') <> 'array' THEN
      RAISE EXCEPTION 'prompt arguments must be an array' USING ERRCODE = '22023';
    END IF;
    FOR v_arg IN SELECT jsonb_array_elements(metadata->'arguments') LOOP
      IF jsonb_typeof(v_arg) <> 'object' OR jsonb_typeof(v_arg->'name') IS DISTINCT FROM 'string' THEN
        RAISE EXCEPTION 'each prompt argument needs a "name": %', v_arg USING ERRCODE = '22023';
      END IF;
    END LOOP;
  END IF;
  IF metadata ? 'tags' THEN
    IF jsonb_typeof(metadata->'tags') <> 'array'
        OR EXISTS (SELECT 1 FROM jsonb_array_elements(metadata->'tags') t WHERE jsonb_typeof(t) <> 'string') THEN
      RAISE EXCEPTION 'tags must be an array of strings' USING ERRCODE = '22023';
    END IF;
    SELECT coalesce(array_agg(t ORDER BY t), '{}') INTO v_tags
      FROM (SELECT DISTINCT jsonb_array_elements_text(metadata->'tags') AS t) s;
  END IF;
  IF metadata ? 'requiresAuth' AND jsonb_typeof(metadata->'requiresAuth') <> 'boolean' THEN
    RAISE EXCEPTION 'requiresAuth must be true or false' USING ERRCODE = '22023';
  END IF;

  v_function := mcp.handler_function_name(v_type, v_name);
  -- Names go through %I, the body through %L: metadata cannot inject SQL. The body itself is
  -- trusted DBA-written PL/pgSQL, compiled (and syntax-checked) right here.
  EXECUTE format('CREATE OR REPLACE FUNCTION mcp.%I(request mcp.request) RETURNS jsonb LANGUAGE plpgsql AS %L',
    v_function, body);
  EXECUTE format('COMMENT ON FUNCTION mcp.%I(mcp.request) IS %L', v_function,
    format('pgmcp %s handler %s (generated by mcp.create_or_replace_handler)', v_type, v_name));
  v_oid := to_regprocedure(format('mcp.%I(mcp.request)', v_function))::oid;

  SELECT function_name INTO v_old_function FROM mcp.handler h WHERE h.type = v_type AND h.name = v_name;
  INSERT INTO mcp.handler AS h (id, type, name, description, input_schema, output_schema, uri_template,
      mime_type, arguments, tags, requires_auth, function_name, function_oid)
  VALUES (coalesce((metadata->>'id')::uuid, gen_random_uuid()), v_type, v_name, metadata->>'description',
      metadata->'inputSchema', metadata->'outputSchema', metadata->>'uriTemplate', metadata->>'mimeType',
      metadata->'arguments', v_tags, coalesce((metadata->>'requiresAuth')::boolean, true), v_function, v_oid)
  ON CONFLICT (type, name) DO UPDATE SET
    description = excluded.description, input_schema = excluded.input_schema,
    output_schema = excluded.output_schema, uri_template = excluded.uri_template,
    mime_type = excluded.mime_type, arguments = excluded.arguments, tags = excluded.tags,
    requires_auth = excluded.requires_auth, function_name = excluded.function_name,
    function_oid = excluded.function_oid, updated_at = now()
  RETURNING h.id INTO v_id;
  IF v_old_function IS NOT NULL AND v_old_function <> v_function THEN
    EXECUTE format('DROP FUNCTION IF EXISTS mcp.%I(mcp.request)', v_old_function);
  END IF;
  PERFORM pg_notify('pgmcp_registry', json_build_object('type', v_type, 'name', v_name, 'op', 'upsert')::text);
  RETURN v_id;
END
$$;

CREATE OR REPLACE FUNCTION mcp.drop_handler(type text, name text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
  v_function text;
BEGIN
  DELETE FROM mcp.handler h WHERE h.type = drop_handler.type AND h.name = drop_handler.name
    RETURNING h.function_name INTO v_function;
  IF v_function IS NULL THEN
    RETURN false;
  END IF;
  EXECUTE format('DROP FUNCTION IF EXISTS mcp.%I(mcp.request)', v_function);
  PERFORM pg_notify('pgmcp_registry', json_build_object('type', type, 'name', name, 'op', 'drop')::text);
  RETURN true;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Server identity, handshake, discovery.

CREATE OR REPLACE FUNCTION mcp.server_info() RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'name', coalesce(nullif(current_setting('mcp.server_name', true), ''), current_database()),
    'version', coalesce(nullif(current_setting('mcp.server_version', true), ''), '1.0.0'))
$$;

CREATE OR REPLACE FUNCTION mcp.server_capabilities() RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT '{"tools": {}, "resources": {}, "prompts": {}}'::jsonb $$;

CREATE OR REPLACE FUNCTION mcp.protocol_versions() RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$ SELECT ARRAY['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] $$;

CREATE OR REPLACE FUNCTION mcp.initialize(params jsonb, request_id text) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
  proposed text;
BEGIN
  IF jsonb_typeof(params->'protocolVersion') IS DISTINCT FROM 'string' THEN
    RETURN mcp.error(-32602, 'initialize needs params.protocolVersion (a string)', request_id,
      jsonb_build_object('supported', to_jsonb(mcp.protocol_versions())));
  END IF;
  proposed := params->>'protocolVersion';
  RETURN mcp.success(jsonb_build_object(
    -- A version we do not know (newer, typically) negotiates down to our best.
    'protocolVersion', CASE WHEN proposed = ANY (mcp.protocol_versions()) THEN proposed
                            ELSE (mcp.protocol_versions())[1] END,
    'serverInfo', mcp.server_info(),
    'capabilities', mcp.server_capabilities()), request_id);
END
$$;

CREATE OR REPLACE FUNCTION mcp.ping(request_id text) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT mcp.success('{}'::jsonb, $1) $$;

-- True when the transaction carries a caller (auth.user_id set and not empty).
CREATE OR REPLACE FUNCTION mcp.authenticated() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT nullif(current_setting('auth.user_id', true), '') IS NOT NULL $$;

CREATE OR REPLACE FUNCTION mcp.list_tools(tags text[] DEFAULT NULL) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('tools', coalesce(jsonb_agg(
    jsonb_strip_nulls(jsonb_build_object(
      'name', h.name, 'description', h.description, 'inputSchema', h.input_schema,
      'outputSchema', h.output_schema))
    || CASE WHEN cardinality(h.tags) > 0 THEN jsonb_build_object('_meta', jsonb_build_object('tags', h.tags))
            ELSE '{}'::jsonb END
    ORDER BY h.name), '[]'::jsonb))
  FROM mcp.handler h
  WHERE h.type = 'tool'
    AND (NOT h.requires_auth OR mcp.authenticated())
    AND ($1 IS NULL OR cardinality($1) = 0 OR h.tags && $1)
$$;

CREATE OR REPLACE FUNCTION mcp.list_resources() RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('resources', coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'uri', h.uri_template, 'name', h.name, 'description', h.description, 'mimeType', h.mime_type))
    ORDER BY h.uri_template), '[]'::jsonb))
  FROM mcp.handler h
  WHERE h.type = 'resource' AND position('{' IN h.uri_template) = 0
    AND (NOT h.requires_auth OR mcp.authenticated())
$$;

CREATE OR REPLACE FUNCTION mcp.list_resource_templates() RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('resourceTemplates', coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'uriTemplate', h.uri_template, 'name', h.name, 'description', h.description, 'mimeType', h.mime_type))
    ORDER BY h.uri_template), '[]'::jsonb))
  FROM mcp.handler h
  WHERE h.type = 'resource' AND position('{' IN h.uri_template) > 0
    AND (NOT h.requires_auth OR mcp.authenticated())
$$;

CREATE OR REPLACE FUNCTION mcp.list_prompts() RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('prompts', coalesce(jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
      'name', h.name, 'description', h.description, 'arguments', h.arguments))
    ORDER BY h.name), '[]'::jsonb))
  FROM mcp.handler h
  WHERE h.type = 'prompt' AND (NOT h.requires_auth OR mcp.authenticated())
$$;

-- ---------------------------------------------------------------------------------------------
-- Invocation. Each runs the generated function in a subtransaction: a failing body leaves
-- nothing behind and becomes an error answer, never an aborted transaction.

-- Identity from the context, transaction-locally (as pgmcp's own transactions set it).
CREATE OR REPLACE FUNCTION mcp.apply_context(context jsonb) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF context IS NULL THEN
    RETURN; -- keep whatever the transaction already carries
  END IF;
  PERFORM set_config('auth.user_id', coalesce(context->>'user_id', ''), true);
  PERFORM set_config('auth.tenant_id', coalesce(context->>'tenant_id', ''), true);
  PERFORM set_config('auth.claims', coalesce(context->'claims', '{}'::jsonb)::text, true);
END
$$;

-- The context a handler sees: the one given, else the transaction's identity.
CREATE OR REPLACE FUNCTION mcp.current_context() RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'user_id', nullif(current_setting('auth.user_id', true), ''),
    'tenant_id', nullif(current_setting('auth.tenant_id', true), ''),
    'claims', coalesce(nullif(current_setting('auth.claims', true), '')::jsonb, '{}'::jsonb))
$$;

CREATE OR REPLACE FUNCTION mcp.run_handler(h mcp.handler, arguments jsonb, uri text, request_id text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  response jsonb;
BEGIN
  EXECUTE format('SELECT mcp.%I($1)', h.function_name) INTO response
    USING ROW(coalesce(arguments, '{}'::jsonb), uri, mcp.current_context(), request_id)::mcp.request;
  IF response IS NULL OR jsonb_typeof(response) <> 'object' OR NOT (response ? 'result' OR response ? 'error') THEN
    RETURN mcp.error(-32603, format('%s handler %s returned no response envelope', h.type, h.name), request_id);
  END IF;
  RETURN response || jsonb_build_object('id', request_id);
END
$$;

CREATE OR REPLACE FUNCTION mcp.call_tool(name text, arguments jsonb, context jsonb, request_id text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  h mcp.handler;
  missing text;
BEGIN
  PERFORM mcp.apply_context(context);
  SELECT * INTO h FROM mcp.handler x WHERE x.type = 'tool' AND x.name = call_tool.name;
  IF NOT FOUND THEN
    RETURN mcp.error(-32602, 'Unknown tool: ' || coalesce(name, '(none)'), request_id);
  END IF;
  IF h.requires_auth AND NOT mcp.authenticated() THEN
    RETURN mcp.error(-32001, 'Authentication required: user_id missing from context', request_id);
  END IF;
  IF arguments IS NOT NULL AND jsonb_typeof(arguments) <> 'object' THEN
    RETURN mcp.tool_result(jsonb_build_array(mcp.text('Invalid arguments for ' || name || ': arguments must be an object.')),
      request_id, true);
  END IF;
  SELECT string_agg(r, ', ') INTO missing
    FROM jsonb_array_elements_text(coalesce(h.input_schema->'required', '[]')) r
    WHERE NOT coalesce(arguments, '{}'::jsonb) ? r;
  IF missing IS NOT NULL THEN
    RETURN mcp.tool_result(jsonb_build_array(mcp.text(format('Invalid arguments for %s: missing required %s.', name, missing))),
      request_id, true);
  END IF;
  BEGIN
    RETURN mcp.run_handler(h, arguments, NULL, request_id);
  EXCEPTION WHEN others THEN
    -- A failing tool is a tool result with isError, so the model can read what went wrong.
    RETURN mcp.tool_result(jsonb_build_array(mcp.text(format('ERROR %s: %s', SQLSTATE, SQLERRM))), request_id, true);
  END;
END
$$;

CREATE OR REPLACE FUNCTION mcp.read_resource(uri text, context jsonb, request_id text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  h mcp.handler;
  vars jsonb;
BEGIN
  PERFORM mcp.apply_context(context);
  -- A concrete resource first, then the templates (longest first: the most specific wins).
  SELECT * INTO h FROM mcp.handler x WHERE x.type = 'resource' AND x.uri_template = read_resource.uri
    AND position('{' IN x.uri_template) = 0;
  IF FOUND THEN
    vars := '{}'::jsonb;
  ELSE
    SELECT x.* INTO h
      FROM mcp.handler x
      WHERE x.type = 'resource' AND position('{' IN x.uri_template) > 0
        AND mcp.match_uri_template(x.uri_template, read_resource.uri) IS NOT NULL
      ORDER BY length(x.uri_template) DESC, x.name
      LIMIT 1;
    IF FOUND THEN
      vars := mcp.match_uri_template(h.uri_template, uri);
    END IF;
    IF vars IS NULL THEN
      RETURN mcp.error(-32002, 'Resource not found: ' || coalesce(uri, '(none)'), request_id,
        jsonb_build_object('uri', uri));
    END IF;
  END IF;
  IF h.requires_auth AND NOT mcp.authenticated() THEN
    RETURN mcp.error(-32001, 'Authentication required: user_id missing from context', request_id);
  END IF;
  BEGIN
    RETURN mcp.run_handler(h, vars, uri, request_id);
  EXCEPTION WHEN others THEN
    RETURN mcp.error(-32603, format('ERROR %s: %s', SQLSTATE, SQLERRM), request_id, jsonb_build_object('uri', uri));
  END;
END
$$;

CREATE OR REPLACE FUNCTION mcp.get_prompt(name text, arguments jsonb, context jsonb, request_id text)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  h mcp.handler;
  missing text;
BEGIN
  PERFORM mcp.apply_context(context);
  SELECT * INTO h FROM mcp.handler x WHERE x.type = 'prompt' AND x.name = get_prompt.name;
  IF NOT FOUND THEN
    RETURN mcp.error(-32602, 'Unknown prompt: ' || coalesce(name, '(none)'), request_id);
  END IF;
  IF h.requires_auth AND NOT mcp.authenticated() THEN
    RETURN mcp.error(-32001, 'Authentication required: user_id missing from context', request_id);
  END IF;
  SELECT string_agg(a->>'name', ', ') INTO missing
    FROM jsonb_array_elements(coalesce(h.arguments, '[]')) a
    WHERE (a->>'required')::boolean IS TRUE AND NOT coalesce(arguments, '{}'::jsonb) ? (a->>'name');
  IF missing IS NOT NULL THEN
    RETURN mcp.error(-32602, format('Missing required argument for prompt %s: %s', name, missing), request_id);
  END IF;
  BEGIN
    RETURN mcp.run_handler(h, arguments, NULL, request_id);
  EXCEPTION WHEN others THEN
    RETURN mcp.error(-32603, format('ERROR %s: %s', SQLSTATE, SQLERRM), request_id);
  END;
END
$$;

-- ---------------------------------------------------------------------------------------------
-- The JSON-RPC dispatcher, for psql and for tests: one request in, one envelope (or NULL for a
-- notification) out. The envelope's id is the request's id, verbatim (string or number).

CREATE OR REPLACE FUNCTION mcp.handle_request(request jsonb, context jsonb DEFAULT NULL)
RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  method text;
  params jsonb;
  rid text;
  tags text[];
  response jsonb;
BEGIN
  IF request IS NULL OR jsonb_typeof(request) <> 'object' OR request->>'jsonrpc' IS DISTINCT FROM '2.0'
      OR jsonb_typeof(request->'method') IS DISTINCT FROM 'string' THEN
    RETURN jsonb_build_object('jsonrpc', '2.0',
      'id', CASE WHEN jsonb_typeof(request) = 'object' THEN coalesce(request->'id', 'null') ELSE 'null' END,
      'error', jsonb_build_object('code', -32600, 'message', 'Invalid Request: expected a JSON-RPC 2.0 object with a method'));
  END IF;
  method := request->>'method';
  IF method LIKE 'notifications/%' OR NOT request ? 'id' THEN
    RETURN NULL; -- a notification gets no answer
  END IF;
  params := coalesce(request->'params', '{}'::jsonb);
  rid := request->>'id';
  PERFORM mcp.apply_context(context);

  response := CASE method
    WHEN 'initialize' THEN mcp.initialize(params, rid)
    WHEN 'ping' THEN mcp.ping(rid)
    WHEN 'tools/list' THEN NULL
    WHEN 'tools/call' THEN mcp.call_tool(params->>'name', params->'arguments', NULL, rid)
    WHEN 'resources/list' THEN mcp.success(mcp.list_resources(), rid)
    WHEN 'resources/templates/list' THEN mcp.success(mcp.list_resource_templates(), rid)
    WHEN 'resources/read' THEN mcp.read_resource(params->>'uri', NULL, rid)
    WHEN 'prompts/list' THEN mcp.success(mcp.list_prompts(), rid)
    WHEN 'prompts/get' THEN mcp.get_prompt(params->>'name', params->'arguments', NULL, rid)
    ELSE mcp.error(-32601, 'Method not found: ' || method, rid)
  END;
  IF method = 'tools/list' THEN
    IF jsonb_typeof(params->'tags') = 'array' THEN
      SELECT array_agg(t) INTO tags FROM jsonb_array_elements_text(params->'tags') t;
    END IF;
    response := mcp.success(mcp.list_tools(tags), rid);
  END IF;
  RETURN response || jsonb_build_object('id', request->'id');
END
$$;

-- ---------------------------------------------------------------------------------------------
-- Exchange log retention, and the grants a separate pgmcp role needs.

CREATE OR REPLACE FUNCTION mcp.prune_exchange(older_than interval) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  removed bigint;
BEGIN
  IF older_than IS NULL OR older_than < interval '0' THEN
    RAISE EXCEPTION 'prune_exchange needs a positive interval' USING ERRCODE = '22023';
  END IF;
  DELETE FROM mcp.exchange WHERE created_at < now() - older_than;
  GET DIAGNOSTICS removed = ROW_COUNT;
  RETURN removed;
END
$$;

-- What the role pgmcp connects as needs: read the registry, run the generated functions,
-- append to the exchange log. Nothing to write handlers with.
CREATE OR REPLACE FUNCTION mcp.grant_runtime(role_name name) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('GRANT USAGE ON SCHEMA mcp TO %I', role_name);
  EXECUTE format('GRANT SELECT ON mcp.handler, mcp.schema_version TO %I', role_name);
  EXECUTE format('GRANT INSERT ON mcp.exchange TO %I', role_name);
END
$$;

-- Anyone who can call the dispatcher can claim any identity through `context`: keep it to the
-- installing role (and whom it grants), like the registration functions.
REVOKE EXECUTE ON FUNCTION mcp.handle_request(jsonb, jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mcp.call_tool(text, jsonb, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mcp.read_resource(text, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mcp.get_prompt(text, jsonb, jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mcp.apply_context(jsonb) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mcp.create_or_replace_handler(jsonb, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mcp.drop_handler(text, text) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mcp.prune_exchange(interval) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION mcp.grant_runtime(name) FROM PUBLIC;

INSERT INTO mcp.schema_version (version, description)
VALUES (1, 'handler registry, builders, dispatcher, exchange log')
ON CONFLICT (version) DO NOTHING;
