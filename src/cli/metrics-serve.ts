// `serve --http` with metrics.enabled: the app's exchanges counted, the gauges pointed at the
// parts they read, and /metrics on its own address when metrics.listen names one.
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { configError } from '../config/index.js';
import { listenProblem } from '../http/listen-probe.js';
import { startMetricsListener } from '../http/metrics-route.js';
import type { HttpServer } from '../http/server.js';
import { openSseStreams } from '../http/sse.js';
import type { App } from './app.js';
import { countExchanges } from './metrics-feeds.js';
import type { PromMetrics } from './metrics.js';

export interface MetricsService {
  /** Where /metrics is served apart from the main port; null: on the main port. */
  readonly url: string | null;
  close(): Promise<void>;
}

export async function serveMetrics(
  config: Config,
  app: App,
  http: HttpServer,
  prom: PromMetrics,
  logger: Logger,
): Promise<MetricsService> {
  const stopCounting = countExchanges(app, prom);
  prom.observe({
    pools: () => app.databases.map(({ name, db }) => ({ database: name, stats: db.poolStats() })),
    embedded: () =>
      app.databases
        .filter(({ db }) => db.embedded !== null)
        .map(({ name, db }) => ({ database: name, running: db.embedded!.running })),
    sessions: () => http.sessions.size,
    streams: openSseStreams,
  });
  const listen = config.metrics.listen;
  if (listen === null) return { url: null, close: async () => stopCounting() };
  const listener = await startMetricsListener(listen, prom, logger).catch((error: unknown) => {
    stopCounting();
    const at = listen.lastIndexOf(':');
    const host = listen.slice(0, at).replace(/^\[(.*)\]$/, '$1');
    const problem = listenProblem(error, host, Number(listen.slice(at + 1)));
    const why = problem?.replace(/^http: /, '') ?? `cannot listen on ${listen}`;
    throw configError(`metrics.listen: ${why}`, 'metrics.listen');
  });
  logger.info({ url: listener.url }, 'metrics served');
  return {
    url: listener.url,
    async close() {
      stopCounting();
      await listener.close();
    },
  };
}
