// What each example block of the seeds is, in the order seed-blocks.ts finds them, and how
// seed-examples.test.ts proves it works. Blocks that are not runnable on their own say why.
import type pg from 'pg';
import { expect } from 'vitest';

export interface JsonRpcBody {
  jsonrpc: string;
  id: unknown;
  result?: Record<string, any>;
  error?: { code: number; message: string };
}
export type CurlCheck = (body: JsonRpcBody) => void;

export type Verdict =
  /** Run as written; then an optional check on the same session. */
  | { kind: 'run'; check?: (client: pg.Client) => Promise<void> }
  /** A statement fragment, run inside the block it belongs in (built by `wrap`). */
  | { kind: 'wrap'; reason: string; wrap: (text: string) => string }
  /** Function signatures: each must exist in schema api with these argument and return types. */
  | { kind: 'signatures' }
  /** CREATE TYPE shown for reference: `pgmcp install` made it; its attributes must match. */
  | { kind: 'declaration' }
  /** Not runnable on its own (part of a function body, elided with …); the reason says what. */
  | { kind: 'fragment'; reason: string }
  /** Names something of the reader's (a token, a schema, a role) that the test cannot guess. */
  | { kind: 'placeholder'; reason: string }
  /** A curl command run with the real curl; `fix` repairs a typo in the seed. */
  | { kind: 'curl'; check: CurlCheck; fix?: [string, string] };

const run = (check?: (client: pg.Client) => Promise<void>): Verdict => ({ kind: 'run', check });
const fragment = (reason: string): Verdict => ({ kind: 'fragment', reason });
const SIGNATURES: Verdict = { kind: 'signatures' };
const DECLARATION: Verdict = { kind: 'declaration' };
const curl = (check: CurlCheck, fix?: [string, string]): Verdict =>
  fix ? { kind: 'curl', check, fix } : { kind: 'curl', check };
const CREATE_HANDLER = 'sql SELECT api.create_or_replace_mcp_handler(';

const initialized =
  (version: string): CurlCheck =>
  (body) => {
    expect(body.error).toBeUndefined();
    expect(body.result?.['protocolVersion']).toBe(version);
    expect(body.result?.['capabilities']).toHaveProperty('tools');
  };
const toolText =
  (pattern: RegExp): CurlCheck =>
  (body) => {
    expect(body.error).toBeUndefined();
    expect(body.result?.['isError']).toBeFalsy();
    expect(body.result?.['content'][0].text).toMatch(pattern);
  };

