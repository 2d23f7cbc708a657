// Local mode: the pgmcp HTTP app started inside this process on a loopback port the system
// picks (the embedded database, or --database), so the chat talks to it with the same HTTP
// client it uses for a remote server. Only this process knows the port, and it lives as long as
// the chat does.
import type { Config } from '../../config/index.js';
import { createApp } from '../app.js';
import { openHttpService } from '../http-service.js';
import { createLogger } from '../logger.js';

export interface LocalServer {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  /** The default database's name, for the banner. */
  database: string;
  close(): Promise<void>;
}

export async function startLocalServer(config: Config): Promise<LocalServer> {
  // Warnings and errors of the in-process server go to stderr like `serve`'s (level from config,
  // default warn for the chat so the conversation is not drowned).
  const logger = createLogger(config.log.level);
  const local: Config = {
    ...config,
    transport: 'http',
    http: { ...config.http, host: '127.0.0.1', port: 0 },
    auth: { ...config.auth, required: false },
  };
  const app = await createApp(local, logger);
  let service;
  try {
    service = await openHttpService(local, app, logger);
  } catch (error) {
    await app.close();
    throw error;
  }
  const { port } = await service.http.listen();
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    database: app.db.name,
    async close() {
      app.shutdown.abort();
      await service.close();
      await app.close();
      logger.flush();
    },
  };
}
