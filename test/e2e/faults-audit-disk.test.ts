// The audit file's disk full (audit.file on /dev/full, where every write fails with ENOSPC): a
// clear log line says the audit write failed and why, and the calls go on being answered.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CONNECTORS, LATEST_LEGACY, type McpConnection } from '../helpers/connectors.js';
import { realPostgres, type RealPostgres } from '../helpers/postgres.js';
import { serverEnv } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/faults-audit-disk.test.ts (audit file, disk full)');
const STDIO = CONNECTORS.find((c) => c.transport === 'stdio' && c.version === LATEST_LEGACY)!;

describe.skipIf(!pg || !existsSync('/dev/full'))('the audit file on a full disk', () => {
  const info = pg as RealPostgres;
  let connection: McpConnection;
  beforeAll(async () => {
    connection = await STDIO.connect({
      httpUrl: () => {
        throw new Error('stdio only');
      },
      stdioArgs: ['--database', info.url],
      env: serverEnv({ PGMCP_AUDIT_FILE: '/dev/full' }),
    });
  });
  afterAll(async () => {
    await connection?.close();
  });

  it('logs why the audit write failed, and the calls are answered all the same', async () => {
    for (let i = 0; i < 3; i++) {
      const result = await connection.callTool('query_database', { query: `SELECT ${i} AS n` });
      expect(result.isError, JSON.stringify(result)).toBeFalsy();
    }
    await vi.waitFor(() => expect(connection.stderr()).toContain('audit file write failed'), {
      timeout: 5_000,
    });
    expect(connection.stderr()).toMatch(/ENOSPC|no space left/i);
  });
});
