// The exchange record keeps a call's arguments unless the tool says they hold a secret.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../core/principal.js';
import { createSigner } from '../core/signed.js';
import type { ExchangeRecord } from '../tools/handlers/exchange-log.js';
import { createRegistry } from '../tools/registry.js';
import type { RequestChannel } from './channel.js';
import { createDispatcher } from './dispatcher.js';
import { createSession } from './session.js';

/** A legacy dispatcher over `registry` whose exchange records are kept, and a channel to it. */
function recording(registry: ReturnType<typeof createRegistry>) {
  const records: ExchangeRecord[] = [];
  const dispatcher = createDispatcher({
    registry,
    logger: pino({ level: 'silent' }),
    serverInfo: { name: 'test', version: '1' },
    signer: createSigner('k'),
    onExchange: (record) => records.push(record),
  });
  const session = createSession('s', () => undefined, ANONYMOUS);
  session.protocolVersion = '2025-11-25';
  const channel: RequestChannel = {
    session,
    principal: ANONYMOUS,
    inFlight: new Map(),
    notify: () => undefined,
    request: () => Promise.reject(new Error('no client')),
  };
  return { records, dispatcher, channel };
}

describe('exchange records and sensitive arguments', () => {
  it('drops the arguments of a sensitiveArguments tool and keeps the others', async () => {
    const registry = createRegistry();
    const ok = async () => ({ content: [{ type: 'text' as const, text: 'ok' }] });
    const schema = { type: 'object', properties: { password: { type: 'string' } } };
    registry.addTool({ name: 'plain', description: 'p', inputSchema: schema, call: ok });
    registry.addTool({
      name: 'secret',
      description: 's',
      inputSchema: schema,
      sensitiveArguments: true,
      call: ok,
    });
    const { records, dispatcher, channel } = recording(registry);
    for (const name of ['plain', 'secret']) {
      const { response } = await dispatcher.handleRequest(
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name, arguments: { password: 'hunter22' } },
        },
        'legacy',
        channel,
      );
      expect(response).toHaveProperty('result');
    }
    expect(records.map((r) => [r.name, r.args])).toEqual([
      ['plain', { password: 'hunter22' }],
      ['secret', undefined],
    ]);
    expect(JSON.stringify(records[1])).not.toContain('hunter22');
  });

  it('records a tools/call once, by the invocation step; one refused before it, by the dispatcher', async () => {
    const registry = createRegistry();
    registry.addTool({
      name: 'plain',
      description: 'p',
      inputSchema: { type: 'object' },
      call: async () => ({ content: [{ type: 'text' as const, text: 'ok' }] }),
    });
    const { records, dispatcher, channel } = recording(registry);
    const send = (params: Record<string, unknown>) =>
      dispatcher.handleRequest(
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params },
        'legacy',
        channel,
      );
    await send({ name: 'plain', arguments: {} });
    await send({ name: 'missing', arguments: { a: 1 } });
    await send({ arguments: { a: 1 } });
    expect(records.map((r) => [r.method, r.name, r.outcome, r.errorCode])).toEqual([
      ['tools/call', 'plain', 'ok', null],
      ['tools/call', 'missing', 'error', -32602],
      ['tools/call', null, 'error', -32602],
    ]);
  });
});
