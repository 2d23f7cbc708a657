// GET /metrics in the Prometheus text format: on the main port for callers with the admin role
// (or anyone, with metrics.allowAnonymous), or on an address of its own (metrics.listen) that
// serves nothing else, so it can stay off the public network.
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import '../api/fastify-types.js';

export const METRICS_PATH = '/metrics';

/** What /metrics serves (cli/metrics.ts builds it with prom-client). */
export interface MetricsExposition {
  readonly contentType: string;
  render(): Promise<string>;
}

export function registerMetricsRoute(
  app: FastifyInstance,
  options: { exposition: MetricsExposition; allowAnonymous: boolean; logger: Logger },
): void {
  const { exposition, logger } = options;
  app.get(
    METRICS_PATH,
    { config: options.allowAnonymous ? {} : { auth: 'required', roles: ['admin'] } },
    async (_req, reply) => {
      const body = await exposition.render().catch((error: unknown) => {
        logger.warn({ err: { message: (error as Error).message } }, 'metrics: render failed');
        return null;
      });
      if (body === null) return reply.code(503).type('text/plain').send('metrics unavailable\n');
      return reply.code(200).header('content-type', exposition.contentType).send(body);
    },
  );
}

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

/** A plain HTTP server on host:port answering GET /metrics only (404 for anything else). */
export async function startMetricsListener(
  listen: string,
  exposition: MetricsExposition,
  logger: Logger,
): Promise<MetricsListener> {
  const at = listen.lastIndexOf(':');
  const host = listen.slice(0, at).replace(/^\[(.*)\]$/, '$1');
  const port = Number(listen.slice(at + 1));
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== METRICS_PATH) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    exposition.render().then(
      (body) => res.writeHead(200, { 'content-type': exposition.contentType }).end(body),
      (error: unknown) => {
        logger.warn({ err: { message: (error as Error).message } }, 'metrics: render failed');
        res.writeHead(503, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}${METRICS_PATH}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
