import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSocketLocation, SOCKET_FILE_NAME, socketPathFits } from './socket-location.js';

describe('socket location', () => {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('measures the limit in bytes, not characters', () => {
    const ascii = `/${'a'.repeat(107 - SOCKET_FILE_NAME.length - 2)}`;
    expect(socketPathFits(ascii, 'linux')).toBe(true);
    expect(socketPathFits(`${ascii}a`, 'linux')).toBe(false);
    // Same character count, but "é" takes two bytes in UTF-8.
    expect(socketPathFits(`${ascii.slice(0, -1)}é`, 'linux')).toBe(false);
    expect(socketPathFits(ascii, 'darwin')).toBe(false);
  });

  it('keeps the socket in a short data directory', () => {
    const location = createSocketLocation('/var/lib/pgmcp');
    expect(location).toMatchObject({
      dir: '/var/lib/pgmcp',
      path: `/var/lib/pgmcp/${SOCKET_FILE_NAME}`,
      temporary: false,
    });
    location.cleanup(); // nothing to remove
  });

  it('falls back to a private temp directory for a long one and removes it on cleanup', () => {
    const root = mkdtempSync(join(tmpdir(), 'pgmcp-sock-'));
    made.push(root);
    const deep = join(root, 'x'.repeat(120));
    const location = createSocketLocation(deep, root);
    expect(location.temporary).toBe(true);
    expect(location.dir.startsWith(join(root, 'pgmcp-'))).toBe(true);
    expect(location.path).toBe(join(location.dir, SOCKET_FILE_NAME));
    expect(socketPathFits(location.dir)).toBe(true);
    expect(existsSync(location.dir)).toBe(true);
    location.cleanup();
    location.cleanup();
    expect(existsSync(location.dir)).toBe(false);
  });

  it('uses /tmp when the temp root itself is too long', () => {
    const location = createSocketLocation(`/${'y'.repeat(200)}`, `/${'z'.repeat(150)}`);
    made.push(location.dir);
    expect(location.dir.startsWith('/tmp/pgmcp-')).toBe(true);
  });
});
