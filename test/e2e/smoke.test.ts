// A start of pgmcp as a user makes one, short enough to run on every Node pgmcp supports:
// scripts/smoke.sh runs this file on the Nodes CI does not run the whole suite on (it is part of
// the suite on the one it does). The BUILT server on this Node, serving PostgreSQL over HTTP:
// the official SDK client lists the tools and calls one; a chat through /api/chat with the local
// fake model queries and answers; the web client's page and script are served.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendChat, textOf, toolParts, userMessage } from '../helpers/chat-server.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { realPostgres, throwawayDatabase } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres(`smoke run on Node ${process.version}`);

describe.skipIf(!pg)(`pgmcp on Node ${process.version}`, () => {
  let fake: FakeLlm;
  let server: HttpServer;
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-smoke-'));
  const state = pg ? throwawayDatabase(pg, 'pgmcp_smoke') : null;

  beforeAll(async () => {
    writeFileSync(join(dir, 'pgmcp.yaml'), `state:\n  url: ${state!.url}\n`);
    fake = await startFakeLlm({
      flavor: 'openai',
      script: (r) =>
        r.toolResults.length === 0
          ? { toolCalls: [{ name: 'query_database', args: { query: 'SELECT 6 * 7 AS answer' } }] }
          : { text: `It is ${/\b(\d+)\b/.exec(r.toolResults[0]!)?.[1]}.` },
    });
    server = await startHttpServer(['--database', pg!.url, '--config', join(dir, 'pgmcp.yaml')], {
      env: serverEnv({ OPENAI_API_KEY: 'sk-smoke-test-123456', OPENAI_BASE_URL: fake.baseUrl }),
    });
  });
  afterAll(async () => {
    await server?.stop();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the tools and calls one through the official SDK client', async () => {
    const client = new Client({ name: 'smoke', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('query_database');
      const result = await client.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT 40 + 2 AS answer' },
      });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [[42]] });
    } finally {
      await client.close();
    }
  });

  it('chats with the fake model: a query, then the answer', async () => {
    const turn = await sendChat(server.origin, [userMessage('What is six times seven?')]);
    expect(toolParts(turn.message)[0]).toMatchObject({
      type: 'tool-query_database',
      state: 'output-available',
      output: { isError: false, structuredContent: { rows: [[42]] } },
    });
    expect(textOf(turn.message)).toBe('It is 42.');
  });

  it('serves the web client', async () => {
    const page = await fetch(`${server.origin}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /<script[^>]+src="([^"]+\.js)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    const js = await fetch(new URL(script!, server.origin));
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
  });
});
