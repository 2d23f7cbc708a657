// The compatibility documents' own examples, as their readers copy them: every fenced or inline
// SQL block of pgmi's documents (000, 003) runs as written against a database `pgmcp install --names
// pgmi` prepared, and is then served by pgmcp to the official MCP client; every curl command of
// documents 000, 001 and 002 runs with the real curl against a running pgmcp. A block that is not a
// runnable example is classified below with the reason — none is dropped silently: the test
// fails when the documents hold a block this table does not name.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realPostgres, REPO_ROOT, throwawayDatabase, withClient } from '../helpers/postgres.js';
import { seedBlocks, seedFile, seedsPresent, type SeedBlock } from '../helpers/seed-blocks.js';
import {
  rawHttp,
  runPgmcp,
  serveScript,
  serverEnv,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';
import {
  checkDeclaration,
  checkSignatures,
  SEED_VERDICTS,
  type CurlCheck,
  type Verdict,
} from './seed-verdicts.js';

const SUITE = 'test/e2e/seed-examples.test.ts (the compatibility documents’ examples)';
const info = seedsPresent(SUITE) ? await realPostgres(SUITE) : null;

/** Pairs each extracted block with its verdict; fails when the seeds and the table disagree. */
function classified(seed: string): Array<{ block: SeedBlock; verdict: Verdict }> {
  const blocks = seedBlocks(seed);
  const verdicts = SEED_VERDICTS[seed] ?? [];
  expect(
    blocks.map((b) => `${b.kind} ${b.head}`),
    `seed ${seed}: the examples found differ from the classification table`,
  ).toEqual(verdicts.map(([head]) => head));
  return blocks.map((block, i) => ({ block, verdict: verdicts[i]![1] }));
}

async function install(url: string, extra: string[] = []): Promise<void> {
  const done = await runPgmcp(['install', '--database', url, '--names', 'pgmi', ...extra], {
    env: serverEnv(),
  });
  expect(done.code, done.stderr).toBe(0);
}

/** Runs a seed's SQL blocks in order on one session, as a psql user pasting them would. */
async function runSqlBlocks(seed: string, url: string): Promise<string[]> {
  const notices: string[] = [];
  const client = new pg.Client({ connectionString: url });
  client.on('notice', (n) => notices.push(n.message ?? ''));
  await client.connect();
  try {
    for (const { block, verdict } of classified(seed)) {
      if (block.kind !== 'sql') continue;
      const where = `seed ${seed} line ${block.line}`;
      switch (verdict.kind) {
        case 'run':
          await client.query(block.text).catch((e: Error) => {
            throw new Error(`${where}: ${e.message}\n${block.text}`);
          });
          await verdict.check?.(client);
          break;
        case 'wrap':
          await client.query(verdict.wrap(block.text)).catch((e: Error) => {
            throw new Error(`${where} (wrapped: ${verdict.reason}): ${e.message}`);
          });
          break;
        case 'signatures':
          await checkSignatures(client, block.text, where);
          break;
        case 'declaration':
          await checkDeclaration(client, block.text, where);
          break;
        case 'fragment':
          expect(verdict.reason.length, where).toBeGreaterThan(10);
          break;
        default:
          throw new Error(`${where}: verdict ${verdict.kind} is not for SQL`);
      }
    }
  } finally {
    await client.end();
  }
  return notices;
}

function curl(command: string): { stdout: string; stderr: string; status: number | null } {
  const run = spawnSync('bash', ['-c', command], { encoding: 'utf8', timeout: 30_000 });
  return { stdout: run.stdout, stderr: run.stderr, status: run.status };
}

describe.skipIf(!info)('the compatibility documents’ examples work as written', () => {
  if (!info) {
    // Skipped (said above, on one line): the fixtures below need the database and documents.
    it('runs where the documents and PostgreSQL are present', () => undefined);
    return;
  }
  const db000 = throwawayDatabase(info!, 'pgmcp_seed000');
  const db003 = throwawayDatabase(info!, 'pgmcp_seed003');
  let server: HttpServer;
  let token = '';
  let notices000: string[] = [];

  beforeAll(async () => {
    // Seed 003's database is served by the non-superuser role, with the grants the flag gives.
    await Promise.all([install(db000.url), install(db003.url, ['--grant-runtime', info!.role])]);
    notices000 = await runSqlBlocks('000', db000.url);
    // Seed 002's examples query a users table the reader's database is assumed to have.
    await withClient(db000.url, (c) =>
      c.query(`CREATE TABLE users (id int PRIMARY KEY, name text, email text);
        INSERT INTO users VALUES (1, 'Alice', 'alice@example.com'), (2, 'Bob', 'bob@example.com')`),
    );
    const env = serverEnv({ PGMCP_STATE_URL: db000.url });
    const created = await runPgmcp(['token', 'create', '--name', 'seed-reader'], { env });
    expect(created.code, created.stderr).toBe(0);
    token = created.stdout.trim();
    server = await startHttpServer(['--database', db000.url], { env });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('document 000: every SQL example ran in psql; the DO-block test passed', () => {
    expect(notices000).toContain('Test passed');
  });

  it('document 003: every SQL example runs as written (fragments inside the block they belong in)', async () => {
    const notices = await runSqlBlocks('003', db003.url);
    expect(notices.some((n) => n.includes('Test passed'))).toBe(true);
  });

  it.each(['000', '001', '002'])('seed %s: every curl example works against pgmcp', (seed) => {
    for (const { block, verdict } of classified(seed)) {
      if (block.kind !== 'curl') continue;
      const where = `seed ${seed} line ${block.line}`;
      if (verdict.kind === 'placeholder') {
        expect(verdict.reason.length, where).toBeGreaterThan(10);
        continue;
      }
      if (verdict.kind !== 'curl')
        throw new Error(`${where}: verdict ${verdict.kind} is not for curl`);
      let command = block.text
        .replaceAll(/https?:\/\/localhost:8080/g, server.origin)
        .replaceAll(/YOUR_TOKEN(_HERE)?/g, token);
      if (verdict.fix) {
        expect(command, `${where}: the seed's typo is still there`).toContain(verdict.fix[0]);
        command = command.replace(verdict.fix[0], verdict.fix[1]);
      }
      const run = curl(command);
      expect(run.status, `${where}: ${run.stderr}`).toBe(0);
      const body = JSON.parse(run.stdout) as Parameters<CurlCheck>[0];
      expect(body.jsonrpc, where).toBe('2.0');
      verdict.check(body);
    }
  });

  it('document 000: the handlers registered in SQL are served to an MCP client', async () => {
    const client = new Client({ name: 'seed-000', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const { tools } = await client.listTools();
      const byName = new Map(tools.map((t) => [t.name, t]));
      for (const name of ['database_info', 'weather_at', 'test_tool']) {
        expect(byName.get(name)?.inputSchema.type, name).toBe('object');
      }
      expect(byName.get('weather_at')?._meta).toEqual({ tags: ['read-only', 'weather'] });
      const tagged = await client.request(
        { method: 'tools/list', params: { tags: ['weather'] } },
        ListToolsResultSchema,
      );
      expect(tagged.tools.map((t) => t.name)).toEqual(['weather_at']);
      await expect(
        client.request(
          { method: 'tools/list', params: { tags: 'weather' } },
          ListToolsResultSchema,
        ),
      ).rejects.toThrow(/tags must be an array of strings/);

      const info = await client.callTool({ name: 'database_info', arguments: {} });
      expect(info.isError).toBeFalsy();
      expect((info.content as Array<{ text: string }>)[0]!.text).toMatch(
        /^Database: pgmcp_seed000/,
      );
      const weather = await client.callTool({
        name: 'weather_at',
        arguments: { location: 'Oslo' },
      });
      expect(weather.structuredContent).toEqual({ temp_c: 21.5 });

      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('postgres:///{schema}/{table}');
      const read = await client.readResource({ uri: 'postgres:///public/users' });
      const columns = JSON.parse((read.contents[0] as { text: string }).text) as Array<{
        column_name: string;
      }>;
      expect(columns.map((c) => c.column_name).sort()).toEqual(['email', 'id', 'name']);

      const prompt = await client.getPrompt({
        name: 'sql_assistant',
        arguments: { task: 'count users' },
      });
      expect(JSON.stringify(prompt.messages)).toContain('count users');
    } finally {
      await client.close();
    }
  });

  it('document 003: its handlers are served over stdio to a signed-in local user, as the runtime role', async () => {
    const asRole = new URL(info!.url);
    asRole.pathname = `/${db003.name}`;
    const [script, ...args] = serveScript(['--stdio', '--database', asRole.toString()]);
    const client = new Client({ name: 'seed-003', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [script!, ...args],
        cwd: REPO_ROOT,
        env: serverEnv({ PGMCP_USER_ID: 'test-user', PGMCP_LOG_LEVEL: 'warn' }),
        stderr: 'ignore',
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['my_tool', 'test_tool', 'protected_tool']));
      const mine = await client.callTool({ name: 'my_tool', arguments: { param1: 'x' } });
      expect(mine.content).toEqual([{ type: 'text', text: 'Result: x' }]);
      const test = await client.callTool({ name: 'test_tool', arguments: {} });
      expect(test.content).toEqual([{ type: 'text', text: 'success' }]);
    } finally {
      await client.close();
    }
  });

  it('HTTP without a session: served statelessly as plain JSON; a named session must be live', async () => {
    const ping = { jsonrpc: '2.0', id: 7, method: 'ping' };
    // No Accept header at all.
    const bare = await rawHttp(server.url, {
      headers: { 'content-type': 'application/json' },
      body: ping,
    });
    expect(bare.status).toBe(200);
    expect(bare.headers['content-type']).toMatch(/^application\/json/);
    expect(bare.json).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    // initialize that accepts only JSON: answered, no session opened.
    const init = await rawHttp(`${server.url}/v1`, {
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18' },
      },
    });
    expect(init.json.result.protocolVersion).toBe('2025-06-18');
    expect(init.headers['mcp-session-id']).toBeUndefined();
    const initialized = await rawHttp(server.url, {
      headers: { 'content-type': 'application/json' },
      body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    });
    expect(initialized.status).toBe(202);
    // What only a lasting session can keep is refused, not silently lost.
    const subscribe = await rawHttp(server.url, {
      headers: { 'content-type': 'application/json' },
      body: {
        jsonrpc: '2.0',
        id: 9,
        method: 'resources/subscribe',
        params: { uri: 'pg://settings' },
      },
    });
    expect(subscribe.json.error.code).toBe(-32600);
    // What still refuses: an Accept without JSON, an unknown session, an unknown version.
    const html = await rawHttp(server.url, {
      headers: { 'content-type': 'application/json', accept: 'text/html' },
      body: ping,
    });
    expect(html.status).toBe(406);
    const gone = await rawHttp(server.url, {
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': 'no-such-session',
      },
      body: ping,
    });
    expect(gone.status).toBe(404);
    const version = await rawHttp(server.url, {
      headers: { 'content-type': 'application/json', 'mcp-protocol-version': '1999-01-01' },
      body: ping,
    });
    expect(version.status).toBe(400);
  });

  it("document 004: NpgsqlRest's McpOptions example loads as a pgmcp config, and imports", () => {
    // The Overview block: the first JSON object after the line "Overview".
    const lines = readFileSync(seedFile('004'), 'utf8').split('\n');
    const start = lines.indexOf('{', lines.indexOf('Overview'));
    let depth = 0;
    let end = start;
    for (; end < lines.length; end++) {
      depth += (lines[end]!.match(/{/g) ?? []).length - (lines[end]!.match(/}/g) ?? []).length;
      if (depth === 0) break;
    }
    const text = lines.slice(start, end + 1).join('\n');
    expect(JSON.parse(text)).toHaveProperty('NpgsqlRest.McpOptions.ServerVersion', '1.0.0');
    const dir = mkdtempSync(join(tmpdir(), 'pgmcp-seed004-'));
    try {
      const file = join(dir, 'appsettings.json');
      writeFileSync(file, text);
      const config = loadConfig({ flags: { config: file }, env: {}, cwd: dir });
      expect(config.database.routineTools).toBe(false); // "Enabled": false
      expect(config.server.version).toBe('1.0.0');
      expect(config.http.path).toBe('/mcp');
      expect(config.auth.filterToolsByRole).toBe(false);
      const imported = spawnSync(
        process.execPath,
        [join(REPO_ROOT, 'bin', 'pgmcp'), 'config', 'import', '--from', 'npgsqlrest', file],
        { encoding: 'utf8', env: serverEnv() },
      );
      expect(imported.status, imported.stderr).toBe(0);
      expect(imported.stdout).toMatch(/^ {2}version: 1\.0\.0$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
