// Start-up gate: while the app is still opening its databases, the lifecycle methods are
// answered and every other request waits; a failed start answers the waiting ones with an error.
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createSigner } from '../core/signed.js';
import { createRegistry } from '../tools/registry.js';
import { createDispatcher } from './dispatcher.js';
import { startStdioServer } from './stdio.js';
import { MODERN_VERSIONS } from './versions.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSIONS[0],
  'io.modelcontextprotocol/clientCapabilities': {},
};

function harness() {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  ready.catch(() => undefined);
  const registry = createRegistry();
  const dispatcher = createDispatcher({
    registry,
    logger: pino({ level: 'silent' }),
    serverInfo: { name: 'starting', version: '1' },
    signer: createSigner('k'),
    ready,
  });
  const input = new PassThrough();
  const output = new PassThrough();
  startStdioServer({ dispatcher, input, output, logger: pino({ level: 'silent' }) });
  const answers = new Map<unknown, Record<string, unknown>>();
  const waiting = new Map<unknown, (m: Record<string, unknown>) => void>();
  let buffer = '';
  output.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const message = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
      buffer = buffer.slice(nl + 1);
      answers.set(message['id'], message);
      waiting.get(message['id'])?.(message);
    }
  });
  const send = (id: number, method: string): void => {
    input.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { _meta: META } })}\n`);
  };
  const answer = (id: number): Promise<Record<string, unknown>> =>
    answers.has(id)
      ? Promise.resolve(answers.get(id)!)
      : new Promise((resolve) => waiting.set(id, resolve));
  return { registry, open, fail, send, answer, answers };
}

describe('dispatcher start-up gate', () => {
  it('answers server/discover at once; tools/list waits until ready', async () => {
    const h = harness();
    h.send(1, 'server/discover');
    expect((await h.answer(1))['result']).toMatchObject({ serverInfo: { name: 'starting' } });
    h.send(2, 'tools/list');
    h.send(3, 'server/discover');
    await h.answer(3);
    expect(h.answers.has(2)).toBe(false);
    h.registry.addTool({
      name: 'late',
      description: 'Registered during start-up.',
      inputSchema: { type: 'object' },
      call: async () => ({ content: [] }),
    });
    h.open();
    const list = await h.answer(2);
    expect((list['result'] as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
      'late',
    ]);
  });

  it('a failed start answers the waiting requests with an error', async () => {
    const h = harness();
    h.send(1, 'tools/list');
    h.send(2, 'server/discover');
    await h.answer(2);
    expect(h.answers.has(1)).toBe(false);
    h.fail(new Error('database gone'));
    expect(await h.answer(1)).toHaveProperty('error');
  });
});