export const SEED_VERDICTS: Record<string, Array<[string, Verdict]>> = {
  '000': [
    ['curl curl -X POST http://localhost:8080/mcp \\', curl(initialized('2024-11-05'))],
    [
      'curl curl -X POST http://localhost:8080/mcp \\',
      curl((body) => {
        const tools = body.result?.['tools'] as Array<{ name: string; inputSchema: any }>;
        // Listed to anonymous callers too (calling it is what needs a caller), unless
        // auth.filterToolsByRole hides what a caller cannot run: docs/compatibility.md.
        expect(tools.map((t) => t.name)).toEqual(
          expect.arrayContaining(['test_tool', 'database_info', 'query_database']),
        );
        for (const t of tools) expect(t.inputSchema.type, t.name).toBe('object');
      }),
    ],
    [
      'curl curl -X POST http://localhost:8080/mcp \\',
      // database_info keeps pgmi's default requiresAuth: true, and the example sends no identity.
      curl((body) => expect(body.error?.code).toBe(-32001)),
    ],
    ['sql -- Tool with outputSchema and tags, emitting structuredContent', run()],
    ['sql -- Request type (passed to your handler)', DECLARATION],
    [CREATE_HANDLER, run()],
    [CREATE_HANDLER, run()],
    [CREATE_HANDLER, run()],
    ['sql -- Tool result (content array)', SIGNATURES],
    ['sql -- Generic JSON-RPC error', SIGNATURES],
    [
      'sql -- Text content block',
      {
        kind: 'wrap',
        reason: 'an expression with its value in a comment: selected and compared',
        wrap: (text) =>
          `DO $do$ BEGIN IF (SELECT ${text}\n) <> '{"type": "text", "text": "Hello, world!"}'::jsonb THEN RAISE EXCEPTION 'mcp_text differs'; END IF; END $do$`,
      },
    ],
    [
      'sql -- Gateway extracts from HTTP headers and passes as context:',
      fragment(
        'the request JSON is elided with "..." and the DECLARE section belongs in a handler',
      ),
    ],
    [CREATE_HANDLER, fragment('the metadata and the body are elided with "..."')],
    ['sql -- Test initialize', run()],
    ['sql DO $$', run()],
    [
      "sql SET mcp.server_name = 'my-database-server';",
      run(async (client) => {
        const { rows } = await client.query('SELECT api.mcp_server_info() AS info');
        expect(rows[0].info).toEqual({ name: 'my-database-server', version: '2.0.0' });
      }),
    ],
    ['sql SET client_min_messages = DEBUG;', run()],
    ['sql SELECT * FROM api.mcp_exchange ORDER BY created_at DESC LIMIT 10;', run()],
  ],
  '001': [
    [
      'curl curl -X POST https://localhost:8080/mcp/v1 \\',
      { kind: 'placeholder', reason: 'the JSON-RPC body is elided as {...}' },
    ],
    [
      'sql BEGIN;',
      fragment('how pgEdge wraps a query in a read-only transaction; the query is a placeholder'),
    ],
    ['curl curl -X POST http://localhost:8080/mcp/v1 \\', curl(initialized('2024-11-05'))],
    [
      'curl curl -X POST http://localhost:8080/mcp/v1 \\',
      curl(
        (body) => {
          const tools = body.result?.['tools'] as Array<{ name: string }>;
          expect(tools.map((t) => t.name)).toEqual(
            expect.arrayContaining(['query_database', 'get_schema_info']),
          );
        },
        // The seed's quoting makes curl drop Content-Type and read "application/json" as a URL.
        ['-H "Content-Type": "application/json"', '-H "Content-Type: application/json"'],
      ),
    ],
  ],
  '002': [
    ['curl curl -X POST http://localhost:8080/mcp/v1 \\', curl(toolText(/users/))],
    [
      'sql GRANT USAGE ON SCHEMA restricted TO your_user;',
      { kind: 'placeholder', reason: 'names the reader’s own schema and role' },
    ],
    ['curl curl -X POST http://localhost:8080/mcp/v1 \\', curl(toolText(/Alice/))],
  ],
  '003': [
    ['sql -- Returns server identity (configurable via session settings)', SIGNATURES],
    ['sql -- Handles MCP handshake (MUST be called first by clients)', SIGNATURES],
    ['sql -- Responds to liveness checks', SIGNATURES],
    ['sql -- Main entry point - routes all MCP requests', SIGNATURES],
    ['sql SELECT (api.mcp_handle_request(', run()],
    ['sql CREATE TYPE api.mcp_request AS (', DECLARATION],
    ['sql CREATE TYPE api.mcp_response AS (', DECLARATION],
    [CREATE_HANDLER, run()],
    [CREATE_HANDLER, run()],
    [CREATE_HANDLER, run()],
    ['sql api.mcp_call_tool(', SIGNATURES],
    ['sql api.mcp_read_resource(', SIGNATURES],
    ['sql api.mcp_get_prompt(', SIGNATURES],
    ['sql api.mcp_list_tools() RETURNS jsonb      -- {"tools": [...]}', SIGNATURES],
    [
      'sql -- Gateway extracts identity from context:',
      fragment("the inside of pgmi's own gateway function (p_context, v_handler are its locals)"),
    ],
    ['sql DECLARE', fragment('a DECLARE section and body that belong in a handler')],
    ['sql -- Tool success (content array in result)', SIGNATURES],
    ['sql -- Generic JSON-RPC error (use for protocol errors)', SIGNATURES],
    ['sql api.mcp_text(p_text text) RETURNS jsonb', SIGNATURES],
    ['sql RETURN api.mcp_tool_result(', fragment('a RETURN statement of a handler body')],
    [
      "sql RETURN api.mcp_tool_error('Error: ' || SQLERRM, (request).request_id);",
      fragment('RETURN statements of a handler body'),
    ],
    [
      'sql -- ✅ CORRECT: MCP error response (JSON-RPC 2.0 error object)',
      fragment('RETURN statements of a handler body'),
    ],
    ['sql BEGIN', fragment("the exception block of pgmi's own gateway function")],
    ['sql -- ✅ CORRECT: Preserve request_id', fragment('RETURN statements of a handler body')],
    ['sql DO $$', run()],
    ['sql -- Full round-trip test', run()],
    [
      'sql -- Test auth enforcement (missing context)',
      {
        kind: 'wrap',
        reason:
          'statements of a DO block testing a protected_tool; run in one, after registering it',
        wrap: (text) =>
          `SELECT api.create_or_replace_mcp_handler(jsonb_build_object('type', 'tool', 'name', 'protected_tool', ` +
          `'description', 'needs a caller', 'inputSchema', '{}'::jsonb), ` +
          `$b$BEGIN RETURN api.mcp_tool_result(jsonb_build_array(api.mcp_text('ok')), (request).request_id); END$b$);\n` +
          `DO $do$\nDECLARE v_response api.mcp_response;\nBEGIN\n${text}\nEND\n$do$;`,
      },
    ],
    ['sql -- WRONG', fragment('counter-examples inside a handler body')],
    ['sql -- WRONG', fragment('counter-examples inside a handler body')],
    [
      'sql -- WRONG (also wrong type structure)',
      fragment('counter-examples inside a handler body'),
    ],
  ],
  '004': [],
};

