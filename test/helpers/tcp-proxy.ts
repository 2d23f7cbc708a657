// A TCP proxy on loopback in front of a server, for network faults: `stall()` stops forwarding
// in both directions (open connections go silent, new ones are accepted and never connected
// through) without closing anything, as a network that stops forwarding does; `resume()`
// forwards again. Nothing is buffered past the kernel's own buffers while stalled.
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let stalled = false;
  let accepted = 0;
  const pairs = new Set<{ client: Socket; upstream: Socket | null }>();
  const held: Array<() => void> = [];

  const pipe = (pair: { client: Socket; upstream: Socket | null }): void => {
    const upstream = createConnection(target);
    pair.upstream = upstream;
    const forward = (from: Socket, to: Socket): void => {
      from.on('data', (chunk) => {
        if (!to.write(chunk)) from.pause();
      });
      to.on('drain', () => {
        if (!stalled) from.resume();
      });
    };
    forward(pair.client, upstream);
    forward(upstream, pair.client);
    const end = (): void => {
      pair.client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    pair.client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
    if (stalled) {
      pair.client.pause();
      upstream.pause();
    }
  };

  const server: Server = createServer((client) => {
    accepted += 1;
    const pair = { client, upstream: null as Socket | null };
    pairs.add(pair);
    client.on('error', () => client.destroy());
    if (stalled) {
      // Accepted, but nothing goes through until resume().
      client.pause();
      held.push(() => pipe(pair));
    } else {
      pipe(pair);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    port,
    get accepted() {
      return accepted;
    },
    stall() {
      stalled = true;
      for (const { client, upstream } of pairs) {
        client.pause();
        upstream?.pause();
      }
    },
    resume() {
      stalled = false;
      for (const start of held.splice(0)) start();
      for (const { client, upstream } of pairs) {
        client.resume();
        upstream?.resume();
      }
    },
    async close() {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream?.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
