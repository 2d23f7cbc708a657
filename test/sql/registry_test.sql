-- Registry tests: run after the scripts in sql/registry/, inside a transaction rolled back at
-- the end. Every check RAISEs on failure. From psql:
--   psql -c 'BEGIN' -f sql/registry/001_init.sql -f test/sql/registry_test.sql
BEGIN;

CREATE FUNCTION pg_temp.expect(actual jsonb, expected jsonb, what text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  IF actual IS DISTINCT FROM expected THEN
    RAISE EXCEPTION 'FAILED %: expected %, got %', what, expected, actual;
  END IF;
END $$;

CREATE FUNCTION pg_temp.expect_failure(statement text, sqlstate text, what text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    EXECUTE statement;
  EXCEPTION WHEN others THEN
    IF SQLSTATE <> sqlstate THEN
      RAISE EXCEPTION 'FAILED %: expected SQLSTATE %, got % (%)', what, sqlstate, SQLSTATE, SQLERRM;
    END IF;
    RETURN;
  END;
  RAISE EXCEPTION 'FAILED %: the statement succeeded', what;
END $$;

-- Builders --------------------------------------------------------------------------------------
SELECT pg_temp.expect(mcp.text('hi'), '{"type":"text","text":"hi"}', 'mcp.text');
SELECT pg_temp.expect(mcp.tool_result(jsonb_build_array(mcp.text('a')), 'r1'),
  '{"jsonrpc":"2.0","id":"r1","result":{"content":[{"type":"text","text":"a"}]}}', 'tool_result');
SELECT pg_temp.expect(mcp.tool_result('[]', 'r1', true, '{"n":1}')->'result',
  '{"content":[],"isError":true,"structuredContent":{"n":1}}', 'tool_result with error + structured');
SELECT pg_temp.expect(mcp.resource_result('[{"uri":"x://a","text":"t"}]', 'r2')->'result',
  '{"contents":[{"uri":"x://a","text":"t"}]}', 'resource_result');
SELECT pg_temp.expect(mcp.prompt_result('[]', 'r3', 'd')->'result', '{"messages":[],"description":"d"}', 'prompt_result');
SELECT pg_temp.expect(mcp.error(-32603, 'boom', 'r4'),
  '{"jsonrpc":"2.0","id":"r4","error":{"code":-32603,"message":"boom"}}', 'error');
SELECT pg_temp.expect(mcp.error(-32602, 'bad', '{"k":1}'::jsonb)->'error',
  '{"code":-32602,"message":"bad","data":{"k":1}}', 'error with data');
SELECT pg_temp.expect(mcp.tool_error('x', 'r5')->'error'->'code', '-32603', 'tool_error');
SELECT pg_temp.expect(mcp.match_uri_template('db://{schema}/{table}', 'db://public/my%20t'),
  '{"schema":"public","table":"my t"}', 'template variables, percent-decoded');
SELECT pg_temp.expect(mcp.match_uri_template('db://{schema}/{table}', 'db://public/a/b'), NULL, 'one segment per {var}');
SELECT pg_temp.expect(mcp.match_uri_template('file:///{+path}', 'file:///a/b.c'), '{"path":"a/b.c"}', '{+var}');
SELECT pg_temp.expect(mcp.match_uri_template('x://a.b/{v}', 'x://aXb/1'), NULL, 'literal dots are escaped');

-- Registration validation ----------------------------------------------------------------------
SELECT pg_temp.expect_failure($$SELECT mcp.create_or_replace_handler('{"type":"tool","name":"1bad","inputSchema":{"type":"object"}}', 'BEGIN RETURN NULL; END')$$, '22023', 'name must start with a letter');
SELECT pg_temp.expect_failure(format('SELECT mcp.create_or_replace_handler(%L, %L)',
  jsonb_build_object('type', 'tool', 'name', 'a' || repeat('b', 49), 'inputSchema', '{"type":"object"}'::jsonb), 'BEGIN RETURN NULL; END'),
  '22023', 'name of 50 characters');
SELECT pg_temp.expect_failure($$SELECT mcp.create_or_replace_handler('{"type":"tool","name":"t_x","inputSchema":{}}', 'BEGIN RETURN NULL; END')$$, '22023', 'empty inputSchema');
SELECT pg_temp.expect_failure($$SELECT mcp.create_or_replace_handler('{"type":"tool","name":"t_x"}', 'BEGIN RETURN NULL; END')$$, '22023', 'tool without inputSchema');
SELECT pg_temp.expect_failure($$SELECT mcp.create_or_replace_handler('{"type":"widget","name":"w"}', 'BEGIN RETURN NULL; END')$$, '22023', 'unknown type');
SELECT pg_temp.expect_failure($$SELECT mcp.create_or_replace_handler('{"type":"resource","name":"r"}', 'BEGIN RETURN NULL; END')$$, '22023', 'resource without uriTemplate');
SELECT pg_temp.expect_failure($$SELECT mcp.create_or_replace_handler('{"type":"tool","name":"t","inputSchema":{"type":"object"},"inputschema":{}}', 'BEGIN RETURN NULL; END')$$, '22023', 'unknown metadata key');
SELECT pg_temp.expect_failure($$SELECT mcp.create_or_replace_handler('{"type":"tool","name":"t","inputSchema":{"type":"object"}}', 'BEGIN RETURN NULL END')$$, '42601', 'body syntax error surfaces at registration');
-- A name with quotes or semicolons never reaches the generated DDL.
SELECT pg_temp.expect_failure($$SELECT mcp.create_or_replace_handler('{"type":"tool","name":"x\"; DROP TABLE mcp.handler; --","inputSchema":{"type":"object"}}', 'BEGIN RETURN NULL; END')$$, '22023', 'injection through the name');
SELECT pg_temp.expect_failure($$INSERT INTO mcp.handler (type, name, input_schema, function_name, function_oid) VALUES ('tool', 'direct', '{}', 'f', 0)$$, '23514', 'table CHECK on input_schema');

-- Handlers ------------------------------------------------------------------------------------
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"echo","description":"Echo","requiresAuth":false,"tags":["demo","text"],
    "inputSchema":{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}}',
  $body$
BEGIN
  RETURN mcp.tool_result(jsonb_build_array(mcp.text((request).arguments->>'msg')), (request).request_id,
    false, jsonb_build_object('user', current_setting('auth.user_id', true), 'ctx', (request).context->>'user_id'));
END
  $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"secret","inputSchema":{"type":"object"},"tags":["admin"]}',
  $body$ BEGIN RETURN mcp.tool_result(jsonb_build_array(mcp.text('for ' || current_setting('auth.user_id'))), (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"fails","requiresAuth":false,"inputSchema":{"type":"object"}}',
  $body$ BEGIN RAISE EXCEPTION 'no luck'; END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"resource","name":"table_doc","uriTemplate":"doc://{schema}/{table}","mimeType":"text/plain","requiresAuth":false}',
  $body$ BEGIN RETURN mcp.resource_result(jsonb_build_array(jsonb_build_object('uri', (request).uri,
    'text', ((request).arguments->>'schema') || '.' || ((request).arguments->>'table'))), (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"resource","name":"about","uriTemplate":"doc://about","requiresAuth":false}',
  $body$ BEGIN RETURN mcp.resource_result(jsonb_build_array(jsonb_build_object('uri', (request).uri, 'text', 'about')), (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"prompt","name":"review","requiresAuth":false,
    "arguments":[{"name":"topic","required":true},{"name":"tone","required":false}]}',
  $body$ BEGIN RETURN mcp.prompt_result(jsonb_build_array(jsonb_build_object('role','user','content',
    mcp.text('Review ' || ((request).arguments->>'topic')))), (request).request_id); END $body$);

-- Re-registering keeps the id and replaces the function.
DO $$
DECLARE a uuid; b uuid;
BEGIN
  SELECT id INTO a FROM mcp.handler WHERE type = 'tool' AND name = 'echo';
  b := mcp.create_or_replace_handler(
    '{"type":"tool","name":"echo","description":"Echo v2","requiresAuth":false,"tags":["demo","text"],
      "inputSchema":{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}}',
    $body$
BEGIN
  RETURN mcp.tool_result(jsonb_build_array(mcp.text((request).arguments->>'msg')), (request).request_id,
    false, jsonb_build_object('user', current_setting('auth.user_id', true), 'ctx', (request).context->>'user_id'));
END
    $body$);
  IF a IS DISTINCT FROM b THEN RAISE EXCEPTION 'FAILED re-register: id changed'; END IF;
  IF (SELECT count(*) FROM mcp.handler WHERE name = 'echo') <> 1 THEN RAISE EXCEPTION 'FAILED re-register: duplicated'; END IF;
  IF to_regprocedure('mcp.handler_tool_echo(mcp.request)') IS NULL THEN RAISE EXCEPTION 'FAILED: function missing'; END IF;
