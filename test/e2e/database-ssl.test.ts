// A stdio server whose URL asks for SSL (sslmode=require) that the PostgreSQL under test does
// not offer: it starts, and a tool call answers a tool error (PGMCP201) that names the cause,
// not JSON-RPC -32603; node-postgres prints no SECURITY WARNING about sslmode on stderr.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONNECTORS, type McpConnection } from '../helpers/connectors.js';
import { realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import { serverEnv } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/database-ssl.test.ts (sslmode=require without SSL)');
const ssl = pg
  ? await withClient(pg.adminUrl, async (c) => (await c.query('SHOW ssl')).rows[0].ssl as string)
  : null;
if (ssl === 'on') {
  process.stderr.write(
    '\n!!! test/e2e/database-ssl.test.ts needs a PostgreSQL without SSL; this one has it on.\n\n',
  );
}

describe.skipIf(!pg || ssl !== 'off')('sslmode=require against a server without SSL', () => {
  const info = pg as RealPostgres;
  const url = new URL(info.url);
  url.searchParams.set('sslmode', 'require');
  let connection: McpConnection | undefined;

  afterEach(async () => {
    await connection?.close();
    connection = undefined;
  });

  for (const connector of CONNECTORS.filter((c) => c.transport === 'stdio')) {
    it(`${connector.name}: tools/call answers a tool error naming the SSL cause`, async () => {
      connection = await connector.connect({
        httpUrl: () => {
          throw new Error('stdio only');
        },
        stdioArgs: ['--database', url.toString()],
        env: serverEnv(),
      });
      // The SDK client throws on a JSON-RPC error (-32603); a tool error is a result.
      const result = await connection.callTool('query_database', { query: 'select 1' });
      expect(result.isError).toBe(true);
      const text = result.content.map((c) => c.text ?? '').join('\n');
      expect(text).toBe(
        'The database is unavailable; pgmcp cannot connect to it: The server does not support SSL connections.',
      );
      expect(result._meta).toMatchObject({ 'pgmcp/error': { code: 'PGMCP201' } });
      expect(text).not.toContain(url.password || '\u0000');

      await vi.waitFor(() => expect(connection!.stderr()).toContain('serving MCP on stdio'));
      expect(connection.stderr()).not.toContain('SECURITY WARNING');
      expect(connection.stderr()).not.toContain(url.password || '\u0000');
    });
  }
});
