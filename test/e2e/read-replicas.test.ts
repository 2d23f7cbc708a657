// Read replicas (database.readReplicas), through the built server's HTTP MCP endpoint and the
// official SDK client, on a real primary and streaming standby: a read is answered by the
// standby (pg_is_in_recovery() says so, Server-Timing and the audit row name it), and so are
// count_rows and a STABLE routine; a confirmed write and a VOLATILE routine by the primary, and
// the writer's next reads too (read-your-writes); a standby whose replay is paused while the
// primary writes falls behind and is skipped, and so is a stopped one: reads then go to the
// primary.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  caughtUp,
  serverBinDir,
  startCluster,
  startStandby,
  type Cluster,
} from '../helpers/pg-cluster.js';
import { reportSkipped } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const binaries = serverBinDir();
if (!binaries) reportSkipped('read replicas', 'no local PostgreSQL server binaries (initdb)');

interface Answer {
  ok: boolean;
  text: string;
  structured: Record<string, unknown> | undefined;
  /** The `db;desc=` entry of the answer's Server-Timing header. */
  server: string | null;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!binaries)('read replicas through the HTTP endpoint', () => {
  let primary: Cluster;
  let standby: Cluster;
  let server: HttpServer;
  let client: Client;
  let lastServerTiming: string | null = null;
  const dir = mkdtempSync(join(tmpdir(), 'pgmcp-replicas-'));

  beforeAll(async () => {
    primary = await startCluster();
    await primary.query('CREATE TABLE items (n int)');
    await primary.query('INSERT INTO items VALUES (1)');
    for (const volatility of ['STABLE', 'VOLATILE']) {
      const name = `${volatility.toLowerCase()}_port`;
      await primary.query(`CREATE FUNCTION public.${name}() RETURNS int LANGUAGE sql ${volatility}
        AS $$ SELECT inet_server_port() $$`);
      await primary.query(`COMMENT ON FUNCTION public.${name}() IS '@mcp The server port'`);
    }
    standby = await startStandby(primary);
    // After the base backup: its checkpoint would otherwise spread the new database's pages.
    await primary.query('CREATE DATABASE pgmcp_state');
    await caughtUp(primary, standby);
    writeFileSync(
      join(dir, 'pgmcp.yaml'),
      [
        'database:',
        `  url: ${primary.url()}`,
        '  allowWrites: true',
        `  readReplicas: ["${standby.url()}"]`,
        '  replicaMaxLagMs: 1000',
        '  readYourWritesMs: 2000',
        'state:',
        `  url: ${primary.url('pgmcp_state')}`,
        '',
      ].join('\n'),
    );
    server = await startHttpServer(['--config', join(dir, 'pgmcp.yaml')], { env: serverEnv() });
    client = new Client({ name: 'pgmcp-replicas', version: '1.0.0' });
    // The answers' Server-Timing header, as the transport received it.
    const recording: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.headers.has('server-timing'))
        lastServerTiming = response.headers.get('server-timing');
      return response;
    };
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { fetch: recording }),
    );
  }, 180_000);

  afterAll(async () => {
    if (server && server.process.exitCode !== null) {
      console.error(`the server exited:\n${server.stderr().slice(-4000)}`);
    }
    await client?.close().catch(() => undefined);
    await server?.stop();
    standby?.destroy();
    primary?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (args: Record<string, unknown>): Promise<Answer> => {
    lastServerTiming = null;
    const result = (await client.callTool({ name: 'query_database', arguments: args })) as {
      isError?: boolean;
      content: { text?: string }[];
      structuredContent?: Record<string, unknown>;
    };
    const desc = lastServerTiming === null ? null : /db;desc="([^"]+)"/.exec(lastServerTiming);
    return {
      ok: result.isError !== true,
      text: result.content.map((c) => c.text ?? '').join(''),
      structured: result.structuredContent,
      server: desc?.[1] ?? null,
    };
  };
  const whereAmI = {
    query: 'SELECT pg_is_in_recovery() AS standby, inet_server_port() AS port FROM items LIMIT 1',
  };
  /** Which server answered the read: the SQL's own answer, checked against Server-Timing. */
  const read = async (): Promise<'standby' | 'primary'> => {
    const answer = await call(whereAmI);
    expect(answer.ok, answer.text).toBe(true);
    // structuredContent.rows: one array per row, in the order of the columns.
    const [inRecovery, port] = ((answer.structured?.['rows'] ?? []) as unknown[][])[0] ?? [];
    expect(answer.server).toBe(`127.0.0.1:${Number(port)}`);
    if (inRecovery === true) {
      expect(Number(port)).toBe(standby.port);
      return 'standby';
    }
    expect(Number(port)).toBe(primary.port);
    return 'primary';
  };
  /** Reads until one is answered by `want` (bounded), returning how many it took. */
  const until = async (want: 'standby' | 'primary'): Promise<number> => {
    for (let i = 1; i <= 300; i++) {
      if ((await read()) === want) return i;
      await pause(50);
    }
    throw new Error(`no read answered by the ${want} in 300 tries`);
  };

  it('a read is answered by the standby, and its audit row names it', async () => {
    expect(await read()).toBe('standby');
    let rows: Record<string, unknown>[] = [];
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      rows = await primary.query(
        `SELECT details->>'server' AS server FROM pgmcp.audit
          WHERE event = 'tool_call' AND tool = 'query_database' AND details ? 'server'`,
        [],
        'pgmcp_state',
      );
      if (rows.length === 0) await pause(100);
    }
    expect(rows.map((r) => r['server'])).toContain(`127.0.0.1:${standby.port}`);
  });

  it('count_rows reads on the standby too', async () => {
    lastServerTiming = null;
    const counted = await client.callTool({ name: 'count_rows', arguments: { table: 'items' } });
    expect(counted.isError, JSON.stringify(counted.content)).not.toBe(true);
    expect(lastServerTiming).toContain(`db;desc="127.0.0.1:${standby.port}"`);
  });

  it('a confirmed write is answered by the primary; the writer then reads from the primary for readYourWritesMs', async () => {
    const insert = { query: 'INSERT INTO items VALUES (2)' };
    const preview = await call(insert);
    const nonce = (preview.structured?.['confirmation'] as { nonce?: string } | undefined)?.nonce;
    expect(nonce, preview.text).toBeTypeOf('string');
    const written = await call({ ...insert, confirm: nonce });
    expect(written.ok, written.text).toBe(true);
    expect(written.server).toBe(`127.0.0.1:${primary.port}`);
    // Right after the write: the primary, which has it.
    expect(await read()).toBe('primary');
    // Once the window has passed, the standby again.
    await until('standby');
  });

  it('a standby whose replay is paused falls behind and is skipped; resumed, it is used again', async () => {
    await until('standby');
    await standby.query('SELECT pg_wal_replay_pause()');
    try {
      // A write pgmcp did not make (no read-your-writes): only the lag sends reads away.
      await primary.query('INSERT INTO items VALUES (3)');
      await until('primary');
    } finally {
      await standby.query('SELECT pg_wal_replay_resume()');
    }
    await until('standby');
  });

  it('a STABLE @mcp routine runs on the standby, a VOLATILE one on the primary', async () => {
    await until('standby');
    const answeredBy = async (name: string): Promise<string | null> => {
      lastServerTiming = null;
      const result = await client.callTool({ name, arguments: {} });
      expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
      return /db;desc="([^"]+)"/.exec(lastServerTiming ?? '')?.[1] ?? null;
    };
    expect(await answeredBy('stable_port')).toBe(`127.0.0.1:${standby.port}`);
    expect(await answeredBy('volatile_port')).toBe(`127.0.0.1:${primary.port}`);
  });

  it('a stopped standby is skipped: reads go to the primary', async () => {
    await until('standby');
    standby.stop('fast');
    await until('primary');
    expect(server.process.exitCode).toBeNull();
  });
});