END $$;

-- handle_request --------------------------------------------------------------------------------
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}')->'result'->'protocolVersion',
  '"2024-11-05"', 'initialize keeps a supported version');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}')->'result'->'protocolVersion',
  '"2025-11-25"', 'initialize negotiates an unknown version down');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":7,"method":"ping"}'), '{"jsonrpc":"2.0","id":7,"result":{}}', 'ping keeps a numeric id');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","method":"notifications/initialized"}'), NULL, 'notification answers NULL');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"n","method":"no/such"}')->'error'->'code', '-32601', 'unknown method');
SELECT pg_temp.expect(mcp.handle_request('{"id":"n","method":"ping"}')->'error'->'code', '-32600', 'not JSON-RPC 2.0');

-- Anonymous: requires_auth handlers are hidden and refused.
SELECT pg_temp.expect(
  (SELECT jsonb_agg(t->'name') FROM jsonb_array_elements(mcp.handle_request('{"jsonrpc":"2.0","id":"l","method":"tools/list"}', '{}')->'result'->'tools') t),
  '["echo","fails"]', 'tools/list hides requires_auth tools from anonymous callers');
SELECT pg_temp.expect(
  (SELECT jsonb_agg(t->'name') FROM jsonb_array_elements(mcp.handle_request('{"jsonrpc":"2.0","id":"l","method":"tools/list"}', '{"user_id":"u1"}')->'result'->'tools') t),
  '["echo","fails","secret"]', 'tools/list shows them to a signed-in caller');
