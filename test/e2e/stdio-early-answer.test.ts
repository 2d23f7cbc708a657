// Cold start: a stdio server answers initialize and server/discover while its database is still
// connecting (clients give the first answer a second or less), and every other request waits
// for the start-up to finish. The database here is a loopback socket that accepts and never
// says a word, so "still connecting" is a fact of the test, not a matter of timing.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modernMeta, serverEnv, spawnStdio } from '../helpers/server.js';

describe('stdio: the first answers come before the database is ready', () => {
  let silent: net.Server;
  let port: number;
  const held = new Set<net.Socket>();

  beforeAll(async () => {
    silent = net.createServer((socket) => {
      held.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => held.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    for (const socket of held) socket.destroy();
    if (silent.listening) await new Promise((resolve) => silent.close(resolve));
  });

  /** Resolves once pgmcp has opened its connection to the silent database. */
  const connected = (): Promise<void> =>
    held.size > 0
      ? Promise.resolve()
      : new Promise((resolve) => silent.once('connection', () => resolve()));

  it('answers server/discover, initialize and ping while connecting; tools/list waits for the start-up', async () => {
    const peer = spawnStdio(['--database', `postgres://postgres@127.0.0.1:${port}/slowdb`], {
      env: serverEnv({ PGMCP_LOG_LEVEL: 'warn' }),
    });
    try {
      const discover = await peer.request(1, 'server/discover', { _meta: modernMeta() });
      expect(discover.result.serverInfo).toMatchObject({ name: 'slowdb' });
      expect(discover.result.capabilities.tools).toEqual({ listChanged: true });
      const init = await peer.request(2, 'initialize', {
        protocolVersion: '2025-11-25',
        capabilities: {},
        clientInfo: { name: 'early', version: '1' },
      });
      expect(init.result.protocolVersion).toBe('2025-11-25');
      peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect((await peer.request(3, 'ping')).result).toEqual({});

      // Both answers came while the database had said nothing at all.
      await connected();
      expect(held.size).toBeGreaterThan(0);

      // tools/list needs the start-up done: a ping sent after it is answered, it is not.
      peer.send({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} });
      expect((await peer.request(5, 'ping')).result).toEqual({});
      expect(peer.lines.some((line) => line.includes('"id":4'))).toBe(false);

      // The database goes away (hangs up, refuses new connections). A server whose database is
      // down still starts, as it always did (its routines arrive once the database answers):
      // now the waiting tools/list is answered, with the built-in tools.
      silent.close();
      for (const socket of held) socket.destroy();
      const list = await peer.next((m) => m.id === 4);
      expect(list.result.tools.map((t: { name: string }) => t.name)).toContain('query_database');
    } finally {
      await peer.stop('SIGKILL');
    }
  });
});
