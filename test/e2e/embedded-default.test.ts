// The zero-setup default: `pgmcp serve` with no database runs the embedded PGlite with the demo
// dataset; its data directory admits one server; SIGTERM stops it cleanly.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  modernRequest,
  postRpc,
  rawHttp,
  runPgmcp,
  serverEnv,
  spawnPgmcp,
  startHttpServer,
  type HttpServer,
} from '../helpers/server.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('embedded default (no --database)', () => {
  let root: string;
  let dataDir: string;
  let server: HttpServer;

  async function sql(query: string, params: unknown[] = []): Promise<any> {
    const call = modernRequest(`q-${Math.random()}`, 'tools/call', {
      name: 'query_database',
      arguments: { query, params },
    });
    const res = await postRpc(server.url, call.message, call.headers);
    expect(res.status, res.text).toBe(200);
    expect(res.json.result.isError, res.json.result.content?.[0]?.text).toBeFalsy();
    return res.json.result.structuredContent;
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'pgmcp-e2e-default-'));
    dataDir = join(root, 'data');
    // No PGMCP_DEMO: the default (demo data on) is what is under test.
    server = await startHttpServer(['--data-dir', dataDir], { env: serverEnv() });
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('says where it serves and what it serves from', () => {
    expect(server.stdout()).toMatch(/^pgmcp \S+ serving MCP at http:\/\/127\.0\.0\.1:\d+\/mcp$/m);
    expect(server.stdout()).toContain('database: pgmcp-embedded (embedded, read-only)');
  });

  it('serves the demo dataset', async () => {
    const counts = await sql(`
      select (select count(*)::int from demo.sites) as sites,
             (select count(*)::int from demo.telescopes) as telescopes,
             (select count(*)::int from demo.observations) as observations`);
    expect(counts.rows).toEqual([[8, 24, 7000]]);
    const joined = await sql(
      `select s.name, count(t.*)::int as telescopes
         from demo.sites s join demo.telescopes t on t.site_id = s.id
        group by s.name order by telescopes desc, s.name limit $1`,
      [3],
    );
    expect(joined.rowCount).toBe(3);
    expect(joined.columns.map((c: { name: string }) => c.name)).toEqual(['name', 'telescopes']);
    const health = await rawHttp(`${server.origin}/health`);
    expect(health.json).toMatchObject({ status: 'ok', server: 'pgmcp-embedded', database: 'up' });
  });

  it('searches the demo logbook right away (similarity_search, generate_embedding)', async () => {
    const call = modernRequest('s', 'tools/call', {
      name: 'similarity_search',
      arguments: { table_name: 'demo.logbook_entries', query_text: 'fog from the river', top_n: 3 },
    });
    const res = await postRpc(server.url, call.message, call.headers);
    expect(res.json.result.isError).toBeFalsy();
    const found = res.json.result.structuredContent;
    expect(found).toMatchObject({
      provider: 'offline',
      vector_column: 'embedding',
      text_column: 'body',
    });
    expect(found.results[0].body).toMatch(/fog/i);
    const gen = modernRequest('g', 'tools/call', {
      name: 'generate_embedding',
      arguments: { text: 'fog from the river' },
    });
    const embedded = await postRpc(server.url, gen.message, gen.headers);
    expect(embedded.json.result.structuredContent).toMatchObject({
      provider: 'offline',
      model: 'pgmcp-hash-v1',
      dimensions: 256,
    });
  });

  it('refuses writes to the demo data (read-only by default)', async () => {
    const call = modernRequest('w', 'tools/call', {
      name: 'query_database',
      arguments: { query: 'delete from demo.observations' },
    });
    const res = await postRpc(server.url, call.message, call.headers);
    expect(res.json.result.isError).toBe(true);
    expect(res.json.result.content[0].text).toMatch(/^ERROR 25006:/);
    expect((await sql('select count(*)::int from demo.observations')).rows).toEqual([[7000]]);
  });

  it('a second server on the same data directory exits non-zero with a clear lock error', async () => {
    const second = spawnPgmcp(['serve', '--http', '127.0.0.1:0', '--data-dir', dataDir], {
      env: serverEnv(),
    });
    const timer = setTimeout(() => second.process.kill('SIGKILL'), 30_000);
    const exit = await second.exited;
    clearTimeout(timer);
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(second.stderr()).toContain(`The embedded database directory ${dataDir} is in use by`);
    expect(second.stderr()).toContain('--data-dir');
    expect(second.stdout()).not.toContain('serving MCP');
    // The first server is unaffected.
    expect((await sql('select 1 as ok')).rows).toEqual([[1]]);
  });

  it('pgmcp doctor checks the embedded database while the server holds it (through its socket)', async () => {
    const run = await runPgmcp(['doctor', '--data-dir', dataDir], { env: serverEnv() });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`database: embedded PGlite at ${dataDir}`);
    expect(run.stdout).toMatch(/^connected as role "\w+" to database "\w+"$/m);
    expect(run.stdout).toContain('role privileges: embedded database');
    // The server still holds the directory and answers.
    expect((await sql('select 1 as ok')).rows).toEqual([[1]]);
  });

  it('SIGTERM stops it with exit code 0, the database child with it, and frees the directory', async () => {
    const lockFile = join(dataDir, 'pgmcp.lock');
    const owner = JSON.parse(readFileSync(lockFile, 'utf8')) as { pid: number; childPid?: number };
    expect(owner.pid).toBe(server.pid);
    expect(owner.childPid).toBeGreaterThan(0);
    const exit = await server.stop('SIGTERM', 15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    expect(isAlive(owner.childPid!)).toBe(false);
    expect(existsSync(lockFile)).toBe(false);
    expect(server.stderr()).toContain('shutting down');
  });
});
