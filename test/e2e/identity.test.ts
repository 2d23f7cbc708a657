// Who the caller is, end to end: a server that requires bearer tokens, tokens and users made with
// the CLI in a PostgreSQL state database, and the official SDK client over HTTP (headers through
// requestInit) and stdio (identity from the environment). Forged, expired, revoked and malformed
// tokens, a session after logout, spoofed proxy headers and another caller's session id get
// nowhere; PostgreSQL sees the caller (a requiresAuth handler answers mcp.caller_id(), row-level
// security splits a table between two users, a token's --pg-role is the role its calls run as).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyRegistryScripts, pgRunner } from '../../src/tools/handlers/index.js';
import { realPostgres, TEST_ROLE, withClient, type RealPostgres } from '../helpers/postgres.js';
import {
  PGMCP_BIN,
  postRpc,
  rawHttp,
  rawInitialize,
  runPgmcp,
  serverEnv,
  spawnPgmcp,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const info = await realPostgres('test/e2e/identity.test.ts (callers and their identity)');

const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
const READER_ROLE = `pgmcp_e2e_reader_${suffix}`;

const SETUP_SQL = `
CREATE TABLE notes (owner text NOT NULL, body text NOT NULL);
INSERT INTO notes VALUES ('alice', 'alice note 1'), ('alice', 'alice note 2'), ('bob', 'bob note');
ALTER TABLE notes ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_notes ON notes USING (owner = mcp.caller_id());
CREATE TABLE ledger (amount int);
INSERT INTO ledger VALUES (42);
CREATE ROLE ${READER_ROLE} NOLOGIN;
GRANT USAGE ON SCHEMA public TO ${READER_ROLE};
GRANT SELECT ON ledger TO ${READER_ROLE};
SELECT mcp.create_or_replace_handler(
  '{"type":"tool","name":"whoami","description":"Who is calling","requiresAuth":true,
    "inputSchema":{"type":"object"}}',
  $b$ BEGIN
    RETURN mcp.tool_result(jsonb_build_array(mcp.text(coalesce(mcp.caller_id(), '(nobody)'))),
      (request).request_id);
  END $b$);`;

describe.skipIf(!info)('callers and their identity', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_ident_${suffix}`;
  const stateName = `pgmcp_ident_state_${suffix}`;
  const urlFor = (base: string, db: string): string => {
    const u = new URL(base);
    u.pathname = `/${db}`;
    return u.toString();
  };
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-ident-'));
  const configFile = join(root, 'pgmcp.yaml');
  let env: Record<string, string>;
  let server: HttpServer;
  const tokens: Record<string, string> = {};

  const cli = async (args: string[], input?: string): Promise<string> => {
    if (input === undefined) {
      const run = await runPgmcp(args, { env, timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(0);
      return run.stdout.trim();
    }
    const run = spawnPgmcp(args, { env, stdin: 'pipe' });
    run.process.stdin!.end(input);
    const exit = await run.exited;
    expect(exit.code, run.stderr()).toBe(0);
    return run.stdout().trim();
  };

  const connect = async (token: string | null): Promise<Client> => {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    const client = new Client({ name: 'pgmcp-identity', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }),
    );
    return client;
  };
  const text = (result: any): string =>
    ((result.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');
  const initialize = (headers: Record<string, string>) =>
    postRpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'x', version: '1' },
        },
      },
      headers,
    );

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, async (c) => {
      await c.query(`CREATE DATABASE ${dbName}`);
      await c.query(`CREATE DATABASE ${stateName}`);
    });
    await withClient(urlFor(pgInfo.adminUrl, dbName), async (c) => {
      await applyRegistryScripts(pgRunner(c));
      await c.query(SETUP_SQL);
      await c.query(`GRANT SELECT ON notes TO ${pgInfo.role}`);
      // The login role may take the reader role (SET LOCAL ROLE); it cannot read ledger itself.
      await c.query(`GRANT ${READER_ROLE} TO ${pgInfo.role}`);
      if (pgInfo.role === TEST_ROLE) await c.query('SELECT mcp.grant_runtime($1)', [TEST_ROLE]);
    });
    writeFileSync(configFile, 'tools:\n  count_rows:\n    roles: [counter]\n');
    env = serverEnv({
      PGMCP_LOG_LEVEL: 'warn',
      PGMCP_STATE_URL: urlFor(pgInfo.adminUrl, stateName),
      PGMCP_AUTH_CACHE_TTL_MS: '0',
    });
    const serverArgs = ['--database', urlFor(pgInfo.url, dbName), '--config', configFile];
    server = await startHttpServer([...serverArgs, '--require-auth'], { env });
    tokens['alice'] = await cli(['token', 'create', '--name', 'alice', '--role', 'member']);
    tokens['bob'] = await cli(['token', 'create', '--name', 'bob', '--role', 'counter']);
    tokens['reader'] = await cli(['token', 'create', '--name', 'reader', '--pg-role', READER_ROLE]);
    tokens['revoked'] = await cli(['token', 'create', '--name', 'gone']);
    tokens['expired'] = await cli(['token', 'create', '--name', 'old']);
    await cli(['token', 'revoke', tokens['revoked']!.slice(0, 16)]);
    await withClient(urlFor(pgInfo.adminUrl, stateName), (c) =>
      c.query(
        "UPDATE pgmcp.tokens SET expires_at = now() - interval '1 minute' WHERE name = 'old'",
      ),
    );
    await cli(['user', 'add', 'carol', '--role', 'member'], 'correct horse battery\n');
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
    await withClient(pgInfo.adminUrl, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await c.query(`DROP DATABASE IF EXISTS ${stateName} WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS ${READER_ROLE}`);
    });
  });

  it('prints a client configuration that carries the bearer header it needs', () => {
    const out = server.stdout();
    expect(out).toContain('authentication: required (bearer token)');
    const config = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as {
      mcpServers: Record<string, unknown>;
    };
    expect(Object.values(config.mcpServers)).toEqual([
      {
        type: 'http',
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/),
        headers: { Authorization: 'Bearer <token>' },
      },
    ]);
  });

  it('refuses a missing, malformed, forged, revoked or expired token with 401 and a challenge', async () => {
    const forged = `pgmcp_${'A'.repeat(43)}`;
    const cases: [string, Record<string, string>][] = [
      ['none', {}],
      ['basic', { authorization: 'Basic YWxpY2U6c2VjcmV0' }],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['forged', { authorization: `Bearer ${forged}` }],
      ['revoked', { authorization: `Bearer ${tokens['revoked']}` }],
      ['expired', { authorization: `Bearer ${tokens['expired']}` }],
      ['oversized', { authorization: `Bearer ${'x'.repeat(9_000)}` }],
    ];
    for (const [name, headers] of cases) {
      const res = await initialize(headers);
      expect(res.status, name).toBe(401);
      expect(res.headers['www-authenticate'], name).toMatch(/^Bearer/);
      expect(res.json.error.code, name).toBe(-32001);
      for (const secret of Object.values(tokens)) expect(res.text).not.toContain(secret);
    }
    const inUrl = await rawHttp(`${server.url}?access_token=${tokens['alice']}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: { jsonrpc: '2.0', id: 1, method: 'ping' },
    });
    expect(inUrl.status).toBe(401);
    expect(inUrl.text).not.toContain(tokens['alice']);
  });

  it('ignores identity headers from a peer that is not a trusted proxy', async () => {
    const res = await initialize({ 'x-user-id': 'alice', 'x-tenant-id': 't1' });
    expect(res.status).toBe(401);
  });

  it('lets a token in, and PostgreSQL sees who it is', async () => {
    const alice = await connect(tokens['alice']!);
    try {
      expect(text(await alice.callTool({ name: 'whoami', arguments: {} }))).toBe('alice');
      const rows = await alice.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT body FROM notes ORDER BY body' },
      });
      expect(rows.isError).toBeFalsy();
      expect(text(rows)).toContain('alice note 1');
      expect(text(rows)).toContain('alice note 2');
      expect(text(rows)).not.toContain('bob note');
    } finally {
      await alice.close();
    }
    const bob = await connect(tokens['bob']!);
    try {
      expect(text(await bob.callTool({ name: 'whoami', arguments: {} }))).toBe('bob');
      const rows = await bob.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT body FROM notes' },
      });
      expect(text(rows)).toContain('bob note');
      expect(text(rows)).not.toContain('alice note');
    } finally {
      await bob.close();
    }
  });

  it('runs a token with --pg-role as that PostgreSQL role, and others without it', async () => {
    const reader = await connect(tokens['reader']!);
    try {
      const ok = await reader.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT amount, current_user AS who FROM ledger' },
      });
      expect(ok.isError, text(ok)).toBeFalsy();
      expect(text(ok)).toContain('42');
      expect(text(ok)).toContain(READER_ROLE);
    } finally {
      await reader.close();
    }
    const alice = await connect(tokens['alice']!);
    try {
      const denied = await alice.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT amount FROM ledger' },
      });
      expect(denied.isError).toBe(true);
      expect(text(denied)).toMatch(/permission denied/);
      expect(denied._meta?.['pgmcp/error']).toMatchObject({ sqlstate: '42501' });
    } finally {
      await alice.close();
    }
  });

  it('refuses a built-in tool to a caller without its configured role (403), not to one with it', async () => {
    const session = await rawInitialize(
      server.url,
      '2025-11-25',
      {},
      {
        authorization: `Bearer ${tokens['alice']}`,
      },
    );
    const call = (headers: Record<string, string>) =>
      postRpc(
        server.url,
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'count_rows', arguments: { table: 'notes' } },
        },
        headers,
      );
    const refused = await call(session.headers);
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toMatch(/insufficient_scope/);
    const bob = await rawInitialize(
      server.url,
      '2025-11-25',
      {},
      {
        authorization: `Bearer ${tokens['bob']}`,
      },
    );
    const allowed = await call(bob.headers);
    expect(allowed.status).toBe(200);
    expect(allowed.json.result.isError).toBeFalsy();
  });

  it("keeps a session to the caller who opened it: another token gets 404 for alice's session", async () => {
    const alice = await rawInitialize(
      server.url,
      '2025-11-25',
      {},
      {
        authorization: `Bearer ${tokens['alice']}`,
      },
    );
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect((await postRpc(server.url, list, alice.headers)).status).toBe(200);
    const hijack = await postRpc(server.url, list, {
      ...alice.headers,
      authorization: `Bearer ${tokens['bob']}`,
    });
    expect(hijack.status).toBe(404);
  });

  it('reports stage timings of query_database in a Server-Timing header', async () => {
    const session = await rawInitialize(
      server.url,
      '2025-11-25',
      {},
      {
        authorization: `Bearer ${tokens['alice']}`,
      },
    );
    const res = await postRpc(
      server.url,
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'query_database', arguments: { query: 'SELECT 1 AS one' } },
      },
      session.headers,
    );
    expect(res.status).toBe(200);
    for (const stage of ['parse', 'policy', 'plan', 'run', 'format']) {
      expect(res.headers['server-timing']).toMatch(new RegExp(`\\b${stage};dur=\\d`));
    }
  });

  it('signs a user in, serves the session token, and refuses it after logout', async () => {
    const login = await rawHttp(`${server.origin}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: { username: 'carol', password: 'correct horse battery' },
    });
    expect(login.status).toBe(200);
    const session = login.json.session_token as string;
    expect(typeof login.json.expires_at).toBe('string');
    const carol = await connect(session);
    try {
      expect(text(await carol.callTool({ name: 'whoami', arguments: {} }))).toBe('carol');
    } finally {
      await carol.close();
    }
    const info = await rawHttp(`${server.origin}/api/user/info`, {
      headers: { authorization: `Bearer ${session}` },
    });
    expect(info.json).toMatchObject({ authenticated: true, username: 'carol' });
    const out = await rawHttp(`${server.origin}/api/logout`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
      body: {},
    });
    expect(out.status).toBe(200);
    expect((await initialize({ authorization: `Bearer ${session}` })).status).toBe(401);
    const after = await rawHttp(`${server.origin}/api/user/info`, {
      headers: { authorization: `Bearer ${session}` },
    });
    expect(after.json).toEqual({ authenticated: false, sign_in_required: true });
  });

  it('takes the stdio caller from the environment', async () => {
    const stdio = async (extra: Record<string, string>): Promise<Client> => {
      const client = new Client({ name: 'pgmcp-identity', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [PGMCP_BIN, 'serve', '--stdio', '--database', urlFor(pgInfo.url, dbName)],
          env: { ...env, ...extra },
          stderr: 'ignore',
        }),
      );
      return client;
    };
    const auditFile = join(root, 'audit.jsonl');
    const signedIn = await stdio({ PGMCP_USER_ID: 'alice', PGMCP_AUDIT_FILE: auditFile });
    try {
      expect(text(await signedIn.callTool({ name: 'whoami', arguments: {} }))).toBe('alice');
      const rows = await signedIn.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT count(*) AS n FROM notes' },
      });
      expect(text(rows)).toMatch(/\b2\b/);
    } finally {
      await signedIn.close();
    }
    // Every tool call is audited, on stdio to audit.file: who, which tool, how it ended.
    // The server writes it as it stops (the client may return before the process has ended).
    const audited = await vi.waitFor(
      () => {
        const lines = readFileSync(auditFile, 'utf8').trim().split('\n');
        expect(lines).toHaveLength(2);
        return lines.map((line) => JSON.parse(line));
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(audited.map((r) => [r.event, r.tool, r.outcome])).toEqual([
      ['tool_call', 'whoami', 'success'],
      ['tool_call', 'query_database', 'success'],
    ]);
    expect(JSON.stringify(audited)).toContain('alice');
    const anonymous = await stdio({});
    try {
      const refused = await anonymous.callTool({ name: 'whoami', arguments: {} }).then(
        () => null,
        (e: { code?: number }) => e,
      );
      expect(refused?.code).toBe(-32001);
      const rows = await anonymous.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT count(*) AS n FROM notes' },
      });
      // Anonymous: mcp.caller_id() is NULL, so the policy matches no row (never '' = owner).
      expect(text(rows)).toMatch(/\b0\b/);
    } finally {
      await anonymous.close();
    }
  });

  it('requires a token by default when bound beyond loopback', async () => {
    const wide = await startHttpServer(
      ['--database', urlFor(pgInfo.url, dbName), '--http', '0.0.0.0:0'],
      { env },
    );
    try {
      const port = new URL(wide.url).port;
      const url = `http://127.0.0.1:${port}/mcp`;
      const res = await postRpc(url, { jsonrpc: '2.0', id: 1, method: 'ping' });
      expect(res.status).toBe(401);
      expect(wide.stdout()).toContain('authentication: required');
    } finally {
      await wide.stop();
    }
  });
});
