// Live catalog on real PostgreSQL: annotated routines and registry handlers created, changed
// and dropped while the server runs show up without a restart, with one list_changed per
// reload; the LISTEN connection survives pg_terminate_backend; without the event trigger the
// TTL poll still picks DDL up. A throwaway DATABASE because the registry's schema name (mcp)
// is fixed. The served role is the non-superuser pgmcp_test; the trigger is installed by the
// admin role (a superuser), as a DBA would.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installCatalogTrigger,
  startCatalogWatch,
  type CatalogWatch,
} from '../../src/catalog/watch.js';
import type { ToolSpec } from '../../src/core/specs.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { applyRegistryScripts, pgRunner } from '../../src/tools/handlers/index.js';
import { createLiveCatalog, type LiveCatalog } from '../../src/tools/live-catalog.js';
import { createRegistry, type CatalogKind, type Registry } from '../../src/tools/registry.js';
import { realPostgres, TEST_ROLE, withClient, type RealPostgres } from '../helpers/postgres.js';

const info = await realPostgres('live catalog');
const logger = pino({ level: 'silent' });

const BUILTIN: ToolSpec = {
  name: 'echo_builtin',
  description: 'A built-in that the live catalog must never remove',
  inputSchema: { type: 'object' },
  call: () => Promise.resolve({ content: [] }),
};

