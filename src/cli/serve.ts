// `pgmcp serve`: stdio for desktop clients, Streamable HTTP for teams.
import YAML from 'yaml';
import type { Config } from '../config/index.js';
import { redactConfig } from '../config/index.js';
import { isLoopbackAddress } from '../http/origin.js';
import { createHttpServer } from '../http/server.js';
import { loadTlsMaterial } from '../http/tls.js';
import { startStdioServer } from '../mcp/stdio.js';
import { bindSessionNotifications } from '../mcp/subscriptions.js';
import { createApp } from './app.js';
import { createLogger } from './logger.js';
import { VERSION } from './version.js';

export function printConfig(config: Config): void {
  process.stdout.write(YAML.stringify(redactConfig(config)));
}

export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.log.level);
  // Read before the database starts, so a bad certificate path fails fast (exit 2).
  const tls = config.transport === 'http' ? loadTlsMaterial(config.http.tls) : null;
  const app = await createApp(config, logger);
  let stopping = false;
  const stop = async (code: number, why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ why }, 'shutting down');
    let exitCode = code;
    try {
      await Promise.race([closeAll(), new Promise((r) => setTimeout(r, 5_000).unref())]);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      exitCode = 1;
    } finally {
      logger.flush();
      process.exit(exitCode);
    }
  };
  let closeAll = async (): Promise<void> => app.close();
  process.on('SIGINT', () => void stop(0, 'SIGINT'));
  process.on('SIGTERM', () => void stop(0, 'SIGTERM'));
  process.on('unhandledRejection', (error) => logger.error({ err: error }, 'unhandled rejection'));

  if (config.transport === 'stdio') {
    const server = startStdioServer({
      dispatcher: app.dispatcher,
      input: process.stdin,
      output: process.stdout,
      logger,
    });
    // list_changed and resources/updated reach the stdio client as they do HTTP sessions.
    bindSessionNotifications(app.registry, () => [server.session]);
    logger.info(
      { database: app.db.name, writes: config.database.allowWrites },
      `pgmcp ${VERSION} serving MCP on stdio`,
    );
    void server.closed.then(() => stop(0, 'stdin closed'));
    return;
  }

  const http = createHttpServer({
    options: { ...config.http },
    dispatcher: app.dispatcher,
    registry: app.registry,
    logger,
    health: () => app.db.health(),
    edge: { corsOrigins: config.http.cors.origins, rateLimit: config.rateLimit, tls },
  });
  closeAll = async () => {
    app.shutdown.abort();
    await http.close();
    await app.close();
  };
  const { url } = await http.listen();
  if (!isLoopbackAddress(config.http.host) && config.http.allowedHosts.length === 0) {
    // Without an allow-list any Host passes, and a browser page on another name could reach
    // this server through DNS rebinding.
    logger.warn(
      { host: config.http.host },
      'serving on a non-loopback address with no http.allowedHosts: set the names clients use to reach this server',
    );
  }
  const mode = config.database.allowWrites ? 'writes allowed' : 'read-only';
  const clientConfig = { mcpServers: { [app.dispatcher.serverInfo.name]: { type: 'http', url } } };
  process.stdout.write(
    [
      `pgmcp ${VERSION} serving MCP at ${url}`,
      `database: ${app.db.name} (${app.db.kind}, ${mode})`,
      '',
      'Client configuration (paste into your MCP client):',
      JSON.stringify(clientConfig, null, 2),
      '',
    ].join('\n'),
  );
}
