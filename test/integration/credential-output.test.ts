// The output screen on what the database itself answers with (issue 16 item 5): an @mcp
// routine and registry handlers (tool, resource, resource template, prompt) that read
// pg_authid through a SECURITY DEFINER function of the admin's — the DBA's mistake pgmcp must
// survive — come back with the hashes withheld and a note saying how many; so do errors that
// carry a hash; ordinary answers come back unchanged. Real PostgreSQL, a database of its own
// (the registry lives in schema mcp), served as the non-superuser role.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../src/core/content.js';
import { isAppError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { WITHHELD } from '../../src/tools/credentials.js';
import {
  applyRegistryScripts,
  loadRegistryHandlers,
  pgRunner,
  type LoadedHandlers,
} from '../../src/tools/handlers/index.js';
import { loadRoutineTools, type RoutineToolSpec } from '../../src/tools/routines/index.js';
import { realPostgres, TEST_ROLE, withClient, type RealPostgres } from '../helpers/postgres.js';

const info = await realPostgres('credential output screen (routines and registry handlers)');

const ALICE: Principal = {
  kind: 'token',
  userId: 'alice',
  tenantId: null,
  roles: [],
  scopes: [],
  claims: {},
};

const HASH = /SCRAM-SHA-256\$|md5[0-9a-f]{32}/;
const NOTE = (n: number): RegExp =>
  new RegExp(`^${n} values? withheld as \\[credential withheld\\]: .*never returns credentials`);

// The admin's functions: hash_of reads pg_authid with the admin's rights, as a DBA might write
// it; the @mcp routines expose it in every shape a routine can return.
const SCHEMA_SQL = (prefix: string): string => `
CREATE SCHEMA cred;
CREATE FUNCTION cred.hash_of(r text) RETURNS text
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE h text;
BEGIN
  EXECUTE 'SELECT rolpassword FROM pg_' || 'authid WHERE rolname = $1' INTO h USING r;
  RETURN h;
END $$;

CREATE FUNCTION cred.role_hashes() RETURNS TABLE(name text, hash text)
LANGUAGE sql STABLE AS $$
  SELECT r, cred.hash_of(r) FROM unnest(ARRAY['${prefix}_scram', '${prefix}_md5']) r ORDER BY r
$$;
COMMENT ON FUNCTION cred.role_hashes() IS '@mcp Role names and their password hashes';

CREATE FUNCTION cred.role_hash(r text) RETURNS text
LANGUAGE sql STABLE AS $$ SELECT cred.hash_of(r) $$;
COMMENT ON FUNCTION cred.role_hash(text) IS '@mcp One role''s hash';

CREATE FUNCTION cred.role_doc(r text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object('name', r, 'auth', jsonb_build_object('hash', cred.hash_of(r)),
    'links', jsonb_build_array('host=db user=rep password=hunter2', 'https://example.org'))
$$;
COMMENT ON FUNCTION cred.role_doc(text) IS '@mcp A role as a document';

CREATE FUNCTION cred.role_bytes(r text) RETURNS bytea
LANGUAGE sql STABLE AS $$ SELECT convert_to(cred.hash_of(r), 'UTF8') $$;
COMMENT ON FUNCTION cred.role_bytes(text) IS '@mcp A role''s hash as bytes';

CREATE FUNCTION cred.role_byte_list(r text) RETURNS bytea[]
LANGUAGE sql STABLE AS $$ SELECT ARRAY[convert_to(cred.hash_of(r), 'UTF8'), '\\x0102'::bytea] $$;
COMMENT ON FUNCTION cred.role_byte_list(text) IS '@mcp A role''s hash in a bytea array';

CREATE TYPE cred.role_pair AS (name text, hash bytea);
CREATE FUNCTION cred.role_pairs(r text) RETURNS cred.role_pair[]
LANGUAGE sql STABLE AS $$ SELECT ARRAY[ROW(r, convert_to(cred.hash_of(r), 'UTF8'))::cred.role_pair] $$;
COMMENT ON FUNCTION cred.role_pairs(text) IS '@mcp A role and its hash as bytes, in a composite';

CREATE FUNCTION cred.raise_hash(r text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RAISE EXCEPTION 'no access for %: %', r, cred.hash_of(r) USING DETAIL = cred.hash_of(r),
    HINT = 'ask the DBA';
END $$;
COMMENT ON FUNCTION cred.raise_hash(text) IS '@mcp Fails, saying too much';

-- Ordinary values, some of them near misses of the credential shapes.
CREATE FUNCTION cred.notes() RETURNS TABLE(name text, note text, meta jsonb, raw bytea)
LANGUAGE sql STABLE AS $$
  VALUES ('alice', 'password reset requested', '{"checksum": "md5 of the file", "n": 2}'::jsonb, '\\x0102'::bytea),
         ('bob', 'SCRAM is the default since 14', '[1, "two", null]'::jsonb, NULL)
$$;
COMMENT ON FUNCTION cred.notes() IS 'Notes about users.
@mcp
Connects to the archive with host=archive password=hunter2';

GRANT USAGE ON SCHEMA cred TO PUBLIC;

-- Registry handlers over the same helper: the body runs as the serving role.
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"hash_tool","requiresAuth":false,
    "inputSchema":{"type":"object","properties":{"role":{"type":"string"}}}}',
  $body$
DECLARE r text := (request).arguments->>'role';
BEGIN
  RETURN mcp.tool_result(
    jsonb_build_array(
      mcp.text('hash: ' || cred.hash_of(r)),
      mcp.text(jsonb_build_array(jsonb_build_object('name', r, 'hash', cred.hash_of(r)),
        jsonb_build_object('name', 'other', 'hash', null))::text)),
    (request).request_id, false,
    jsonb_build_object('name', r, 'hash', cred.hash_of(r), 'list', jsonb_build_array(cred.hash_of(r), 1)));
END $body$);
-- Metadata written from the hash at registration: what tools/list and prompts/list show.
SELECT mcp.create_or_replace_handler(
  jsonb_build_object('type', 'tool', 'name', 'leaky_meta', 'requiresAuth', false,
    'description', E'Looks up a role.\\nadmin hash: ' || cred.hash_of('${prefix}_scram'),
    'inputSchema', jsonb_build_object('type', 'object', 'properties', jsonb_build_object('role',
      jsonb_build_object('type', 'string', 'default', cred.hash_of('${prefix}_md5')))),
    'tags', jsonb_build_array('roles', cred.hash_of('${prefix}_md5'))),
  $body$ BEGIN RETURN mcp.tool_result(jsonb_build_array(mcp.text('ok')), (request).request_id, false, '{}'); END $body$);
SELECT mcp.create_or_replace_handler(
  jsonb_build_object('type', 'tool', 'name', 'leaky_enum', 'requiresAuth', false,
    'inputSchema', jsonb_build_object('type', 'object', 'properties', jsonb_build_object('hash',
      jsonb_build_object('type', 'string', 'enum', jsonb_build_array(cred.hash_of('${prefix}_md5')))))),
  $body$ BEGIN RETURN mcp.tool_result(jsonb_build_array(mcp.text('ok')), (request).request_id, false, '{}'); END $body$);
SELECT mcp.create_or_replace_handler(
  jsonb_build_object('type', 'prompt', 'name', 'leaky_prompt', 'requiresAuth', false,
    'description', cred.hash_of('${prefix}_md5'),
    'arguments', jsonb_build_array(jsonb_build_object('name', 'role', 'required', true,
      'description', 'for example ' || cred.hash_of('${prefix}_scram')))),
  $body$ BEGIN RETURN mcp.prompt_result(jsonb_build_array(
    jsonb_build_object('role', 'user', 'content', mcp.text('hello'))), (request).request_id, 'hi'); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"plain_tool","requiresAuth":false,"inputSchema":{"type":"object"}}',
  $body$ BEGIN RETURN mcp.tool_result(jsonb_build_array(mcp.text('password reset requested')),
    (request).request_id, false, '{"checksum": "md5 of the file"}'); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"hash_error","requiresAuth":false,"inputSchema":{"type":"object"}}',
  $body$ BEGIN RETURN mcp.tool_error('failed for ' || cred.hash_of('${prefix}_scram'), (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"hash_raise","requiresAuth":false,"inputSchema":{"type":"object"}}',
  $body$ BEGIN RAISE EXCEPTION 'hash %', cred.hash_of('${prefix}_md5'); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"resource","name":"role_hash","uriTemplate":"cred://role/{role}","mimeType":"text/plain","requiresAuth":false}',
  $body$ BEGIN RETURN mcp.resource_result(jsonb_build_array(jsonb_build_object('uri', (request).uri,
    'mimeType', 'text/plain', 'text', cred.hash_of((request).arguments->>'role'))), (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"resource","name":"role_hashes","uriTemplate":"cred://roles","mimeType":"application/json","requiresAuth":false}',
  $body$ BEGIN RETURN mcp.resource_result(jsonb_build_array(
    jsonb_build_object('uri', 'cred://roles', 'mimeType', 'application/json',
      'text', (SELECT jsonb_agg(jsonb_build_object('name', name, 'hash', hash)) FROM cred.role_hashes())::text),
    jsonb_build_object('uri', 'cred://roles.bin', 'blob', encode(convert_to(cred.hash_of('${prefix}_md5'), 'UTF8'), 'base64'))),
    (request).request_id); END $body$);
SELECT mcp.create_or_replace_handler(
  '{"type":"prompt","name":"role_prompt","description":"About a role","requiresAuth":false,
    "arguments":[{"name":"role","required":true}]}',
  $body$ BEGIN RETURN mcp.prompt_result(jsonb_build_array(
    jsonb_build_object('role', 'user', 'content', mcp.text('Explain the role ' || ((request).arguments->>'role'))),
    jsonb_build_object('role', 'assistant', 'content', mcp.text(cred.hash_of((request).arguments->>'role')))),
    (request).request_id, 'About a role'); END $body$);
`;

const textsOf = (result: ToolResult): string[] =>
  result.content.map((b) => (b.type === 'text' ? b.text : ''));

describe.skipIf(!info)('the output screen on routines and registry handlers', () => {
  const pgInfo = info as RealPostgres;
  const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const dbName = `pgmcp_cred_${suffix}`;
  const prefix = `pgmcp_cred_${suffix}`;
  const scram = `${prefix}_scram`;
  const md5 = `${prefix}_md5`;
  let db: Database;
  let routines: Map<string, RoutineToolSpec>;
  let handlers: LoadedHandlers;
  const ctx = () => createFakeContext({ principal: ALICE }).ctx;
  const urlFor = (base: string): string => {
    const u = new URL(base);
    u.pathname = `/${dbName}`;
    return u.toString();
  };

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, async (c) => {
      await c.query(`CREATE DATABASE ${dbName}`);
      await c.query(`CREATE ROLE ${scram} PASSWORD 'not-a-real-secret-1'`);
      await c.query(`SET password_encryption = 'md5'`);
      await c.query(`CREATE ROLE ${md5} PASSWORD 'not-a-real-secret-2'`);
    });
    await withClient(urlFor(pgInfo.adminUrl), async (c) => {
      await applyRegistryScripts(pgRunner(c));
      await c.query(SCHEMA_SQL(prefix));
      if (pgInfo.role === TEST_ROLE) await c.query('SELECT mcp.grant_runtime($1)', [TEST_ROLE]);
      // The hashes are there to leak: the screen, not their absence, is what is tested.
      const { rows } = await c.query<{ h: string }>(
        `SELECT cred.hash_of($1) || ' ' || cred.hash_of($2) AS h`,
        [scram, md5],
      );
      expect(rows[0]!.h).toMatch(/^SCRAM-SHA-256\$\d+:\S+ md5[0-9a-f]{32}$/);
    });
    db = await createDatabase(
      {
        url: urlFor(pgInfo.url),
        poolSize: 2,
        embedded: { dataDir: '/nonexistent', demo: false },
      },
      pino({ level: 'silent' }),
    );
    const tools = await loadRoutineTools(db, {
      schemas: ['cred'],
      allowWrites: false,
      statementTimeoutMs: 5_000,
    });
    routines = new Map(tools.map((t) => [t.name, t]));
    handlers = await loadRegistryHandlers(db, {
      statementTimeoutMs: 5_000,
      allowWrites: false,
      mode: 'mcp',
    });
  });

  afterAll(async () => {
    await db?.close();
    await withClient(pgInfo.adminUrl, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS ${scram}`);
      await c.query(`DROP ROLE IF EXISTS ${md5}`);
    });
  });

  const routine = (name: string): RoutineToolSpec => {
    const tool = routines.get(name);
    if (!tool) throw new Error(`no routine tool ${name}: ${[...routines.keys()].join(', ')}`);
    return tool;
  };
  const handlerTool = (name: string) => handlers.tools.find((t) => t.name === name)!;

  describe('@mcp routines', () => {
    it('withholds hashes in a set of rows, keeping the other columns', async () => {
      const result = await routine('role_hashes').call({}, ctx());
      expect(result.structuredContent).toEqual({
        items: [
          { name: md5, hash: WITHHELD },
          { name: scram, hash: WITHHELD },
        ],
      });
      const texts = textsOf(result);
      expect(texts.join('\n')).not.toMatch(HASH);
      expect(JSON.parse(texts[0]!)).toEqual(result.structuredContent);
      expect(texts[texts.length - 1]).toMatch(NOTE(2));
    });

    it('withholds a scalar, a JSON document member by member, and bytes', async () => {
      const scalar = await routine('role_hash').call({ r: scram }, ctx());
      expect(scalar.structuredContent).toEqual({ value: WITHHELD });
      expect(textsOf(scalar)[1]).toMatch(NOTE(1));

      const doc = await routine('role_doc').call({ r: md5 }, ctx());
      expect(doc.structuredContent).toEqual({
        value: { name: md5, auth: { hash: WITHHELD }, links: [WITHHELD, 'https://example.org'] },
      });
      expect(textsOf(doc).join('\n')).not.toMatch(/hunter2|md5[0-9a-f]{32}/);
      expect(textsOf(doc)[1]).toMatch(NOTE(2));

      const bytes = await routine('role_bytes').call({ r: scram }, ctx());
      expect(bytes.structuredContent).toEqual({ value: WITHHELD });

      // Inside an array or a composite, bytea travels as hex text: judged by its bytes too.
      const list = await routine('role_byte_list').call({ r: md5 }, ctx());
      expect(list.structuredContent).toEqual({ value: [WITHHELD, '\\x0102'] });
      expect(textsOf(list)[1]).toMatch(NOTE(1));
      const pairs = await routine('role_pairs').call({ r: scram }, ctx());
      expect(pairs.structuredContent).toEqual({ value: [{ name: scram, hash: WITHHELD }] });
      expect(JSON.stringify(pairs)).not.toMatch(/\\\\x[0-9a-f]{16}/);
    });

    it('withholds a hash an error carries', async () => {
      const error = await routine('raise_hash')
        .call({ r: scram }, ctx())
        .catch((e: unknown) => e);
      expect(isAppError(error) && error.category).toBe('database');
      const message = (error as Error).message;
      expect(message).not.toMatch(HASH);
      expect(message).toMatch(/^ERROR P0001: \[credential withheld\]\nDETAIL: \[credential/);
      expect(message).toMatch(/HINT: ask the DBA/);
      expect(message.split('\n').at(-1)).toMatch(NOTE(3));
      expect(JSON.stringify((error as { details?: unknown }).details)).not.toMatch(HASH);
      expect((error as Error).cause).toBeUndefined();
    });

    it('withholds a line of the comment that reads like a credential from the description', () => {
      expect(routine('notes').description).toBe('Notes about users.\n[credential withheld]');
    });

    it('returns ordinary values unchanged, near misses included', async () => {
      const result = await routine('notes').call({}, ctx());
      const items = [
        {
          name: 'alice',
          note: 'password reset requested',
          meta: { n: 2, checksum: 'md5 of the file' },
          raw: 'AQI=',
        },
        { name: 'bob', note: 'SCRAM is the default since 14', meta: [1, 'two', null], raw: null },
      ];
      expect(result).toEqual({
        content: [{ type: 'text', text: JSON.stringify({ items }) }],
        structuredContent: { items },
      });
    });
  });

  describe('registry handlers', () => {
    it('withholds hashes in a tool result: text, JSON text and structuredContent', async () => {
      const result = await handlerTool('hash_tool').call({ role: scram }, ctx());
      const texts = textsOf(result);
      expect(JSON.stringify(result)).not.toMatch(HASH);
      // Plain text is withheld whole; JSON text member by member.
      expect(texts[0]).toBe(WITHHELD);
      expect(JSON.parse(texts[1]!)).toEqual([
        { name: scram, hash: WITHHELD },
        { name: 'other', hash: null },
      ]);
      expect(result.structuredContent).toEqual({
        name: scram,
        hash: WITHHELD,
        list: [WITHHELD, 1],
      });
      expect(texts).toHaveLength(3);
      expect(texts[2]).toMatch(NOTE(4));
    });

    it('withholds hashes in a tool error, returned or raised', async () => {
      const soft = await handlerTool('hash_error').call({}, ctx());
      expect(soft.isError).toBe(true);
      expect(textsOf(soft)).toEqual([WITHHELD, expect.stringMatching(NOTE(1))]);

      const raised = await handlerTool('hash_raise')
        .call({}, ctx())
        .catch((e: unknown) => e);
      expect(isAppError(raised)).toBe(true);
      expect((raised as Error).message).not.toMatch(HASH);
      expect((raised as Error).message).toMatch(/^ERROR P0001: \[credential withheld\]$/m);
      expect((raised as Error).message.split('\n').at(-1)).toMatch(NOTE(1));
    });

    it('withholds hashes read through a resource template and a resource', async () => {
      const template = handlers.templates.find((t) => t.name === 'role_hash')!;
      const uri = `cred://role/${md5}`;
      const read = await template.read(uri, template.match(uri)!, ctx());
      expect(read.contents[0]).toEqual({ uri, mimeType: 'text/plain', text: WITHHELD });
      expect(read.contents).toHaveLength(2);
      expect(read.contents[1]).toMatchObject({ uri, mimeType: 'text/plain' });
      expect((read.contents[1] as { text: string }).text).toMatch(NOTE(1));

      const resource = handlers.resources.find((r) => r.uri === 'cred://roles')!;
      const all = await resource.read(ctx());
      expect(JSON.stringify(all)).not.toMatch(HASH);
      expect(JSON.parse((all.contents[0] as { text: string }).text)).toEqual([
        { name: md5, hash: WITHHELD },
        { name: scram, hash: WITHHELD },
      ]);
      // A blob is judged by its bytes.
      expect(all.contents[1]).toEqual({
        uri: 'cred://roles.bin',
        mimeType: 'text/plain',
        text: WITHHELD,
      });
      expect((all.contents[2] as { text: string }).text).toMatch(NOTE(3));
    });

    it('withholds hashes in a prompt, saying so in its description', async () => {
      const prompt = handlers.prompts.find((p) => p.name === 'role_prompt')!;
      const got = await prompt.get({ role: scram }, ctx());
      expect(got.messages).toEqual([
        { role: 'user', content: { type: 'text', text: `Explain the role ${scram}` } },
        { role: 'assistant', content: { type: 'text', text: WITHHELD } },
      ]);
      expect(got.description).toMatch(/^About a role\n1 value withheld as \[credential withheld\]/);
    });

    it('withholds what reads like a credential in the metadata the lists show', () => {
      const tool = handlerTool('leaky_meta');
      expect(tool.description).toBe(`Looks up a role.\n${WITHHELD}`);
      expect(tool.inputSchema).toEqual({
        type: 'object',
        properties: { role: { type: 'string', default: WITHHELD } },
      });
      expect(tool.tags).toEqual([WITHHELD, 'roles']);
      const prompt = handlers.prompts.find((p) => p.name === 'leaky_prompt')!;
      expect(prompt.description).toBe(WITHHELD);
      expect(prompt.arguments).toEqual([
        expect.objectContaining({ name: 'role', description: WITHHELD }),
      ]);
      expect(JSON.stringify([tool, prompt])).not.toMatch(HASH);
      // A hash that decides which arguments are accepted cannot be withheld: not served.
      expect(handlers.tools.find((t) => t.name === 'leaky_enum')).toBeUndefined();
      expect(handlers.skipped).toEqual([
        {
          what: 'tool leaky_enum',
          error: expect.objectContaining({
            message: expect.stringMatching(/^its input schema reads like a credential/),
          }),
        },
      ]);
      // Metadata with nothing to withhold is served as registered.
      expect(handlerTool('plain_tool').inputSchema).toEqual({ type: 'object' });
    });

    it('returns an ordinary result unchanged', async () => {
      expect(await handlerTool('plain_tool').call({}, ctx())).toEqual({
        content: [{ type: 'text', text: 'password reset requested' }],
        structuredContent: { checksum: 'md5 of the file' },
      });
    });
  });
});
