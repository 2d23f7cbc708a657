// The last check before a tool's answer leaves: a success whose structuredContent does not match
// the tool's outputSchema is not sent (the official client would throw on it); the caller gets
// a tool error with a reference, and the log has the tool and what did not match.
import { PassThrough, Writable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createSigner } from '../core/signed.js';
import type { ToolSpec } from '../core/specs.js';
import { createRegistry } from '../tools/registry.js';
import { createDispatcher } from './dispatcher.js';
import { startStdioServer } from './stdio.js';

/** The SDK client's side of pgmcp's stdio framing (one JSON message per line), in process. */
function linesTransport(toServer: PassThrough, fromServer: PassThrough): Transport {
  let buffer = '';
  const transport: Transport = {
    async start() {
      fromServer.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          transport.onmessage?.(JSON.parse(line) as JSONRPCMessage);
        }
      });
    },
    async send(message) {
      toServer.write(`${JSON.stringify(message)}\n`);
    },
    async close() {
      toServer.end();
      transport.onclose?.();
    },
  };
  return transport;
}

const SCHEMA = {
  type: 'object',
  properties: { count: { type: 'integer' } },
  required: ['count'],
};

const tool = (name: string, answer: Record<string, unknown> | undefined): ToolSpec => ({
  name,
  description: name,
  inputSchema: { type: 'object', properties: {} },
  outputSchema: SCHEMA,
  async call() {
    return {
      content: [{ type: 'text', text: 'secret-free text' }],
      ...(answer === undefined ? {} : { structuredContent: answer }),
    };
  },
});

describe('tools/call: a success is held to the outputSchema', () => {
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  async function connect(): Promise<{ client: Client; logs: Record<string, unknown>[] }> {
    const logs: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const registry = createRegistry();
    registry.addTool(tool('fine', { count: 3 }));
    registry.addTool(tool('wrong_type', { count: 'three' }));
    registry.addTool(tool('no_structured', undefined));
    const dispatcher = createDispatcher({
      registry,
      logger: pino({ level: 'info' }, sink),
      serverInfo: { name: 'output-check', version: '1' },
      signer: createSigner('k'),
    });
    const toServer = new PassThrough();
    const fromServer = new PassThrough();
    startStdioServer({
      dispatcher,
      input: toServer,
      output: fromServer,
      logger: pino({ level: 'silent' }),
    });
    const client = new Client({ name: 'output-check', version: '1' });
    await client.connect(linesTransport(toServer, fromServer));
    clients.push(client);
    await client.listTools(); // the SDK client validates against what it listed
    return { client, logs };
  }

  it('sends a conforming answer as it is', async () => {
    const { client } = await connect();
    const result = await client.callTool({ name: 'fine', arguments: {} });
    expect(result.structuredContent).toEqual({ count: 3 });
  });

  for (const name of ['wrong_type', 'no_structured']) {
    it(`${name}: withheld, a tool error with a reference (PGMCP900), logged`, async () => {
      const { client, logs } = await connect();
      const result = await client.callTool({ name, arguments: {} });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      const message = (result.content as { text: string }[])[0]!.text;
      expect(message).toMatch(
        new RegExp(
          `^Internal error: the answer of ${name} does not match its outputSchema, so it was not sent \\(reference (\\S+)\\)`,
        ),
      );
      expect(result._meta).toEqual({ 'pgmcp/error': { code: 'PGMCP900' } });
      const ref = /reference (\S+)\)/.exec(message)![1];
      const logged = logs.find((l) => l['ref'] === ref);
      expect(logged).toMatchObject({
        level: 50,
        tool: name,
        msg: 'tool answer does not match its outputSchema',
      });
      expect(String((logged!['issues'] as string[])[0])).toMatch(
        name === 'wrong_type' ? /structuredContent\.count must be integer/ : /missing/,
      );
    });
  }
});
