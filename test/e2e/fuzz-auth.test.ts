// The hostile client of fuzz.test.ts against a server that requires authentication: random and
// forged credentials (bearer tokens that were never issued, revoked ones, forged JWTs, Basic,
// oversized and malformed headers) on MCP in both eras and on the REST routes, and the admin
// routes (/api/admin/…) fuzzed with an admin's token, so their bodies are validated rather than
// refused at the role check. Besides "a documented answer, never a 5xx, nothing logged as an
// error": a request without a valid credential is never served (no 2xx on MCP, none on an
// admin route), and a valid one still is at the end. Time-bounded like fuzz.test.ts
// (PGMCP_FUZZ_SECONDS, here 12 s by default, shared between the properties).
import { request as httpRequest } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fuzzSettings,
  loggedErrors,
  LEGACY,
  mcpAnswerProblems,
  mcpHeaders,
  MODERN,
  body as mcpBody,
  restAnswerProblems,
  restCall,
  restOperations,
  send,
  sessionSlot,
  type RestOperation,
  type Surface,
} from '../helpers/fuzz.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { realPostgres, throwawayDatabase } from '../helpers/postgres.js';
import {
  postRpc,
  rawInitialize,
  runPgmcp,
  serverEnv,
  spawnPgmcp,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

const pg = await realPostgres('test/e2e/fuzz-auth.test.ts (a hostile client, auth required)');
const LIMIT = 65_536;
const DEFAULT_SECONDS = 12;

const settings = (share: number) => fuzzSettings(share, DEFAULT_SECONDS);

/** The /api routes that answer without a credential when auth is required (auth: optional). */
const PUBLIC_ROUTES = new Set(['/api/openapi.json', '/api/user/info', '/api/login']);

const b64url = (value: unknown): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Which credential a case sends: a real one (by name), or something that must not pass. */
type Credential = { valid: 'admin' | 'member' | null; header: string | undefined };

function credentials(tokens: Record<string, string>): fc.Arbitrary<Credential> {
  const forged = (header: fc.Arbitrary<string | undefined>) =>
    header.map((h): Credential => ({ valid: null, header: h }));
  const token = tokens['admin']!;
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constant<Credential>({ valid: 'admin', header: `Bearer ${token}` }),
    },
    {
      weight: 2,
      arbitrary: fc.constant<Credential>({ valid: 'member', header: `Bearer ${tokens['member']}` }),
    },
    { weight: 2, arbitrary: forged(fc.constant(undefined)) },
    { weight: 1, arbitrary: forged(fc.constant(`Bearer ${tokens['revoked']}`)) },
    // The right token, changed: one character, cut short, with more after it, other case.
    {
      weight: 2,
      arbitrary: forged(
        fc.tuple(fc.nat(), fc.constantFrom('flip', 'cut', 'extend', 'upper')).map(([at, how]) => {
          const i = 7 + (at % (token.length - 7)); // past the token's prefix
          const changed =
            how === 'flip'
              ? token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1)
              : how === 'cut'
                ? token.slice(0, i)
                : how === 'extend'
                  ? `${token}x`
                  : token.toUpperCase();
          return `Bearer ${changed}`;
        }),
      ),
    },
    // A JWT-shaped token no issuer signed: none, HS256 and RS256 headers, any claims.
    {
      weight: 2,
      arbitrary: forged(
        fc
          .tuple(
            fc.constantFrom('none', 'HS256', 'RS256', 'ES256'),
            fc.dictionary(
              fc.constantFrom('sub', 'aud', 'iss', 'exp', 'scope', 'roles', 'iat'),
              fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.array(fc.string())),
            ),
            fc.string({ maxLength: 40 }),
          )
          .map(
            ([alg, claims, sig]) =>
              `Bearer ${b64url({ alg, typ: 'JWT' })}.${b64url(claims)}.${b64url(sig)}`,
          ),
      ),
    },
    {
      weight: 2,
      arbitrary: forged(
        fc.oneof(
          fc.constantFrom('Bearer', 'Bearer ', 'bearer', 'Token abc', 'Bearer a b', 'Bearer \t'),
          fc.string({ maxLength: 40 }).map((s) => `Basic ${b64url(`admin:${s}`)}`),
          fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map((s) => `Bearer ${s}`),
          // Long, but under Node's 16 KiB header limit (past it, see the last test).
          fc.integer({ min: 2_000, max: 12_000 }).map((n) => `Bearer pgmcp_${'a'.repeat(n)}`),
        ),
      ),
    },
  );
}

