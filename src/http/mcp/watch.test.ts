// A stream is unwatched however its response ends, also when its client was gone before the
// watch began: a real HTTP server and a client socket that closes before watchStream runs, and
// one that closes after. (Over HTTP with real processes: test/e2e/stream-credentials.test.ts.)
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../core/principal.js';
import { createStreamWatch, MIN_RECHECK_MS, type StreamWatch } from '../stream-watch.js';
import { watchStream } from './watch.js';

const TOKEN = `pgmcp_${'a'.repeat(43)}`;
const PRINCIPAL: Principal = {
  kind: 'token',
  userId: 'streamer',
  tenantId: null,
  roles: [],
  scopes: [],
  claims: {},
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server whose one request is handed over with its response open (SSE headers sent). */
async function openExchange() {
  let handed!: (pair: { req: IncomingMessage; res: ServerResponse }) => void;
  const arrived = new Promise<{ req: IncomingMessage; res: ServerResponse }>((r) => (handed = r));
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    handed({ req, res });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = request({
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  client.on('error', () => undefined);
  client.end();
  const { req, res } = await arrived;
  // What the authentication hook leaves on a Fastify request.
  const fastifyReq = Object.assign(req, { principal: PRINCIPAL }) as unknown as FastifyRequest;
  return { server, client, req: fastifyReq, res };
}

describe('watchStream', () => {
  let watch: StreamWatch | null = null;
  let rechecks = 0;
  const cleanups: (() => void)[] = [];

  const newWatch = (): StreamWatch =>
    createStreamWatch({
      intervalMs: MIN_RECHECK_MS,
      recheck: {
        lapsedBearers: async () => {
          rechecks++;
          return new Map();
        },
      },
      oauthClockSkewSeconds: 0,
      logger: pino({ level: 'silent' }),
    });

  afterEach(() => {
    watch?.close();
    for (const cleanup of cleanups.splice(0)) cleanup();
    rechecks = 0;
  });

  it('does not keep watching a stream whose client was gone before it was watched', async () => {
    watch = newWatch();
    const { server, client, req, res } = await openExchange();
    cleanups.push(() => server.close());
    client.destroy();
    await once(res, 'close');
    let lapsed = false;
    watchStream(watch, req, res, () => (lapsed = true));
    await sleep(MIN_RECHECK_MS * 4);
    expect(watch.size).toBe(0);
    // No timer left behind: nothing is re-checked for it.
    expect(rechecks).toBe(0);
    expect(lapsed).toBe(false);
  });

  it('watches an open stream until its client goes away, then stops re-checking', async () => {
    watch = newWatch();
    const { server, client, req, res } = await openExchange();
    cleanups.push(() => server.close());
    watchStream(watch, req, res, () => undefined);
    expect(watch.size).toBe(1);
    await sleep(MIN_RECHECK_MS * 3);
    expect(rechecks).toBeGreaterThan(0);
    client.destroy();
    await once(res, 'close');
    await sleep(10);
    expect(watch.size).toBe(0);
    const seen = rechecks;
    await sleep(MIN_RECHECK_MS * 4);
    expect(rechecks).toBe(seen);
  });
});
