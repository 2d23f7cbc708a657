// Where the child's unix socket lives. node-postgres connects to `<host>/.s.PGSQL.<port>`, and
// a unix socket path must fit in sockaddr_un.sun_path (108 bytes on Linux, 104 on macOS,
// including the terminating NUL). Deep data directories fall back to a private temp directory.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SOCKET_PORT = 5432;
export const SOCKET_FILE_NAME = `.s.PGSQL.${SOCKET_PORT}`;

function maxSocketPathBytes(platform: NodeJS.Platform = process.platform): number {
  return platform === 'linux' ? 107 : 103;
}

export function socketPathFits(dir: string, platform: NodeJS.Platform = process.platform): boolean {
  return Buffer.byteLength(join(dir, SOCKET_FILE_NAME)) <= maxSocketPathBytes(platform);
}

export interface SocketLocation {
  /** Directory holding the socket: the `host` for node-postgres. */
  readonly dir: string;
  /** Full path of the socket file. */
  readonly path: string;
  /** True when `dir` is a private temp directory that `cleanup()` removes. */
  readonly temporary: boolean;
  /** Synchronous so an 'exit' handler can call it. Idempotent. */
  cleanup(): void;
}

export function createSocketLocation(dataDir: string, tmpRoot: string = tmpdir()): SocketLocation {
  if (socketPathFits(dataDir)) {
    return { dir: dataDir, path: join(dataDir, SOCKET_FILE_NAME), temporary: false, cleanup() {} };
  }
  // A long TMPDIR (some CI runners) would not help; /tmp is short everywhere it exists.
  const root = socketPathFits(join(tmpRoot, 'pgmcp-XXXXXX')) ? tmpRoot : '/tmp';
  // mkdtemp creates the directory with mode 0700: only our user can reach the socket.
  const dir = mkdtempSync(join(root, 'pgmcp-'));
  let removed = false;
  return {
    dir,
    path: join(dir, SOCKET_FILE_NAME),
    temporary: true,
    cleanup() {
      if (removed) return;
      removed = true;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
