// The embedded default database: PGlite + pgvector in a child process behind pglite-socket.
export { startEmbedded, type EmbeddedDatabase, type EmbeddedOptions } from './embedded.js';
export type { Connection as EmbeddedConnection } from './readiness.js';
export { DEMO_SCHEMA } from './demo.js';
export { LOCK_FILE_NAME } from './lock.js';
export { openEmbeddedAccess, type EmbeddedAccess, type AttachOptions } from './attach.js';
