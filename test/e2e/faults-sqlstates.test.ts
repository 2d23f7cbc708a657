// Every PostgreSQL condition has a clear answer, as an MCP client over HTTP sees it (the SDK
// client, both eras): the tool error's text and `_meta["pgmcp/error"]` code. When the cause is
// the server's state, the text is pgmcp's own, never the server's message (which the function
// below marks) nor its detail (which, for a deadlock, quotes other sessions' statements).
// The conditions come from a function that raises each SQLSTATE as PostgreSQL would, and from
// the real thing: a permission refused, a statement timeout, an administrator's cancel and
// terminate of the connection a call is using.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CONNECTORS,
  LATEST_LEGACY,
  type McpConnection,
  type ToolCallResult,
} from '../helpers/connectors.js';
import { realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, tail, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/e2e/faults-sqlstates.test.ts (PostgreSQL conditions)');

const RAW = 'raw-server-text';
const SETUP = `
CREATE FUNCTION fault_raise(state text) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = state, MESSAGE = '${RAW} ' || state,
    DETAIL = 'Process 4242: SELECT secret_of_another_session()';
END $$;
CREATE TABLE fault_private (n int);
REVOKE ALL ON fault_private FROM PUBLIC;
`;

const HTTP = CONNECTORS.filter(
  (c) => c.transport === 'http' && (c.era === 'modern' || c.version === LATEST_LEGACY),
);

const textOf = (result: ToolCallResult): string =>
  result.content.map((c) => c.text ?? '').join('\n');
const codeOf = (result: ToolCallResult): unknown =>
  (result['_meta'] as Record<string, { code?: unknown }> | undefined)?.['pgmcp/error']?.code;

describe.skipIf(!pg)('PostgreSQL conditions reach an MCP client as clear tool errors', () => {
  const info = pg as RealPostgres;
  let server: HttpServer;

  beforeAll(async () => {
    await withClient(info.adminUrl, (c) => c.query(SETUP));
    server = await startHttpServer(['--database', info.url], {
      env: serverEnv({ PGMCP_STATEMENT_TIMEOUT_MS: '1500' }),
    });
  });
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
  });

  /** The backend running `marker` (an in-use pooled connection of the server under test). */
  const backendOf = async (marker: string): Promise<number> => {
    let pid: number | undefined;
    await vi.waitFor(
      async () => {
        const { rows } = await withClient(info.adminUrl, (c) =>
          c.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()`,
            [`%${marker}%`],
          ),
        );
        pid = rows[0]?.pid;
        expect(pid).toBeDefined();
      },
      { timeout: 10_000, interval: 50 },
    );
    return pid!;
  };

  for (const connector of HTTP) {
    describe(connector.name, () => {
      let connection: McpConnection;
      beforeAll(async () => {
        connection = await connector.connect({
          httpUrl: () => server.url,
          stdioArgs: [],
          env: serverEnv(),
        });
      });
      afterAll(async () => {
        await connection?.close();
      });

      const query = (sql: string): Promise<ToolCallResult> =>
        connection.callTool('query_database', { query: sql });

      it.each([
        ['57P01', 'PGMCP201', /shutting down, or an administrator terminated the session/],
        ['57P02', 'PGMCP201', /restarting after another of its processes crashed/],
        ['57P03', 'PGMCP201', /starting up or shutting down/],
        ['08006', 'PGMCP201', /connection to the database failed \(SQLSTATE 08006\)/],
        ['53100', 'PGMCP208', /out of disk space/],
        ['53200', 'PGMCP208', /out of memory/],
        ['53300', 'PGMCP208', /out of connection slots/],
        ['40001', 'PGMCP209', /It was run again once and met the same conflict/],
        ['40P01', 'PGMCP209', /deadlocked .*run again once/],
      ])('%s: %s in pgmcp words, without the server text', async (sqlstate, code, words) => {
        const result = await query(`SELECT fault_raise('${sqlstate}')`);
        expect(result.isError, textOf(result)).toBe(true);
        expect(codeOf(result)).toBe(code);
        expect(textOf(result)).toMatch(words);
        expect(textOf(result)).not.toContain(RAW);
        expect(JSON.stringify(result)).not.toContain('secret_of_another_session');
      });

      it('a wrong number of params: PGMCP301 saying how many, never "database unavailable"', async () => {
        const logged = server.stderr().length;
        for (const [params, words] of [
          [undefined, /placeholders up to \$1, so params needs 1 value .*; it has 0\./],
          [[1, 2], /placeholders up to \$1, so params needs 1 value .*; it has 2\./],
        ] as const) {
          const result = await connection.callTool('query_database', {
            query: 'SELECT $1::int AS n',
            ...(params ? { params } : {}),
          });
          expect(result.isError, textOf(result)).toBe(true);
          expect(codeOf(result)).toBe('PGMCP301');
          expect(textOf(result)).toMatch(words);
        }
        const next = await connection.callTool('query_database', {
          query: 'SELECT $1::int AS n',
          params: [5],
        });
        expect(next.isError, textOf(next)).toBeFalsy();
        expect(server.stderr().slice(logged)).not.toMatch(/connection lost|host/);
      });

      it('42501: PGMCP211, what was denied and what to do', async () => {
        const result = await query('SELECT * FROM fault_private');
        expect(codeOf(result)).toBe('PGMCP211');
        expect(textOf(result)).toMatch(/permission denied for table fault_private\. .*GRANT/);
      });

      it('25006 in a read-only call: PGMCP306, the statement writes', async () => {
        const result = await query(`SELECT fault_raise('25006')`);
        expect(codeOf(result)).toBe('PGMCP306');
        expect(textOf(result)).toMatch(/The call runs read-only/);
      });

      it('57014 by statement_timeout: PGMCP203 naming the limit', async () => {
        const result = await query('SELECT pg_sleep(5)');
        expect(codeOf(result)).toBe('PGMCP203');
        expect(textOf(result)).toMatch(/timed out \(limit 1500 ms\)/);
      });

      it("57014 by an administrator's pg_cancel_backend: PGMCP204, not the caller's doing", async () => {
        const marker = `cancel_${connector.era}_${Date.now()}`;
        const call = query(`SELECT pg_sleep(1.2) AS ${marker}`);
        const pid = await backendOf(marker);
        await withClient(info.adminUrl, (c) => c.query('SELECT pg_cancel_backend($1)', [pid]));
        const result = await call;
        expect(codeOf(result)).toBe('PGMCP204');
        expect(textOf(result)).toMatch(/cancelled on the database server .*pgmcp did not ask/);
      });

      it('57P01 by pg_terminate_backend of the connection in use: PGMCP201, and the next call works', async () => {
        const marker = `terminate_${connector.era}_${Date.now()}`;
        const call = query(`SELECT pg_sleep(1.2) AS ${marker}`);
        const pid = await backendOf(marker);
        await withClient(info.adminUrl, (c) => c.query('SELECT pg_terminate_backend($1)', [pid]));
        const result = await call;
        expect(codeOf(result), textOf(result)).toBe('PGMCP201');
        expect(textOf(result)).toMatch(/an administrator terminated the session/);
        expect(textOf(result)).not.toMatch(/terminating connection due to administrator command/);
        const next = await query('SELECT 1 AS one');
        expect(next.isError, textOf(next)).toBeFalsy();
      });
    });
  }

  it('pg_terminate_backend of every idle pooled connection: the next calls are answered', async () => {
    const connection = await HTTP[0]!.connect({
      httpUrl: () => server.url,
      stdioArgs: [],
      env: serverEnv(),
    });
    try {
      // Fill the pool with several idle connections.
      await Promise.all(
        Array.from({ length: 4 }, () =>
          connection.callTool('query_database', { query: 'SELECT pg_sleep(0.2)' }),
        ),
      );
      const { rows } = await withClient(info.adminUrl, (c) =>
        c.query<{ n: number }>(
          `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
           WHERE usename = $1 AND datname = current_database() AND pid <> pg_backend_pid()`,
          [info.role],
        ),
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
      for (let i = 0; i < 6; i++) {
        const result = await connection.callTool('query_database', { query: 'SELECT 1 AS one' });
        expect(result.isError, `${textOf(result)}\n${tail(server.stderr())}`).toBeFalsy();
      }
      expect(server.process.exitCode).toBeNull();
    } finally {
      await connection.close();
    }
  });
});