SELECT pg_temp.expect(
  (SELECT jsonb_agg(t->'name') FROM jsonb_array_elements(mcp.handle_request('{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"tags":["admin"]}}', '{"user_id":"u1"}')->'result'->'tools') t),
  '["secret"]', 'tools/list tag filter');
SELECT pg_temp.expect(
  mcp.handle_request('{"jsonrpc":"2.0","id":"l","method":"tools/list"}', '{}')->'result'->'tools'->0->'_meta',
  '{"tags":["demo","text"]}', 'tags surface as _meta.tags');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"secret","arguments":{}}}', '{}')->'error'->'code',
  '-32001', 'requires_auth refused without user_id');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"secret","arguments":{}}}', '{"user_id":"alice"}')->'result'->'content'->0->'text',
  '"for alice"', 'identity reaches auth.user_id');

-- tools/call
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"msg":"hi"}}}', '{"user_id":"bob"}'),
  '{"jsonrpc":"2.0","id":"c","result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"user":"bob","ctx":"bob"}}}', 'tools/call');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"nope"}}')->'error'->'code', '-32602', 'unknown tool');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{}}}')->'result'->'isError', 'true', 'missing required argument is a tool error');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"fails"}}')->'result',
  '{"content":[{"type":"text","text":"ERROR P0001: no luck"}],"isError":true}', 'a raising body is an isError result');

-- resources
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"r","method":"resources/list"}')->'result',
  '{"resources":[{"uri":"doc://about","name":"about"}]}', 'resources/list: concrete only');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"r","method":"resources/templates/list"}')->'result',
  '{"resourceTemplates":[{"uriTemplate":"doc://{schema}/{table}","name":"table_doc","mimeType":"text/plain"}]}', 'resources/templates/list');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"doc://public/users"}}')->'result',
  '{"contents":[{"uri":"doc://public/users","text":"public.users"}]}', 'resources/read through a template');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"doc://about"}}')->'result'->'contents'->0->'text',
  '"about"', 'resources/read of a concrete resource');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"nope://x"}}')->'error',
  '{"code":-32002,"message":"Resource not found: nope://x","data":{"uri":"nope://x"}}', 'unknown resource');

-- prompts
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"p","method":"prompts/list"}')->'result'->'prompts'->0->'arguments'->0->'name',
  '"topic"', 'prompts/list');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"p","method":"prompts/get","params":{"name":"review","arguments":{"topic":"indexes"}}}')->'result',
  '{"messages":[{"role":"user","content":{"type":"text","text":"Review indexes"}}]}', 'prompts/get');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"p","method":"prompts/get","params":{"name":"review"}}')->'error'->'code', '-32602', 'missing prompt argument');
SELECT pg_temp.expect(mcp.handle_request('{"jsonrpc":"2.0","id":"p","method":"prompts/get","params":{"name":"nope"}}')->'error'->'code', '-32602', 'unknown prompt');

-- drop_handler, exchange retention -----------------------------------------------------------------
DO $$
BEGIN
  IF NOT mcp.drop_handler('tool', 'fails') THEN RAISE EXCEPTION 'FAILED drop_handler'; END IF;
  IF mcp.drop_handler('tool', 'fails') THEN RAISE EXCEPTION 'FAILED drop_handler twice'; END IF;
  IF to_regprocedure('mcp.handler_tool_fails(mcp.request)') IS NOT NULL THEN RAISE EXCEPTION 'FAILED: function left behind'; END IF;
  INSERT INTO mcp.exchange (created_at, method, duration_ms, outcome) VALUES
    (now() - interval '40 days', 'tools/call', 1, 'ok'), (now(), 'tools/call', 2, 'error');
  IF mcp.prune_exchange(interval '30 days') <> 1 THEN RAISE EXCEPTION 'FAILED prune_exchange count'; END IF;
  IF (SELECT count(*) FROM mcp.exchange) <> 1 THEN RAISE EXCEPTION 'FAILED prune_exchange kept the wrong rows'; END IF;
END $$;

ROLLBACK;
