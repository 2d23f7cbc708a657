// The program the embedded database child runs. It is plain JavaScript handed to
// `node --input-type=module --eval`, so the same code runs whether pgmcp itself runs from
// dist/ (compiled) or from src/ under vitest: Node 20 cannot execute a .ts entry file.
// Bare imports resolve from the child's working directory, which the parent sets to this
// module's directory, so they find exactly the packages pgmcp itself would import.

/** Shown in `ps` and /proc/<pid>/cmdline; the lock uses it to recognise an orphaned child. */
export const CHILD_PROCESS_TITLE = 'pgmcp-embedded-pglite';

/** Environment variable carrying the child's JSON configuration (no secrets in it). */
export const CHILD_CONFIG_ENV = 'PGMCP_EMBEDDED_CHILD_CONFIG';

export interface ChildConfig {
  dataDir: string;
  socketPath: string;
  maxConnections: number;
}

/** Messages the child sends over the IPC channel (failures show up in its stderr). */
export type ChildMessage = { type: 'ready'; pgliteMs: number };

/** Messages the parent sends. */
export type ParentMessage = { type: 'shutdown' };

export const CHILD_SCRIPT = `
process.title = ${JSON.stringify(CHILD_PROCESS_TITLE)};
const config = JSON.parse(process.env[${JSON.stringify(CHILD_CONFIG_ENV)}] ?? '{}');
const log = (line) => process.stderr.write(line + '\\n');
const describe = (error) => (error && error.stack) || summarize(error);
// Emscripten throws plain objects (ErrnoError, ExitStatus) that stringify as [object Object].
function summarize(error) {
  if (error instanceof Error) return error.message;
  if (error && typeof error === 'object') {
    const { name, message, errno, code, status } = error;
    const parts = [name, message, errno !== undefined && 'errno ' + errno, code, status !== undefined && 'status ' + status];
    const text = parts.filter(Boolean).join(', ');
    return text || JSON.stringify(error);
  }
  return String(error);
}

let db;
let server;
let closing = false;
async function shutdown(code) {
  if (closing) return;
  closing = true;
  try {
    if (server) await server.stop();
    if (db && !db.closed) await db.close();
  } catch (error) {
    log('shutdown: ' + describe(error));
  }
  process.exit(code);
}

// The parent owns the data directory lock; once it is gone this process must not keep the
// directory open, or a successor would run a second PGlite on it.
process.on('disconnect', () => void shutdown(0));
process.on('message', (message) => {
  if (message && message.type === 'shutdown') void shutdown(0);
});
process.on('SIGTERM', () => void shutdown(0));
// Ctrl-C in a terminal, and the terminal closing (SIGHUP), reach the whole process group; the
// parent decides when to stop us.
process.on('SIGINT', () => {});
process.on('SIGHUP', () => {});
process.on('uncaughtException', (error) => {
  log('uncaught exception: ' + describe(error));
  process.exit(1);
});
process.on('unhandledRejection', (error) => {
  log('unhandled rejection: ' + describe(error));
  process.exit(1);
});

try {
  const [{ PGlite }, { PGLiteSocketServer }, { vector }, { pg_trgm }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
    import('@electric-sql/pglite-pgvector'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
  ]);
  const started = Date.now();
  log('opening PGlite data directory ' + config.dataDir);
  db = await PGlite.create(config.dataDir, { extensions: { vector, pg_trgm } });
  const pgliteMs = Date.now() - started;
  log('PGlite ready after ' + pgliteMs + ' ms');
  server = new PGLiteSocketServer({
    db,
    path: config.socketPath,
    maxConnections: config.maxConnections,
  });
  server.addEventListener('error', (event) => log('socket server error: ' + describe(event.detail)));
  await server.start();
  log('listening on ' + config.socketPath);
  if (process.send) process.send({ type: 'ready', pgliteMs });
} catch (error) {
  // The message, not the stack: the parent quotes the last lines in its error.
  log('start failed: ' + summarize(error));
  await shutdown(1);
}
`;