const stripComments = (text: string): string =>
  text
    .split('\n')
    .map((l) => l.replace(/--.*$/, ''))
    .join(' ');

/** Each `api.name(arg type, …) RETURNS type` of the block exists with those types. */
export async function checkSignatures(
  client: pg.Client,
  text: string,
  where: string,
): Promise<void> {
  const found = [
    ...stripComments(text).matchAll(/api\.(\w+)\s*\(([^)]*)\)\s*RETURNS\s+([\w.]+(?:\[\])?)/g),
  ];
  expect(found.length, `${where}: no signature found`).toBeGreaterThan(0);
  for (const [, name, args, returns] of found) {
    const types = args!
      .split(',')
      .map((a) => a.replace(/\bDEFAULT\b.*$/i, '').trim())
      .filter(Boolean)
      .map((a) => a.split(/\s+/).slice(1).join(' ') || a);
    const { rows } = await client.query<{ args: string[]; defaults: number; returns: string }>(
      `SELECT p.proargtypes::regtype[]::text[] AS args, p.pronargdefaults AS defaults,
              p.prorettype::regtype::text AS returns
         FROM pg_proc p WHERE p.pronamespace = 'api'::regnamespace AND p.proname = $1`,
      [name],
    );
    const match = rows.some(
      (r) =>
        r.returns === returns &&
        r.args.length >= types.length &&
        r.args.length - r.defaults <= types.length &&
        types.every((t, i) => r.args[i] === t),
    );
    expect(
      match,
      `${where}: api.${name}(${types.join(', ')}) RETURNS ${returns} (have: ${JSON.stringify(rows)})`,
    ).toBe(true);
  }
}

/** Each `CREATE TYPE api.x AS (…)` of the block matches the installed type, attribute by attribute. */
export async function checkDeclaration(
  client: pg.Client,
  text: string,
  where: string,
): Promise<void> {
  const found = [...stripComments(text).matchAll(/CREATE TYPE (api\.\w+) AS \(([^;]*)\);/g)];
  expect(found.length, `${where}: no CREATE TYPE found`).toBeGreaterThan(0);
  for (const [, name, body] of found) {
    const declared = body!
      .split(',')
      .map((a) => a.trim().split(/\s+/))
      .map(([attribute, type]) => [attribute, type]);
    const { rows } = await client.query<{ attname: string; type: string }>(
      `SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type
         FROM pg_attribute a JOIN pg_type t ON t.typrelid = a.attrelid
        WHERE t.oid = to_regtype($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [name],
    );
    expect(
      rows.map((r) => [r.attname, r.type]),
      `${where}: ${name}`,
    ).toEqual(declared);
  }
}
