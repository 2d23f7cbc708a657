// Every tool call is audited, whoever makes it: the chat agent's calls (POST /api/chat) reach
// pgmcp.audit in the state database and mcp.exchange in the served one exactly as an MCP
// client's tools/call does — the caller, the tool, the outcome with its error code, the
// duration, the arguments (exchange log, logArguments on) — and carry the conversation's id.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { applyRegistryScripts, pgRunner } from '../../src/tools/handlers/index.js';
import {
  sendChat,
  startChatServer,
  toolParts,
  userMessage,
  type ChatServer,
} from '../helpers/chat-server.js';
import {
  startFakeLlm,
  type FakeLlm,
  type FakeRequest,
  type FakeTurn,
} from '../helpers/fake-llm.js';
import { realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';

const pg = await realPostgres('chat tool calls in the audit log');

interface AuditRow {
  event: string;
  outcome: string;
  principal_kind: string | null;
  principal_id: string | null;
  database: string | null;
  tool: string | null;
  duration_ms: number | null;
  details: Record<string, unknown>;
}

interface ExchangeRow {
  user_id: string | null;
  method: string;
  name: string | null;
  outcome: string;
  error_code: string | null;
  arguments: unknown;
  duration_ms: number;
}

describe.skipIf(!pg)('the audit of chat tool calls', () => {
  const state = throwawayDatabase(pg!, 'pgmcp_chat_audit_state');
  const served = throwawayDatabase(pg!, 'pgmcp_chat_audit_db');
  let fake: FakeLlm;
  let server: ChatServer;
  let alice: string;
  let script: (request: FakeRequest) => FakeTurn = () => ({ text: 'unscripted' });

  const auditRows = (): Promise<AuditRow[]> =>
    withClient(
      state.url,
      async (c) =>
        (
          await c.query<AuditRow>(
            `SELECT event, outcome, principal_kind, principal_id, database, tool, duration_ms, details
               FROM pgmcp.audit WHERE event = 'tool_call' ORDER BY id`,
          )
        ).rows,
    );
  const exchangeRows = (): Promise<ExchangeRow[]> =>
    withClient(
      served.url,
      async (c) =>
        (
          await c.query<ExchangeRow>(
            `SELECT user_id, method, name, outcome, error_code, arguments, duration_ms
               FROM mcp.exchange WHERE method = 'tools/call' ORDER BY id`,
          )
        ).rows,
    );
  /** The rows written after `before`, once there are `count` of them (writes are batched). */
  const newRows = async <T>(read: () => Promise<T[]>, before: number, count: number) => {
    let rows: T[] = [];
    await vi.waitFor(
      async () => {
        rows = (await read()).slice(before);
        expect(rows.length).toBe(count);
      },
      { timeout: 10_000, interval: 100 },
    );
    return rows;
  };

  beforeAll(async () => {
    // The registry schema makes the served database keep the exchange log.
    await withClient(served.url, (c) => applyRegistryScripts(pgRunner(c)));
    fake = await startFakeLlm({ flavor: 'openai', script: (r) => script(r) });
    server = await startChatServer({
      database: served.url,
      requireAuth: true,
      config: {
        state: { url: state.url },
        database: { exchangeLog: { logArguments: true } },
        llm: { default: 'openai' },
      },
      env: { OPENAI_API_KEY: 'sk-audit-test-key-123456', OPENAI_BASE_URL: fake.baseUrl },
    });
    alice = await server.token('alice');
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
  });

  it('records a chat tool call with the caller, the conversation, the outcome and the duration', async () => {
    const audited = (await auditRows()).length;
    const exchanged = (await exchangeRows()).length;
    script = (r) =>
      r.toolResults.length === 0
        ? { toolCalls: [{ name: 'query_database', args: { query: 'SELECT 6 * 7 AS answer' } }] }
        : r.toolResults.length === 1
          ? { toolCalls: [{ name: 'query_database', args: { query: 'SELECT * FROM no_such' } }] }
          : { text: 'Done.' };
    const turn = await sendChat(server.origin, [userMessage('Compute, then fail')], {
      token: alice,
      id: 'conv_audit_1',
    });
    expect(toolParts(turn.message).map((p) => p.output?.isError)).toEqual([false, true]);

    const [ok, failed] = await newRows(auditRows, audited, 2);
    expect(ok).toMatchObject({
      event: 'tool_call',
      outcome: 'success',
      principal_kind: 'token',
      principal_id: 'alice',
      database: server.app.db.name,
      tool: 'query_database',
      details: { conversation_id: 'conv_audit_1' },
    });
    expect(ok!.duration_ms).toBeGreaterThanOrEqual(0);
    expect(failed).toMatchObject({
      outcome: 'failure',
      principal_id: 'alice',
      tool: 'query_database',
      // The SQLSTATE, as an MCP call's failure records it.
      details: { conversation_id: 'conv_audit_1', error_code: '42P01' },
    });

    const [x1, x2] = await newRows(exchangeRows, exchanged, 2);
    expect(x1).toMatchObject({
      user_id: 'alice',
      method: 'tools/call',
      name: 'query_database',
      outcome: 'ok',
      error_code: null,
      arguments: { query: 'SELECT 6 * 7 AS answer' },
    });
    expect(x2).toMatchObject({
      outcome: 'error',
      error_code: '42P01',
      arguments: { query: 'SELECT * FROM no_such' },
    });
  });

  it("records a chat call in the same shape as an MCP client's call of the same tool", async () => {
    const audited = (await auditRows()).length;
    const exchanged = (await exchangeRows()).length;
    const client = new Client({ name: 'audit-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${alice}` } },
      }),
    );
    try {
      const result = await client.callTool({
        name: 'query_database',
        arguments: { query: 'SELECT 1 AS one' },
      });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    script = (r) =>
      r.toolResults.length === 0
        ? { toolCalls: [{ name: 'query_database', args: { query: 'SELECT 1 AS one' } }] }
        : { text: 'One.' };
    await sendChat(server.origin, [userMessage('One?')], { token: alice, id: 'conv_audit_2' });

    const [mcp, chat] = await newRows(auditRows, audited, 2);
    const shape = ({ duration_ms: _d, details: _x, ...row }: AuditRow) => row;
    expect(shape(chat!)).toEqual(shape(mcp!));
    expect(mcp!.details).toEqual({ server: expect.stringMatching(/:\d+$/) as unknown });
    expect(chat!.details).toEqual({
      conversation_id: 'conv_audit_2',
      server: mcp!.details['server'],
    });

    const [mcpX, chatX] = await newRows(exchangeRows, exchanged, 2);
    const xshape = ({ duration_ms: _d, ...row }: ExchangeRow) => row;
    expect(xshape(chatX!)).toEqual(xshape(mcpX!));
  });
  it('records a refused call with the code an MCP call records for the same refusal', async () => {
    // A routine the chat offers, dropped while the model is thinking: it is gone when called.
    // (NOTIFY pgmcp_catalog is what the event trigger of pgmcp install sends on DDL.)
    await withClient(served.url, (c) =>
      c.query(`CREATE FUNCTION public.audit_vanishing() RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT 1';
               COMMENT ON FUNCTION public.audit_vanishing IS '@mcp Soon gone.';
               NOTIFY pgmcp_catalog;`),
    );
    await vi.waitFor(() => expect(server.app.registry.tool('audit_vanishing')).toBeDefined(), {
      timeout: 10_000,
    });
    const dropped = async () => {
      await withClient(served.url, (c) =>
        c.query('DROP FUNCTION public.audit_vanishing(); NOTIFY pgmcp_catalog;'),
      );
      await vi.waitFor(() => expect(server.app.registry.tool('audit_vanishing')).toBeUndefined(), {
        timeout: 10_000,
      });
    };
    const audited = (await auditRows()).length;
    const exchanged = (await exchangeRows()).length;
    script = (r) =>
      r.toolResults.length === 0
        ? { toolCalls: [{ name: 'query_database', args: { limit: 5 } }] }
        : r.toolResults.length === 1
          ? { toolCalls: [{ name: 'audit_vanishing', args: {} }], wait: dropped() }
          : { text: 'Done.' };
    const turn = await sendChat(server.origin, [userMessage('Try both')], {
      token: alice,
      id: 'conv_audit_3',
    });
    expect(toolParts(turn.message).map((p) => [p.output?.isError, p.output?.text])).toEqual([
      [true, expect.stringMatching(/^Invalid arguments for query_database/)],
      [true, 'The tool audit_vanishing is no longer available.'],
    ]);

    // The same refusals through the MCP SDK client.
    const client = new Client({ name: 'audit-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${alice}` } },
      }),
    );
    try {
      const invalid = await client.callTool({ name: 'query_database', arguments: { limit: 5 } });
      expect(invalid.isError).toBe(true);
      expect(invalid._meta?.['pgmcp/error']).toEqual({ code: 'PGMCP301' });
      await expect(client.callTool({ name: 'audit_vanishing', arguments: {} })).rejects.toThrow(
        /Unknown tool: audit_vanishing/,
      );
    } finally {
      await client.close();
    }

    const [chatInvalid, chatGone, mcpInvalid, mcpGone] = await newRows(auditRows, audited, 4);
    expect(chatInvalid).toMatchObject({
      outcome: 'failure',
      tool: 'query_database',
      details: { conversation_id: 'conv_audit_3', error_code: 'PGMCP301' },
    });
    expect(chatGone).toMatchObject({
      outcome: 'failure',
      tool: 'audit_vanishing',
      details: { conversation_id: 'conv_audit_3', error_code: '-32602' },
    });
    const shape = ({ duration_ms: _d, details, ...row }: AuditRow) => ({
      ...row,
      error_code: details['error_code'],
    });
    expect(shape(chatInvalid!)).toEqual(shape(mcpInvalid!));
    expect(shape(chatGone!)).toEqual(shape(mcpGone!));

    const [xInvalid, xGone, xMcpInvalid, xMcpGone] = await newRows(exchangeRows, exchanged, 4);
    expect(xInvalid).toMatchObject({ outcome: 'error', error_code: 'PGMCP301' });
    expect(xGone).toMatchObject({ outcome: 'error', error_code: '-32602' });
    const xshape = ({ duration_ms: _d, ...row }: ExchangeRow) => row;
    expect(xshape(xInvalid!)).toEqual(xshape(xMcpInvalid!));
    expect(xshape(xGone!)).toEqual(xshape(xMcpGone!));
  });
});
