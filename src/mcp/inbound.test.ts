// The seam tells the transport at once about a cancellation or a client's answer that names no
// request held here (Link.elsewhere), inside a 2025-03-26 batch too: before the batch's own
// requests are answered, so another instance running the request hears it without waiting.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../core/principal.js';
import { createSigner } from '../core/signed.js';
import { createRegistry } from '../tools/registry.js';
import type { RequestChannel } from './channel.js';
import { createDispatcher } from './dispatcher.js';
import { deliver, inspect, type Link } from './inbound.js';
import { createOutbound } from './outbound.js';
import { createSession, type InFlight } from './session.js';

function harness() {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const registry = createRegistry();
  registry.addTool({
    name: 'wait',
    description: 'answers once released',
    inputSchema: { type: 'object' },
    call: async () => {
      await released;
      return { content: [{ type: 'text' as const, text: 'done' }] };
    },
  });
  const dispatcher = createDispatcher({
    registry,
    logger: pino({ level: 'silent' }),
    serverInfo: { name: 'test', version: '1' },
    signer: createSigner('k'),
  });
  const session = createSession('s', () => undefined, ANONYMOUS);
  session.protocolVersion = '2025-03-26';
  const inFlight: InFlight = new Map();
  const elsewhere: { cancel: unknown[]; answer: unknown[] } = { cancel: [], answer: [] };
  const channel = (): RequestChannel => ({
    session,
    principal: ANONYMOUS,
    inFlight,
    notify: () => undefined,
    request: () => Promise.reject(new Error('no client')),
  });
  const link: Link = {
    session,
    inFlight,
    outbound: createOutbound(),
    channel,
    elsewhere: {
      cancel: (id, reason) => elsewhere.cancel.push([id, reason]),
      answer: (message) => elsewhere.answer.push(message),
    },
  };
  return { dispatcher, link, inFlight, elsewhere, release };
}

const cancelOf = (requestId: string) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId, reason: 'gave up' },
});

describe('what names no request held here (Link.elsewhere)', () => {
  it('a batch tells it before its own requests are answered', async () => {
    const { dispatcher, link, elsewhere, release } = harness();
    const answer = { jsonrpc: '2.0', id: 's-other-1', result: { action: 'accept' } };
    const delivering = deliver(
      dispatcher,
      inspect([
        { jsonrpc: '2.0', id: 'w', method: 'tools/call', params: { name: 'wait', arguments: {} } },
        cancelOf('runs-elsewhere'),
        answer,
      ]),
      link,
    );
    let settled = false;
    void delivering.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(elsewhere.cancel).toEqual([['runs-elsewhere', 'gave up']]);
    expect(elsewhere.answer).toEqual([answer]);
    release();
    const delivery = await delivering;
    expect(delivery.kind).toBe('batch');
  });

  it('a cancellation of a request in flight here stays here', async () => {
    const { dispatcher, link, inFlight, elsewhere } = harness();
    const controller = new AbortController();
    inFlight.set('local', controller);
    await deliver(dispatcher, inspect([cancelOf('local')]), link);
    await deliver(dispatcher, inspect(cancelOf('local')), link);
    expect(controller.signal.aborted).toBe(true);
    expect(elsewhere.cancel).toEqual([]);
  });

  it('a single cancellation or answer for nothing here is told too', async () => {
    const { dispatcher, link, elsewhere } = harness();
    await deliver(dispatcher, inspect(cancelOf('gone')), link);
    await deliver(dispatcher, inspect({ jsonrpc: '2.0', id: 'x-1', result: {} }), link);
    expect(elsewhere.cancel).toEqual([['gone', 'gave up']]);
    expect(elsewhere.answer).toEqual([{ jsonrpc: '2.0', id: 'x-1', result: {} }]);
  });
});
