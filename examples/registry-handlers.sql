-- Runnable example of the SQL handler registry. After `pgmcp install --database URL`:
--   psql URL -f examples/registry-handlers.sql
-- Everything runs in a transaction that is rolled back at the end; replace the last line with
-- COMMIT to keep the handlers (then restart pgmcp to serve them).
BEGIN;

SELECT mcp.create_or_replace_handler(
  jsonb_build_object(
    'type', 'tool',
    'name', 'table_sizes',
    'description', 'The largest tables of a schema with their on-disk size.',
    'inputSchema', jsonb_build_object(
      'type', 'object',
      'properties', jsonb_build_object('schema', jsonb_build_object('type', 'string')),
      'required', jsonb_build_array('schema')),
    'tags', jsonb_build_array('catalog'),
    'requiresAuth', false),
  $body$
DECLARE
  rows jsonb;
BEGIN
  SELECT coalesce(jsonb_agg(jsonb_build_object('table', c.relname,
           'bytes', pg_total_relation_size(c.oid)) ORDER BY pg_total_relation_size(c.oid) DESC), '[]')
    INTO rows
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = (request).arguments->>'schema' AND c.relkind IN ('r', 'p');
  RETURN mcp.tool_result(jsonb_build_array(mcp.text(rows::text)), (request).request_id,
    false, jsonb_build_object('tables', rows));
END
  $body$);

SELECT mcp.create_or_replace_handler(
  jsonb_build_object(
    'type', 'resource',
    'name', 'table_columns',
    'description', 'Columns of one table.',
    'uriTemplate', 'columns://{schema}/{table}',
    'mimeType', 'application/json',
    'requiresAuth', false),
  $body$
BEGIN
  RETURN mcp.resource_result(jsonb_build_array(jsonb_build_object(
    'uri', (request).uri,
    'mimeType', 'application/json',
    'text', (SELECT coalesce(jsonb_agg(jsonb_build_object('name', column_name, 'type', data_type)
                             ORDER BY ordinal_position), '[]')::text
               FROM information_schema.columns
              WHERE table_schema = (request).arguments->>'schema'
                AND table_name = (request).arguments->>'table'))), (request).request_id);
END
  $body$);

SELECT mcp.create_or_replace_handler(
  jsonb_build_object(
    'type', 'prompt',
    'name', 'explain_my_data',
    'description', 'Ask for an explanation of a table, as the signed-in user.',
    'arguments', jsonb_build_array(
      jsonb_build_object('name', 'table', 'description', 'schema.table', 'required', true))),
  $body$
BEGIN
  RETURN mcp.prompt_result(jsonb_build_array(jsonb_build_object('role', 'user', 'content',
    mcp.text(format('I am %s. Explain what %s holds and how it relates to the other tables.',
      current_setting('auth.user_id'), (request).arguments->>'table')))), (request).request_id);
END
  $body$);

-- Talk to them the way an MCP client would.
SELECT mcp.handle_request('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}');
SELECT mcp.handle_request('{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"tags":["catalog"]}}');
SELECT mcp.handle_request('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"table_sizes","arguments":{"schema":"mcp"}}}');
SELECT mcp.handle_request('{"jsonrpc":"2.0","id":4,"method":"resources/templates/list"}');
SELECT mcp.handle_request('{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"columns://mcp/handler"}}');
-- The prompt requires a signed-in caller: without context it answers -32001, with one it works.
SELECT mcp.handle_request('{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"explain_my_data","arguments":{"table":"mcp.handler"}}}', '{}');
SELECT mcp.handle_request('{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"explain_my_data","arguments":{"table":"mcp.handler"}}}',
  '{"user_id":"alice","tenant_id":"acme"}');

ROLLBACK;
