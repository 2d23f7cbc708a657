// `pgmcp chat` audits the tool calls its agent makes, both ways it runs: in local mode (the pgmcp
// HTTP app started inside the chat, anonymous, the state in state.url) and against a running
// server with --url and a token (the server's /api/chat). The built program, real PostgreSQL,
// the scripted fake OpenAI API; the audit rows are read back from the state database.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import YAML from 'yaml';
import { startChatServer, type ChatServer } from '../helpers/chat-server.js';
import { startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { REPO_ROOT, realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';
import { PGMCP_BIN, withoutNode20Warning } from '../helpers/server.js';

const pg = await realPostgres('pgmcp chat tool calls in the audit log');
const KEY = 'sk-chat-audit-cli-0123456789';

interface AuditRow {
  outcome: string;
  principal_kind: string | null;
  principal_id: string | null;
  tool: string | null;
  duration_ms: number | null;
  details: Record<string, unknown>;
}

function runPgmcp(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PGMCP_BIN, ...args], {
      env,
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr: withoutNode20Warning(stderr) }));
  });
}

describe.skipIf(!pg)('pgmcp chat: tool calls in the audit log', { timeout: 90_000 }, () => {
  const state = throwawayDatabase(pg!, 'pgmcp_chat_audit_cli');
  let fake: FakeLlm;
  let home: string;
  let config: string;

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    LANG: 'C.UTF-8',
    OPENAI_API_KEY: KEY,
    OPENAI_BASE_URL: fake.baseUrl,
    PGMCP_LOG_LEVEL: 'warn',
    ...extra,
  });
  /** The tool_call rows written since `since`. */
  const rowsSince = (since: Date): Promise<AuditRow[]> =>
    withClient(
      state.url,
      async (c) =>
        (
          await c.query<AuditRow>(
            `SELECT outcome, principal_kind, principal_id, tool, duration_ms, details
               FROM pgmcp.audit WHERE event = 'tool_call' AND at >= $1 ORDER BY id`,
            [since],
          )
        ).rows,
    );

  beforeAll(async () => {
    fake = await startFakeLlm({
      flavor: 'openai',
      apiKey: KEY,
      script: (r) =>
        r.toolResults.length === 0
          ? { toolCalls: [{ name: 'query_database', args: { query: 'SELECT 1 AS one' } }] }
          : { text: 'Done.' },
    });
    home = mkdtempSync(join(tmpdir(), 'pgmcp-chat-audit-'));
    config = join(home, 'pgmcp.yaml');
    writeFileSync(config, YAML.stringify({ state: { url: state.url } }));
  });
  afterAll(async () => {
    await fake?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('local mode: the call is audited in the state database', async () => {
    const since = new Date();
    const run = await runPgmcp(
      ['chat', '--config', config, '--database', pg!.url, '--once', 'Run it'],
      env(),
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Done.');
    // The chat closed its server (and flushed the audit) before it exited.
    const rows = await rowsSince(since);
    expect(rows).toEqual([
      expect.objectContaining({
        outcome: 'success',
        principal_kind: 'anonymous',
        tool: 'query_database',
      }),
    ]);
    expect(rows[0]!.duration_ms).toBeGreaterThanOrEqual(0);
  });

  describe('against a server (--url)', () => {
    let server: ChatServer;
    let token: string;
    beforeAll(async () => {
      server = await startChatServer({
        database: pg!.url,
        requireAuth: true,
        config: { state: { url: state.url }, llm: { default: 'openai' } },
        env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseUrl },
      });
      token = await server.token('cli-auditor');
    });
    afterAll(async () => {
      await server?.close();
    });

    it('the call is audited with the caller and the conversation', async () => {
      const since = new Date();
      const run = await runPgmcp(
        ['chat', '--url', server.origin, '--once', 'Run it', '--json'],
        env({ PGMCP_TOKEN: token }),
      );
      expect(run.code).toBe(0);
      const answer = JSON.parse(run.stdout) as { metadata: { conversationId: string } };
      let rows: AuditRow[] = [];
      await vi.waitFor(
        async () => {
          rows = await rowsSince(since);
          expect(rows).toHaveLength(1);
        },
        { timeout: 10_000, interval: 100 },
      );
      expect(rows[0]).toMatchObject({
        outcome: 'success',
        principal_kind: 'token',
        principal_id: 'cli-auditor',
        tool: 'query_database',
        details: { conversation_id: answer.metadata.conversationId },
      });
    });
  });
});