async function until<T>(probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Live {
  db: Database;
  registry: Registry;
  live: LiveCatalog;
  watch: CatalogWatch;
  events: CatalogKind[];
  invalidations: number;
  stop(): Promise<void>;
}

async function startLive(
  url: string,
  opts: { ttlMs: number; embedded?: string; handlers?: boolean },
): Promise<Live> {
  const db = await createDatabase(
    {
      url: opts.embedded ? null : url,
      poolSize: 2,
      embedded: { dataDir: opts.embedded ?? '/nonexistent', demo: false },
    },
    logger,
  );
  const registry = createRegistry();
  registry.addTool(BUILTIN);
  const state = { invalidations: 0 };
  const live = createLiveCatalog({
    db,
    registry,
    catalog: { invalidate: () => void state.invalidations++ },
    logger,
    routines: { allowWrites: false, statementTimeoutMs: 5_000 },
    ...(opts.handlers === false
      ? {}
      : { handlers: { statementTimeoutMs: 5_000, allowWrites: false } }),
  });
  await live.reload('start');
  const events: CatalogKind[] = [];
  registry.onListChanged((kind) => events.push(kind));
  const watch = startCatalogWatch({
    db,
    logger,
    ttlMs: opts.ttlMs,
    backoff: { initialMs: 50, maxMs: 400 },
    onChange: (reason) => live.reload(reason).then(() => undefined),
  });
  await watch.ready;
  return {
    db,
    registry,
    live,
    watch,
    events,
    get invalidations() {
      return state.invalidations;
    },
    async stop() {
      await watch.stop();
      await db.close();
    },
  };
}

describe.skipIf(!info)('live catalog on PostgreSQL', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_live_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let adminUrl: string;
  let serveUrl: string;
  let s: Live | undefined;
  const urlFor = (base: string): string => {
    const u = new URL(base);
    u.pathname = `/${dbName}`;
    return u.toString();
  };
  const admin = (sql: string, params: unknown[] = []) =>
    withClient(adminUrl, (c) => c.query(sql, params));
  const tool = (name: string) => s!.registry.tool(name)?.spec;

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
    adminUrl = urlFor(pgInfo.adminUrl);
    serveUrl = urlFor(pgInfo.url);
    await withClient(adminUrl, async (c) => {
      await applyRegistryScripts(pgRunner(c));
      if (pgInfo.role === TEST_ROLE) await c.query('SELECT mcp.grant_runtime($1)', [TEST_ROLE]);
      await c.query('CREATE SCHEMA live_fn; GRANT USAGE ON SCHEMA live_fn TO PUBLIC');
    });
  });

  afterAll(async () => {
    await s?.stop();
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  it('installs the event trigger idempotently, only where the role may', async () => {
    await withClient(adminUrl, async (c) => {
      expect(await installCatalogTrigger(c)).toBe('installed');
      const before = await c.query('SELECT oid FROM pg_event_trigger ORDER BY oid');
      expect(await installCatalogTrigger(c)).toBe('installed');
      const after = await c.query('SELECT oid FROM pg_event_trigger ORDER BY oid');
      expect(after.rows).toEqual(before.rows);
      // pgmcp_watch_ddl and pgmcp_watch_drop (NOTIFY), and the two that count DDL.
      expect(before.rowCount).toBe(4);
    });
    if (pgInfo.role === TEST_ROLE) {
      expect(await withClient(serveUrl, (c) => installCatalogTrigger(c))).toBe('not-permitted');
    }
  });

  it('starts with a LISTEN connection (TTL poll off) and the built-in in place', async () => {
    s = await startLive(serveUrl, { ttlMs: 0 });
    expect(s.watch.mode).toBe('listen');
    expect(s.watch.listening()).toBe(true);
    expect(s.watch.trigger()).toBe(pgInfo.role === TEST_ROLE ? 'not-permitted' : 'installed');
    expect(s.registry.tools().map((t) => t.name)).toEqual(['echo_builtin']);
  });

  it('an annotated function appears without a restart, with one list_changed', async () => {
    const invalidated = s!.invalidations;
    const started = Date.now();
    await admin(`
      CREATE FUNCTION live_fn.add_one(n int4) RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT n + 1';
      COMMENT ON FUNCTION live_fn.add_one IS '@mcp Adds one.';`);
    const spec = await until(() => tool('add_one'), 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(spec.description).toContain('Adds one.');
    await sleep(300); // no second event for the same burst
    expect(s!.events).toEqual(['tools']);
    expect(s!.invalidations).toBeGreaterThan(invalidated);
    expect(tool('echo_builtin')).toBeDefined();
  });

  it('two functions in one transaction: one list_changed', async () => {
    s!.events.length = 0;
    await admin(`BEGIN;
      CREATE FUNCTION live_fn.two_a() RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT 2';
      COMMENT ON FUNCTION live_fn.two_a IS '@mcp A.';
      CREATE FUNCTION live_fn.two_b() RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT 2';
      COMMENT ON FUNCTION live_fn.two_b IS '@mcp B.';
      COMMIT;`);
    await until(() => tool('two_a') && tool('two_b'));
    await sleep(300);
    expect(s!.events).toEqual(['tools']);
  });

  it('a COMMENT change updates the description', async () => {
    s!.events.length = 0;
    await admin(`COMMENT ON FUNCTION live_fn.add_one IS '@mcp Adds exactly one.'`);
    await until(() => tool('add_one')?.description.includes('exactly'));
    await sleep(200);
    expect(s!.events).toEqual(['tools']);
  });

  it('a body-only CREATE OR REPLACE changes nothing a client sees: no list_changed', async () => {
    s!.events.length = 0;
    await admin(
      `CREATE OR REPLACE FUNCTION live_fn.add_one(n int4) RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT n + 1 + 0'`,
    );
    await sleep(600);
    expect(s!.events).toEqual([]);
    expect(tool('add_one')).toBeDefined();
  });

  it('DROP removes the tool', async () => {
    s!.events.length = 0;
    await admin('DROP FUNCTION live_fn.add_one(int4)');
    await until(() => tool('add_one') === undefined);
    await sleep(200);
    expect(s!.events).toEqual(['tools']);
    expect(tool('echo_builtin')).toBeDefined();
  });

  it('a routine claiming a built-in name never replaces the built-in', async () => {
    await admin(`
      CREATE FUNCTION live_fn.echo_builtin() RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT 1';
      COMMENT ON FUNCTION live_fn.echo_builtin IS '@mcp Impostor.';`);
    await sleep(600);
    expect(tool('echo_builtin')).toBe(BUILTIN);
    const reloaded = await s!.live.reload('test');
    expect(reloaded.clashes).toEqual([
      'tool echo_builtin: built-in, and function live_fn.echo_builtin()',
    ]);
    expect(reloaded.changed).toEqual([]);
    await admin('DROP FUNCTION live_fn.echo_builtin()');
    await sleep(400);
    expect(tool('echo_builtin')).toBe(BUILTIN);
  });

  it('registry handlers (NOTIFY pgmcp_registry): tool and prompt appear and go', async () => {
    s!.events.length = 0;
    await admin(`BEGIN;
      SELECT mcp.create_or_replace_handler('{"type":"tool","name":"sql_hello","description":"Hello from SQL","requiresAuth":false,"inputSchema":{"type":"object"}}',
        $b$ BEGIN RETURN mcp.tool_result(jsonb_build_array(mcp.text('hello')), (request).request_id); END $b$);
      SELECT mcp.create_or_replace_handler('{"type":"prompt","name":"sql_prompt","description":"A prompt","requiresAuth":false}',
        $b$ BEGIN RETURN mcp.prompt_result(jsonb_build_array(jsonb_build_object('role','user','content', mcp.text('hi'))), (request).request_id, 'p'); END $b$);
      COMMIT;`);
    const spec = await until(() => tool('sql_hello'));
    expect(spec.description).toBe('Hello from SQL');
    await until(() => s!.registry.prompt('sql_prompt'));
    await sleep(200);
    expect([...s!.events].sort()).toEqual(['prompts', 'tools']);

    s!.events.length = 0;
    await admin(`SELECT mcp.drop_handler('tool', 'sql_hello')`);
    await until(() => tool('sql_hello') === undefined);
    await sleep(200);
    expect(s!.events).toEqual(['tools']);
    expect(s!.registry.prompt('sql_prompt')).toBeDefined();
  });

  it('reconnects after pg_terminate_backend and keeps working', async () => {
    const pid = s!.watch.listenerPid();
    expect(pid).not.toBeNull();
    await admin('SELECT pg_terminate_backend($1)', [pid]);
    await until(() => s!.watch.listening() && s!.watch.listenerPid() !== pid, 15_000);
    await admin(`
      CREATE FUNCTION live_fn.after_kill() RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT 3';
      COMMENT ON FUNCTION live_fn.after_kill IS '@mcp Created after the LISTEN connection was killed.';`);
    await until(() => tool('after_kill'), 10_000);
  });

  it('without the event trigger, the TTL poll picks DDL up', async () => {
    await s!.stop();
    s = undefined;
    await admin('DROP SCHEMA pgmcp_watch CASCADE');
    expect((await admin('SELECT 1 FROM pg_event_trigger')).rowCount).toBe(0);
    s = await startLive(serveUrl, { ttlMs: 400 });
    if (pgInfo.role === TEST_ROLE) {
      expect(s.watch.trigger()).toBe('not-permitted');
      expect((await admin('SELECT 1 FROM pg_event_trigger')).rowCount).toBe(0);
    }
    expect(tool('after_kill')).toBeDefined();
    await admin(`
      CREATE FUNCTION live_fn.by_poll() RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT 4';
      COMMENT ON FUNCTION live_fn.by_poll IS '@mcp Seen by the poll.';`);
    await until(() => tool('by_poll'), 10_000);
    s.events.length = 0;
    await sleep(1_000); // two more ticks with nothing changed: no events
    expect(s.events).toEqual([]);
  });
});

describe.skipIf(process.env['PGMCP_TEST_NO_EMBEDDED'] === '1')(
  'live catalog on the embedded database',
  () => {
    const root = mkdtempSync(join(tmpdir(), 'pgmcp-live-'));
    let s: Live | undefined;
    afterAll(async () => {
      await s?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it('polls (no LISTEN connection possible) and picks up a new annotated function', async () => {
      s = await startLive('', { ttlMs: 300, embedded: join(root, 'data'), handlers: false });
      expect(s.watch.mode).toBe('poll');
      expect(s.watch.listening()).toBe(false);
      await s.db.withOwnConnection((c) =>
        c.query(`CREATE SCHEMA emb_fn;
      CREATE FUNCTION emb_fn.emb_one() RETURNS int4 LANGUAGE sql IMMUTABLE AS 'SELECT 1';
      COMMENT ON FUNCTION emb_fn.emb_one IS '@mcp Embedded.';`),
      );
      await until(() => s!.registry.tool('emb_one'), 10_000);
      await sleep(200);
      expect(s.events).toEqual(['tools']);
    }, 60_000);
  },
);
