import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../tools/registry.js';
import { createDispatcher } from './dispatcher.js';
import { createSigner } from '../core/signed.js';
import { startStdioServer } from './stdio.js';

function harness() {
  const registry = createRegistry();
  registry.addTool({
    name: 'echo',
    description: 'Echoes its text.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    async call(args, ctx) {
      ctx.progress(1, 2);
      ctx.log('info', 'echoing');
      return { content: [{ type: 'text', text: String(args['text']) }] };
    },
  });
  registry.addTool({
    name: 'wait',
    description: 'Waits until cancelled.',
    inputSchema: { type: 'object' },
    call: (_args, ctx) =>
      new Promise((resolve) =>
        ctx.signal.addEventListener('abort', () => resolve({ content: [] })),
      ),
  });
  registry.addTool({
    name: 'ask',
    description: 'Asks the client for a sample.',
    inputSchema: { type: 'object' },
    async call(_args, ctx) {
      const { q } = await ctx.requestInput({
        q: { method: 'sampling/createMessage', params: { maxTokens: 5 } },
      });
      return { content: [{ type: 'text', text: JSON.stringify(q) }] };
    },
  });
  const dispatcher = createDispatcher({
    registry,
    logger: pino({ level: 'silent' }),
    serverInfo: { name: 'test', version: '1' },
    signer: createSigner('k'),
  });
  const input = new PassThrough();
  const output = new PassThrough();
  const server = startStdioServer({ dispatcher, input, output, logger: pino({ level: 'silent' }) });
  const received: Record<string, unknown>[] = [];
  let buffer = '';
  const waiters: (() => void)[] = [];
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      received.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
      waiters.splice(0).forEach((w) => w());
    }
  });
  const send = (message: unknown): void => {
    input.write(typeof message === 'string' ? `${message}\n` : `${JSON.stringify(message)}\n`);
  };
  const next = async (
    pred: (m: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown>> => {
    for (;;) {
      const found = received.find(pred);
      if (found) {
        received.splice(received.indexOf(found), 1);
        return found;
      }
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const byId = (id: unknown) => next((m) => m['id'] === id && ('result' in m || 'error' in m));
  const init = async (version = '2025-11-25', capabilities: Record<string, unknown> = {}) => {
    send({
      jsonrpc: '2.0',
      id: 'init',
      method: 'initialize',
      params: { protocolVersion: version, capabilities, clientInfo: { name: 't', version: '1' } },
    });
    const answer = await byId('init');
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return answer;
  };
  return { send, next, byId, init, input, server, received };
}

describe('stdio transport', () => {
  it('negotiates, lists and calls with progress and logs on the same stream', async () => {
    const h = harness();
    const init = await h.init();
    expect(init['result']).toMatchObject({
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'test' },
    });
    h.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 'hi' }, _meta: { progressToken: 'p' } },
    });
    const progress = await h.next((m) => m['method'] === 'notifications/progress');
    expect(progress['params']).toEqual({ progressToken: 'p', progress: 1, total: 2 });
    const log = await h.next((m) => m['method'] === 'notifications/message');
    expect(log['params']).toMatchObject({ level: 'info', data: 'echoing' });
    expect((await h.byId(2))['result']).toEqual({ content: [{ type: 'text', text: 'hi' }] });
  });

  it('negotiates an unknown newer version down and keeps ids verbatim', async () => {
    const h = harness();
    h.send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2099-01-01', capabilities: {} },
    });
    expect((await h.byId(0))['result']).toMatchObject({ protocolVersion: '2025-11-25' });
    h.send({ jsonrpc: '2.0', id: 'a-string-id', method: 'ping' });
    expect(await h.byId('a-string-id')).toEqual({ jsonrpc: '2.0', id: 'a-string-id', result: {} });
  });

  it('answers garbage with a parse error and keeps serving', async () => {
    const h = harness();
    h.send('{not json');
    const parse = await h.next((m) => m['id'] === null);
    expect((parse['error'] as { code: number }).code).toBe(-32700);
    h.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
    expect(((await h.byId(5))['error'] as { code: number }).code).toBe(-32600); // not initialized yet
    await h.init();
    h.send({ jsonrpc: '2.0', id: 6, method: 'nope/nothing' });
    expect(((await h.byId(6))['error'] as { code: number }).code).toBe(-32601);
    h.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'missing' } });
    expect(((await h.byId(7))['error'] as { code: number }).code).toBe(-32602);
    h.send({
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'echo', arguments: { text: 3 } },
    });
    expect((await h.byId(8))['result']).toMatchObject({ isError: true });
  });

  it('accepts batches only for 2025-03-26', async () => {
    const h = harness();
    await h.init('2025-06-18');
    h.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(((await h.next((m) => m['id'] === null))['error'] as { code: number }).code).toBe(
      -32600,
    );
    const b = harness();
    await b.init('2025-03-26');
    const answers: unknown[] = [];
    b.input.write(
      `${JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'ping' },
        { jsonrpc: '2.0', id: 2, method: 'ping' },
      ])}\n`,
    );
    await new Promise((r) => setTimeout(r, 50));
    answers.push(...b.received.splice(0));
    expect(answers).toEqual([
      [
        { jsonrpc: '2.0', id: 1, result: {} },
        { jsonrpc: '2.0', id: 2, result: {} },
      ],
    ]);
  });

  it('cancels a running request and does not answer it', async () => {
    const h = harness();
    await h.init();
    h.send({ jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'wait' } });
    await new Promise((r) => setTimeout(r, 20));
    h.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'w', reason: 'test' },
    });
    h.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    await h.byId('after');
    await new Promise((r) => setTimeout(r, 20));
    expect(h.received.find((m) => m['id'] === 'w')).toBeUndefined();
  });

  it('routes server→client requests and their replies', async () => {
    const h = harness();
    await h.init('2025-11-25', { sampling: {} });
    h.send({ jsonrpc: '2.0', id: 'q', method: 'tools/call', params: { name: 'ask' } });
    const request = await h.next((m) => m['method'] === 'sampling/createMessage');
    h.send({
      jsonrpc: '2.0',
      id: request['id'],
      result: { role: 'assistant', content: { type: 'text', text: 'ok' } },
    });
    const answer = (await h.byId('q'))['result'] as { content: { text: string }[] };
    expect(JSON.parse(answer.content[0]!.text)).toMatchObject({ content: { text: 'ok' } });
  });

  it('refuses input a client did not declare it can give', async () => {
    const h = harness();
    await h.init();
    h.send({ jsonrpc: '2.0', id: 'q', method: 'tools/call', params: { name: 'ask' } });
    expect((await h.byId('q'))['result']).toMatchObject({ isError: true });
  });

  it('serves the modern era statelessly with input-required rounds', async () => {
    const h = harness();
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
    };
    h.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } });
    expect((await h.byId(1))['result']).toMatchObject({
      resultType: 'complete',
      supportedVersions: expect.arrayContaining(['2026-07-28', '2025-11-25']),
    });
    h.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask', _meta: meta } });
    const round1 = (await h.byId(2))['result'] as Record<string, unknown>;
    expect(round1).toMatchObject({
      resultType: 'input_required',
      inputRequests: { q: { method: 'sampling/createMessage' } },
    });
    const answer = { role: 'assistant', content: { type: 'text', text: 'yes' } };
    h.send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 'ask',
        _meta: meta,
        requestState: round1['requestState'],
        inputResponses: { q: answer },
      },
    });
    expect((await h.byId(3))['result']).toMatchObject({ resultType: 'complete' });
    const tampered = `${String(round1['requestState']).slice(0, -2)}xx`;
    h.send({
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'ask', _meta: meta, requestState: tampered, inputResponses: { q: answer } },
    });
    expect(((await h.byId(4))['error'] as { code: number }).code).toBe(-32602);
    h.send({
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/list',
      params: { _meta: { ...meta, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } },
    });
    expect((await h.byId(5))['error']).toMatchObject({
      code: -32022,
      data: { requested: '2030-01-01' },
    });
    h.send({ jsonrpc: '2.0', id: 6, method: 'ping', params: { _meta: meta } });
    expect(((await h.byId(6))['error'] as { code: number }).code).toBe(-32601);
  });

  it('rejects a tampered pagination cursor', async () => {
    const h = harness();
    await h.init();
    h.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { cursor: 'eyJsIjoidG9vbHMiLCJvIjowfQ.AAAA' },
    });
    expect(((await h.byId(1))['error'] as { code: number }).code).toBe(-32602);
  });
});