/** node:http sends only printable ASCII in a header value: other cases would never leave. */
function sendable(value: string | undefined): string | undefined {
  return value !== undefined && /^[\x20-\x7e\t]*$/.test(value) ? value : undefined;
}

describe.skipIf(!pg)('a hostile client of a server that requires authentication', () => {
  let server: HttpServer;
  let fake: FakeLlm;
  let surface: Surface;
  const tokens: Record<string, string> = {};
  const sessions: string[] = [];
  let operations: RestOperation[] = [];
  const counts: Record<string, number> = {};
  const state = pg ? throwawayDatabase(pg, 'pgmcp_fuzz_auth_state') : null;
  let env: Record<string, string>;
  const cli = async (more: string[]): Promise<string> => {
    const run = await runPgmcp(more, { env, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(0);
    return run.stdout.trim();
  };
  const count = (name: string): void => void (counts[name] = (counts[name] ?? 0) + 1);
  const admin = (): Record<string, string> => ({ authorization: `Bearer ${tokens['admin']}` });

  beforeAll(async () => {
    // A model the REST routes can name (/api/llm/models), never reached by a chat here.
    fake = await startFakeLlm({ flavor: 'openai', script: () => ({ text: 'fuzzed' }) });
    env = serverEnv({
      OPENAI_API_KEY: 'sk-fuzz-123456',
      OPENAI_BASE_URL: fake.baseUrl,
      PGMCP_STATE_URL: state!.url,
      PGMCP_LOG_LEVEL: 'warn',
      PGMCP_HTTP_BODY_LIMIT_BYTES: String(LIMIT),
      PGMCP_STATEMENT_TIMEOUT_MS: '2000',
      PGMCP_AUTH_CACHE_TTL_MS: '0',
      // Every made-up sign-in is a real password check, not the lockout's early refusal.
      PGMCP_LOCKOUT_MAX_FAILURES: '1000000',
      PGMCP_LOCKOUT_MAX_FAILURES_PER_ADDRESS: '1000000',
    });
    tokens['admin'] = await cli(['token', 'create', '--name', 'fuzz-admin', '--role', 'admin']);
    tokens['member'] = await cli(['token', 'create', '--name', 'fuzz-member', '--role', 'member']);
    tokens['revoked'] = await cli(['token', 'create', '--name', 'fuzz-gone']);
    await cli(['token', 'revoke', tokens['revoked'].slice(0, 16)]);
    const add = spawnPgmcp(['user', 'add', 'dora', '--role', 'member'], { env, stdin: 'pipe' });
    add.process.stdin!.end('a long enough password\n');
    expect((await add.exited).code, add.stderr()).toBe(0);
    server = await startHttpServer(['--database', pg!.url, '--require-auth'], {
      env,
      fixtures: true,
    });
    const listed = async (method: string, key: string, field: string): Promise<string[]> => {
      const res = await postRpc(server.url, { jsonrpc: '2.0', id: 1, method }, admin());
      return (res.json.result[key] as Record<string, string>[]).map((x) => x[field]!);
    };
    surface = {
      tools: await listed('tools/list', 'tools', 'name'),
      prompts: await listed('prompts/list', 'prompts', 'name'),
      resources: await listed('resources/list', 'resources', 'uri'),
    };
    for (let i = 0; i < 3; i++)
      sessions.push((await rawInitialize(server.url, LEGACY, {}, admin())).sessionId);
    const openapi = await send(`${server.origin}/api/openapi.json`, 'GET', admin(), undefined);
    operations = restOperations(JSON.parse(openapi.text)).filter((op) => op.path !== '/api/chat');
    expect(operations.some((op) => op.path.startsWith('/api/admin/'))).toBe(true);
  }, 180_000);

  afterAll(async () => {
    console.log(`fuzz cases per property: ${JSON.stringify(counts)}`);
    await server?.stop();
    await fake?.close();
  });

  it('MCP in both eras: only a valid credential is served, every answer documented', async () => {
    await fc.assert(
      fc.asyncProperty(
        credentials(tokens),
        fc.constantFrom(LEGACY, MODERN),
        mcpHeaders(),
        fc
          .constantFrom(...(['legacy', 'modern'] as const))
          .chain((era) => mcpBody(surface, era, LIMIT)),
        async (credential, version, headers, text) => {
          count('mcp');
          const slot = sessionSlot(headers['mcp-session-id']);
          const sent = {
            ...headers,
            ...(slot === -1 ? {} : { 'mcp-session-id': sessions[slot] }),
            ...(version === MODERN ? { 'mcp-protocol-version': MODERN } : {}),
            authorization: sendable(credential.header),
          };
          const res = await send(server.url, 'POST', sent, text, 300);
          expect(mcpAnswerProblems(res, 'POST')).toEqual([]);
          if (credential.valid === null && res.status < 300) {
            throw new Error(
              `served without a valid credential (${res.status}): ${credential.header?.slice(0, 80)} → ${res.text.slice(0, 200)}`,
            );
          }
        },
      ),
      settings(0.35),
    );
    expect(counts['mcp']).toBeGreaterThan(20);
  });

  it('REST routes, the admin routes included, with any credential', async () => {
    await fc.assert(
      fc.asyncProperty(credentials(tokens), restCall(operations), async (credential, call) => {
        count(credential.valid === 'admin' ? 'rest-admin' : 'rest-other');
        const headers = {
          'content-type': call.contentType,
          accept: 'application/json',
          authorization: sendable(credential.header),
        };
        const hasBody = call.body !== undefined && call.method !== 'GET' && call.method !== 'HEAD';
        const res = await send(
          `${server.origin}${call.path}${call.query}`,
          call.method,
          headers,
          hasBody ? call.body : undefined,
        );
        const what = `${call.method} ${call.path}`;
        expect(restAnswerProblems(res, what)).toEqual([]);
        if (
          call.path.startsWith('/api/admin/') &&
          credential.valid !== 'admin' &&
          res.status < 300
        ) {
          throw new Error(
            `${what} served to a non-admin (${res.status}): ${res.text.slice(0, 200)}`,
          );
        }
        if (credential.valid === null && res.status < 300 && !PUBLIC_ROUTES.has(call.path)) {
          throw new Error(`${what} served without a valid credential (${res.status})`);
        }
      }),
      settings(0.4),
    );
    expect(counts['rest-admin']).toBeGreaterThan(5);
  });

  it('sign-in with made-up user names and passwords', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          username: fc.oneof(fc.constant('dora'), fc.string({ maxLength: 40 }), fc.integer()),
          password: fc.oneof(
            { weight: 4, arbitrary: fc.string({ maxLength: 80 }) },
            fc.constant(null),
            fc.nat(),
          ),
        }),
        async (form) => {
          count('login');
          const res = await send(
            `${server.origin}/api/login`,
            'POST',
            { 'content-type': 'application/json', accept: 'application/json' },
            JSON.stringify(form),
          );
          expect(restAnswerProblems(res, 'POST /api/login')).toEqual([]);
          expect(res.status, res.text).not.toBe(200);
          if (res.status === 401) count('login-refused');
        },
      ),
      // A password check costs hundreds of milliseconds on a busy machine: the first case is
      // the real user with a wrong password, so at least one always reaches it.
      { ...settings(0.25), examples: [[{ username: 'dora', password: 'not her password' }]] },
    );
    expect(counts['login']).toBeGreaterThan(0);
    expect(counts['login-refused'] ?? 0).toBeGreaterThan(0);
  });

  it('a header block over 16 KiB: Node answers 431 before any route, and the server goes on', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        server.url,
        {
          method: 'POST',
          agent: false,
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer pgmcp_${'a'.repeat(20_000)}`,
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('{"jsonrpc":"2.0","id":1,"method":"ping"}');
    });
    expect(status).toBe(431);
  });

  it('a valid credential is still served, and nothing was logged as an error', async () => {
    const res = await postRpc(server.url, { jsonrpc: '2.0', id: 'end', method: 'ping' }, admin());
    expect(res.json).toEqual({ jsonrpc: '2.0', id: 'end', result: {} });
    const refused = await postRpc(server.url, { jsonrpc: '2.0', id: 'x', method: 'ping' });
    expect(refused.status).toBe(401);
    expect(server.process.exitCode).toBeNull();
    expect(loggedErrors(server.stderr())).toEqual([]);
  });
});
