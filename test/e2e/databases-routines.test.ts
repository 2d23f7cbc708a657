// Annotated routines with several databases (docs/databases.md): a database that is down is
// named in the warnings and in the error of a call routed to it, and a routine of a non-default
// database that takes a built-in's name is skipped with a warning instead of stopping the
// server (in the default database it still stops the start, exit 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realPostgres, withClient, type RealPostgres } from '../helpers/postgres.js';
import { runPgmcp, serverEnv, spawnStdio, type StdioPeer } from '../helpers/server.js';

const info = await realPostgres(
  'test/e2e/databases-routines.test.ts (routines of several databases)',
);

const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

describe.skipIf(!info)('routines of several databases', () => {
  const pgInfo = info as RealPostgres;
  const alphaName = `pgmcp_rdb_alpha_${suffix}`;
  const betaName = `pgmcp_rdb_beta_${suffix}`;
  const urlFor = (base: string, db: string): string => {
    const u = new URL(base);
    u.pathname = `/${db}`;
    return u.toString();
  };
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-rdb-'));
  const env = serverEnv({ PGMCP_LOG_LEVEL: 'warn', PGMCP_DATA_DIR: join(root, 'data') });
  const config = (defaultFirst: 'alpha' | 'beta'): string => {
    const file = join(root, `pgmcp-${defaultFirst}.yaml`);
    const alpha = ['  - name: alpha', `    url: ${urlFor(pgInfo.url, alphaName)}`];
    const beta = ['  - name: beta', `    url: ${urlFor(pgInfo.url, betaName)}`];
    writeFileSync(
      file,
      [
        'databases:',
        ...(defaultFirst === 'alpha' ? [...alpha, ...beta] : [...beta, ...alpha]),
        '  - name: down',
        '    url: postgres://nobody@127.0.0.1:1/nothing',
        '',
      ].join('\n'),
    );
    return file;
  };
  let peer: StdioPeer;

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, async (c) => {
      await c.query(`CREATE DATABASE ${alphaName}`);
      await c.query(`CREATE DATABASE ${betaName}`);
    });
    for (const db of [alphaName, betaName]) {
      await withClient(urlFor(pgInfo.adminUrl, db), (c) =>
        c.query(`CREATE FUNCTION public.where_am_i() RETURNS text LANGUAGE sql STABLE
            AS $$ SELECT current_database() $$;
          COMMENT ON FUNCTION public.where_am_i() IS '@mcp Which database answers'`),
      );
    }
    // Database beta's routine takes the name of a built-in tool.
    await withClient(urlFor(pgInfo.adminUrl, betaName), (c) =>
      c.query(`CREATE FUNCTION public.count_rows(t text) RETURNS int LANGUAGE sql STABLE
          AS 'SELECT 1';
        COMMENT ON FUNCTION public.count_rows(text) IS '@mcp Counts nothing';
        CREATE TABLE public.things AS SELECT generate_series(1, 5) AS id;
        GRANT SELECT ON public.things TO PUBLIC`),
    );
    peer = spawnStdio(['--config', config('alpha')], { env });
    const init = await peer.request(1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    expect(init.result?.protocolVersion, peer.stderr()).toBe('2025-11-25');
    peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }, 120_000);

  afterAll(async () => {
    await peer?.stop();
    rmSync(root, { recursive: true, force: true });
    await withClient(pgInfo.adminUrl, async (c) => {
      for (const db of [alphaName, betaName]) {
        await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      }
    });
  });

  it('names the database that is down in the start-up warnings', async () => {
    await peer.request(2, 'tools/list', {});
    const warnings = peer
      .stderr()
      .split('\n')
      .filter((line) => line.includes('not reloaded'));
    expect(warnings.length, peer.stderr()).toBeGreaterThan(0);
    for (const line of warnings) expect(line).toContain('of database down');
  });

  it('answers a routine call routed to a database that is down as unavailable, naming it', async () => {
    const up = await peer.request(3, 'tools/call', { name: 'where_am_i', arguments: {} });
    expect(up.result.structuredContent).toEqual({ value: alphaName });
    const down = await peer.request(4, 'tools/call', {
      name: 'where_am_i',
      arguments: { database: 'down' },
    });
    expect(down.result.isError).toBe(true);
    const text = down.result.content[0].text as string;
    expect(text).toMatch(/^Database unavailable: down /);
    expect(text).not.toContain('not defined');
    expect(down.result._meta?.['pgmcp/error']?.code ?? JSON.stringify(down.result)).toMatch(
      /PGMCP201/,
    );
  });

  it("skips a non-default database's routine named like a built-in, with a warning", async () => {
    const list = await peer.request(5, 'tools/list', {});
    const names = list.result.tools.map((t: { name: string }) => t.name);
    expect(names).toContain('count_rows');
    expect(names).toContain('where_am_i');
    expect(peer.stderr()).toMatch(
      /tool count_rows: built-in, and function public\.count_rows\(text\)[^\n]*database beta/,
    );
    const call = await peer.request(6, 'tools/call', {
      name: 'count_rows',
      arguments: { database: 'beta', schema: 'public', table: 'things' },
    });
    // The built-in answers (five rows), not beta's routine (which says 1).
    const answer = call.result as { isError?: boolean; structuredContent?: { count?: number } };
    expect(answer.isError, JSON.stringify(call.result)).toBeFalsy();
    expect(answer.structuredContent?.count).toBe(5);
  });

  it('still refuses to start when the routine is in the default database', async () => {
    const run = await runPgmcp(['serve', '--stdio', '--config', config('beta')], {
      env,
      timeoutMs: 60_000,
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(
      /A name is claimed twice: tool count_rows: built-in, and function public\.count_rows\(text\) \(database beta\)/,
    );
  });
});
