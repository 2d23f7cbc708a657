// Whether the HTTP address can be bound, asked before the databases start (the embedded one
// takes seconds), so a port already in use is said at once and in words, not as a bare
// EADDRINUSE after the start-up.
import { createServer } from 'node:net';

/** Binds and releases host:port; the error binding gave, or null. Port 0 always binds. */
export function probeListen(host: string, port: number): Promise<NodeJS.ErrnoException | null> {
  if (port === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

/** What a failed listen means and what to do about it; null for an error of another kind. */
export function listenProblem(error: unknown, host: string, port: number): string | null {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch ((error as NodeJS.ErrnoException | null)?.code) {
    case 'EADDRINUSE':
      return `http: ${where} is already in use by another process; stop it, or choose another port (--http HOST:PORT, http.port)`;
    case 'EACCES':
      return `http: not allowed to listen on ${where} (ports below 1024 need privileges); choose a port above 1023`;
    case 'EADDRNOTAVAIL':
      return `http: ${host} is not an address of this machine; listen on one of its addresses, or 0.0.0.0`;
    default:
      return null;
  }
}
