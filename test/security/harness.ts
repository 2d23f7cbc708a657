// Runs the hostile corpus and the legitimate list against one deployment of the BUILT server
// (one server per database, Streamable HTTP, the official SDK client) and checks, after every
// entry, that the read-only promise held:
//   (a) the call answered (isError, or a bounded / literal answer) — never a protocol failure;
//   (b) nothing was written: the sentinel table, the catalog counts, roles, large objects,
//       settings files and the host's /tmp are as they were;
//   (c) nothing survived the call: a probe through the SAME server (pool of one connection, so
//       the same session) still sees the READ ONLY transaction, the configured timeout, no
//       caller identity, the same role, standard_conforming_strings on, and no session-level
//       setting, advisory lock, LISTEN, prepared statement, cursor or temp table left behind;
//   (d) the server answered that probe;
//   (e) the server process stayed under a memory bound.
// It records which wall stopped each entry and prints a summary table at the end.
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONNECTORS,
  LATEST_LEGACY,
  type McpConnection,
  type ToolCallResult,
} from '../helpers/connectors.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';
import { HOSTILE, fill, type Category, type CorpusEntry, type Held } from './corpus.js';
import { LEGITIMATE } from './legit.js';

export const STATEMENT_TIMEOUT_MS = 2_000;
/**
 * The embedded target's: a 5 MB literal takes its call 2.5 s on a 2-core machine (PGlite alone:
 * 0.3 s; the rest is pgmcp's handling of the literal inside the call's time, to be looked into).
 * Timeouts are still judged against STATEMENT_TIMEOUT_MS.
 */
export const EMBEDDED_STATEMENT_TIMEOUT_MS = 4_000;
/** The default byte cap (database.maxResultBytes); the server runs with the default caps. */
export const MAX_RESULT_BYTES = 1_048_576;
/**
 * How late a timed-out or bounded answer may come back: the embedded database restarts, and a
 * 200 MB value is read off the socket before its size can be judged, which on a loaded 2-core
 * machine took 5.5 s. An unbounded query (pg_sleep(30), an endless CTE) is still far past it.
 */
const LATE_MS = 8_000;
export const RSS_LIMIT_MB = 400;
const MB = 1024 * 1024;

/** The environment of every server under test: short timeout, default caps, room for a 5 MB query. */
export function securityServerEnv(extra: Record<string, string> = {}): Record<string, string> {
  return serverEnv({
    PGMCP_LOG_LEVEL: 'warn',
    PGMCP_DEMO: 'false',
    PGMCP_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    PGMCP_HTTP_BODY_LIMIT_BYTES: String(16 * MB),
    ...extra,
  });
}

/** The fixture: a sentinel table that must never change, a sequence, owner-defined code. */
export function fixtureSql(s: string): string {
  return `
    CREATE SCHEMA ${s};
    CREATE TABLE ${s}.sentinel (
      id integer PRIMARY KEY, name text NOT NULL, grp text NOT NULL, amount numeric(10,2) NOT NULL,
      doc jsonb NOT NULL, created date NOT NULL
    ) WITH (autovacuum_enabled = false);
    INSERT INTO ${s}.sentinel
      SELECT i, 'item ' || lpad(i::text, 2, '0'), chr(97 + i % 3), i * 1.25,
             jsonb_build_object('id', i, 'tags', jsonb_build_array('t' || i % 4, 'all'), 'score', i % 7),
             date '2024-01-01' + i
      FROM generate_series(1, 50) AS i;
    COMMENT ON TABLE ${s}.sentinel IS 'pgmcp security sentinel: must never change';
    CREATE SEQUENCE ${s}.sentinel_seq;
    CREATE FUNCTION ${s}.owner_writer() RETURNS int LANGUAGE plpgsql
      AS $$ BEGIN DELETE FROM ${s}.sentinel; RETURN 1; END $$;
    CREATE FUNCTION ${s}.definer_writer() RETURNS int LANGUAGE plpgsql SECURITY DEFINER
      AS $$ BEGIN DELETE FROM ${s}.sentinel; RETURN 1; END $$;
    CREATE FUNCTION ${s}.owner_timeout() RETURNS text LANGUAGE plpgsql
      AS $$ BEGIN PERFORM set_config('statement_timeout', '0', false); RETURN 'ok'; END $$;
    CREATE PROCEDURE ${s}.purge() LANGUAGE sql AS $$ DELETE FROM ${s}.sentinel $$;
    ANALYZE ${s}.sentinel;
  `;
}

/**
 * Everything a write could change, in one row. No backslashes in it: the fixture database reads
 * strings with standard_conforming_strings off. `statistics` false where the snapshot is read
 * through the server and the served database holds the state schema (the embedded default):
 * pgmcp then hides the planner statistics, which would show sample values of its tables.
 */
// role_memberships counts only what a hostile GRANT would be after (predefined pg_* roles, the
// corpus's own roles, privileged roles): other suites running at the same time grant their
// own plain roles to the shared test role.
export function snapshotSql(s: string, role: string, statistics = true): string {
  const count = (from: string) => `(SELECT count(*) FROM ${from})::int`;
  return `SELECT
    ${count('pg_catalog.pg_class')} AS relations,
    ${count('pg_catalog.pg_proc')} AS functions,
    ${count('pg_catalog.pg_namespace')} AS schemas,
    ${count('pg_catalog.pg_largeobject_metadata')} AS large_objects,
    ${count('pg_catalog.pg_extension')} AS extensions,
    ${count('pg_catalog.pg_trigger')} AS triggers,
    ${count('pg_catalog.pg_description')} AS comments,
    ${count('pg_catalog.pg_prepared_xacts')} AS prepared_transactions,
    ${count("pg_catalog.pg_roles WHERE rolname = 'pgmcp_sec_evil'")} AS evil_roles,
    ${count("pg_catalog.pg_database WHERE datname = 'pgmcp_sec_evil'")} AS evil_databases,
    (SELECT rolsuper::text || rolcreaterole::text || rolcreatedb::text || rolbypassrls::text
       FROM pg_catalog.pg_roles WHERE rolname = '${role}') AS role_attributes,
    ${count(`pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles r ON r.oid = m.member JOIN pg_catalog.pg_roles g ON g.oid = m.roleid WHERE r.rolname = '${role}' AND (left(g.rolname, 3) = 'pg_' OR left(g.rolname, 9) = 'pgmcp_sec' OR g.rolsuper OR g.rolcreaterole OR g.rolbypassrls)`)} AS role_memberships,
    ${count(`pg_catalog.pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database()) OR setrole = (SELECT oid FROM pg_catalog.pg_roles WHERE rolname = '${role}')`)} AS role_and_database_settings,
    (SELECT count(*)::text || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY t.id), ''))
       FROM ${s}.sentinel t) AS sentinel,
    (SELECT coalesce(relacl::text, '') FROM pg_catalog.pg_class WHERE oid = '${s}.sentinel'::regclass) AS sentinel_acl,
    obj_description('${s}.sentinel'::regclass, 'pg_class') AS sentinel_comment,
    (SELECT last_value::text || ':' || is_called::text FROM ${s}.sentinel_seq) AS sequence,
    ${statistics ? count(`pg_catalog.pg_stats WHERE schemaname = '${s}'`) : "'hidden'"} AS statistics,
    ${count("pg_catalog.pg_file_settings WHERE sourcefile LIKE '%auto.conf'")} AS auto_conf_settings`;
}

/** What a call through the same server sees right after a hostile one. */
const PROBE_SQL = `SELECT
  current_setting('transaction_read_only') AS read_only,
  current_setting('statement_timeout') AS statement_timeout,
  coalesce(current_setting('auth.user_id', true), '') AS auth_user_id,
  current_user::text AS who,
  session_user::text AS session_who,
  current_setting('standard_conforming_strings') AS standard_conforming_strings,
  current_setting('search_path') AS search_path,
  (SELECT coalesce(string_agg(name || '=' || setting, ', ' ORDER BY name), '')
     FROM pg_catalog.pg_settings WHERE source = 'session') AS session_settings,
  (SELECT count(*) FROM pg_catalog.pg_locks
     WHERE locktype = 'advisory' AND pid = pg_backend_pid())::int AS advisory_locks,
  (SELECT count(*) FROM pg_catalog.pg_listening_channels())::int AS listening,
  (SELECT count(*) FROM pg_catalog.pg_prepared_statements WHERE from_sql)::int AS sql_prepared,
  (SELECT count(*) FROM pg_catalog.pg_cursors WHERE is_holdable)::int AS holdable_cursors,
  (SELECT count(*) FROM pg_catalog.pg_class WHERE relnamespace = pg_my_temp_schema())::int AS temp_relations,
  (SELECT reset_val FROM pg_catalog.pg_settings WHERE name = 'standard_conforming_strings') AS scs_default,
  pg_backend_pid() AS backend`;

export type Row = Record<string, unknown>;

export interface Target {
  readonly label: string;
  readonly kind: 'postgres' | 'embedded';
  /** current_user of the server's queries. */
  readonly role: string;
  readonly schema: string;
  readonly database: string;
  /** Extensions created in the fixture database. */
  readonly extensions: readonly string[];
  readonly server: HttpServer;
  readonly conn: McpConnection;
  /** A backend that hostile calls try to terminate (null: nothing to watch). */
  readonly victimPid: number | null;
  /** The catalog and sentinel state (snapshotSql), read outside the server where possible. */
  snapshot(): Promise<Row>;
  /** Extra after-each checks of this target (a live victim, no server-side leftovers). */
  checkOutside(): Promise<void>;
  teardown(): Promise<void>;
}

export interface TargetSetup {
  kind: 'postgres' | 'embedded';
  label: string;
  role: string;
  schema: string;
  database: string;
  extensions: string[];
  serverArgs: string[];
  env: Record<string, string>;
  victimPid: number | null;
  snapshot: ((conn: McpConnection) => Promise<Row>) | null;
  checkOutside?: () => Promise<void>;
  cleanup: () => Promise<void>;
}

/** Start the built server for `setup` and connect the SDK client (Streamable HTTP, 2025-11-25). */
export async function startTarget(setup: TargetSetup): Promise<Target> {
  let server: HttpServer | undefined;
  let conn: McpConnection | undefined;
  try {
    server = await startHttpServer(setup.serverArgs, { env: setup.env });
    const url = server.url;
    const connector = CONNECTORS.find(
      (c) => c.transport === 'http' && c.era === 'legacy' && c.version === LATEST_LEGACY,
    )!;
    conn = await connector.connect({ httpUrl: () => url, stdioArgs: [], env: setup.env });
  } catch (error) {
    await server?.stop();
    await setup.cleanup();
    throw error;
  }
  const c = conn;
  const s = server;
  return {
    label: setup.label,
    kind: setup.kind,
    role: setup.role,
    schema: setup.schema,
    database: setup.database,
    extensions: setup.extensions,
    server: s,
    conn: c,
    victimPid: setup.victimPid,
    snapshot: () =>
      setup.snapshot
        ? setup.snapshot(c)
        : queryRow(c, snapshotSql(setup.schema, setup.role, setup.kind !== 'embedded')),
    checkOutside: setup.checkOutside ?? (async () => undefined),
    async teardown() {
      await c.close().catch(() => undefined);
      await s.stop();
      await setup.cleanup();
    },
  };
}

function textOf(result: ToolCallResult): string {
  return result.content.map((c) => c.text ?? '').join('\n');
}

/** One row of a query through the server, as an object keyed by column name. */
export async function queryRow(conn: McpConnection, query: string): Promise<Row> {
  const result = await conn.callTool('query_database', { query });
  if (result.isError) throw new Error(`query through the server failed: ${textOf(result)}`);
  const structured = result.structuredContent as { columns: { name: string }[]; rows: unknown[][] };
  const row = structured.rows[0] ?? [];
  return Object.fromEntries(structured.columns.map((col, i) => [col.name, row[i]]));
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

// ---------------------------------------------------------------------------------------------
// Which wall stopped an entry.

export type Wall =
  | 'input schema'
  | 'parser guard'
  | 'read-only transaction'
  | 'role privileges'
  | 'statement timeout'
  | 'result size limit'
  | 'row cap'
  | 'byte cap'
  | 'catalog lookup'
  | 'credential wall'
  | 'access policy'
  | 'ran harmlessly'
  | `PostgreSQL ${string}`;

export function wallOf(result: ToolCallResult): Wall {
  const text = textOf(result);
  if (!result.isError) {
    const structured = result.structuredContent as { truncated?: boolean } | undefined;
    if (/byte result cap|\[cut: /.test(text)) return 'byte cap';
    if (structured?.truncated) return 'row cap';
    if (/withheld as \[credential withheld\]/.test(text)) return 'credential wall';
    if (text.includes('****')) return 'access policy';
    return 'ran harmlessly';
  }
  if (text.startsWith('Invalid arguments for')) return 'input schema';
  if (/pgmcp never returns credentials/.test(text)) return 'credential wall';
  if (
    /access policy|masked column|allowFunctions|columns you may not use|hidden or masked/.test(text)
  )
    return 'access policy';
  if (/^(Refused|The query holds|The query is empty)/.test(text)) return 'parser guard';
  if (text.includes('This database is read-only: ask for a SELECT')) return 'parser guard';
  if (text.startsWith('No table or view')) return 'catalog lookup';
  if (text.includes('timed out (limit')) return 'statement timeout';
  if (text.startsWith('A single row of the result is')) return 'result size limit';
  const sqlstate = /^ERROR ([0-9A-Z]{5})/.exec(text)?.[1];
  // Syntax errors come from the guard's parser (libpg-query): the server never saw the text.
  if (sqlstate === '42601') return 'parser guard';
  if (sqlstate === '25006') return 'read-only transaction';
  if (sqlstate === '42501') return 'role privileges';
  return `PostgreSQL ${sqlstate ?? 'error'}`;
}

function firstCell(entry: { tool: string }, result: ToolCallResult): unknown {
  const structured = result.structuredContent as { rows?: unknown[][]; count?: number } | undefined;
  return entry.tool === 'count_rows' ? structured?.count : structured?.rows?.[0]?.[0];
}

/** Why the answer does not meet `held` (null: it does). */
function notHeld(
  held: Held,
  result: ToolCallResult,
  wall: Wall,
  ms: number,
  expected: unknown,
): string | null {
  const late = ms > STATEMENT_TIMEOUT_MS + LATE_MS ? `came back after ${Math.round(ms)} ms` : null;
  switch (held.kind) {
    case 'refused':
      return result.isError ? null : `ran (${wall}) instead of being refused`;
    case 'missing':
      if (!result.isError) return `ran (${wall}) instead of answering as a missing object`;
      return /^ERROR [0-9A-Z]{5}: (relation|type|schema) "[^"]*" does not exist/.test(
        textOf(result),
      )
        ? null
        : `expected "… does not exist", got ${wall}`;
    case 'no-leak':
      return textOf(result).includes(held.marker) ? `the answer holds ${held.marker}` : null;
    case 'timeout':
      if (wall !== 'statement timeout') return `expected a timeout, got ${wall}`;
      if (ms < STATEMENT_TIMEOUT_MS * 0.9) return `timed out too early (${Math.round(ms)} ms)`;
      return late;
    case 'bounded': {
      const ok =
        wall === 'statement timeout' ||
        wall === 'result size limit' ||
        wall === 'row cap' ||
        wall === 'byte cap' ||
        /^PostgreSQL 5[34]/.test(wall); // the server's own resource limits
      return ok ? late : `expected a bounded answer, got ${wall}`;
    }
    case 'value': {
      if (result.isError) return `expected a value, got an error (${wall})`;
      const got = firstCell({ tool: 'query_database' }, result);
      return JSON.stringify(got) === JSON.stringify(expected)
        ? null
        : `expected ${JSON.stringify(expected)}, got ${JSON.stringify(got)}`;
    }
  }
}

// ---------------------------------------------------------------------------------------------

export interface EntryResult {
  name: string;
  category: Category;
  tool: string;
  wall: Wall;
  ms: number;
  rssMb: number;
}

/** The whole suite for one target: baseline, every hostile entry, every legitimate one, summary. */
export function runSecuritySuite(label: string, setup: () => Promise<Target>): void {
  let target: Target;
  let baseline: { probe: Row; snapshot: Row };
  let vars: Record<string, string>;
  const filePrefix = `/tmp/pgmcp-sec-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const results: EntryResult[] = [];
  let maxRss = 0;

  const strayFiles = (): string[] =>
    readdirSync('/tmp').filter((f) => f.startsWith(basename(filePrefix)));

  beforeAll(async () => {
    target = await setup();
    const probe = await queryRow(target.conn, PROBE_SQL);
    baseline = { probe, snapshot: await target.snapshot() };
    vars = {
      s: target.schema,
      db: target.database,
      role: target.role,
      file: filePrefix,
      victim: String(target.victimPid ?? probe['backend']),
    };
    // The baseline itself must be the promised state.
    expect(probe).toMatchObject({
      read_only: 'on',
      statement_timeout: `${(target.kind === 'embedded' ? EMBEDDED_STATEMENT_TIMEOUT_MS : STATEMENT_TIMEOUT_MS) / 1000}s`,
      auth_user_id: '',
      who: target.role,
      standard_conforming_strings: 'on',
      advisory_locks: 0,
      listening: 0,
      sql_prepared: 0,
      holdable_cursors: 0,
      temp_relations: 0,
    });
    expect(String(baseline.snapshot['sentinel'])).toMatch(/^50:/);
    // The database reads backslashes the old way unless pgmcp turns standard strings on.
    expect(probe['scs_default']).toBe('off');
  }, 180_000);

  afterAll(async () => {
    printSummary(label, results, maxRss, baseline?.probe['scs_default']);
    await target?.teardown();
  });

  /** (b)–(e) after every entry. */
  async function checkHeld(what: string): Promise<void> {
    // (c) + (d): the same server answers, and its next transaction is the promised one.
    const probe = await queryRow(target.conn, PROBE_SQL);
    const { backend: _backend, ...stable } = probe;
    const { backend: _base, ...expected } = baseline.probe;
    expect(stable, `${what}: a setting or session state survived the call`).toEqual(expected);
    // (b): nothing written, nothing created.
    expect(await target.snapshot(), `${what}: the database changed`).toEqual(baseline.snapshot);
    expect(strayFiles(), `${what}: a file appeared on the database host`).toEqual([]);
    await target.checkOutside();
    // (e): memory stays bounded.
    const rss = rssMb(target.server.pid);
    maxRss = Math.max(maxRss, rss);
    expect(rss, `${what}: server RSS`).toBeLessThan(RSS_LIMIT_MB);
  }

  describe('hostile corpus', () => {
    it('has at least 60 entries with unique names in every category', () => {
      expect(HOSTILE.length).toBeGreaterThanOrEqual(60);
      const keys = HOSTILE.map((e) => `${e.category}: ${e.name}`);
      expect(new Set(keys).size).toBe(keys.length);
    });

    for (const entry of HOSTILE) {
      it(`${entry.category}: ${entry.name}`, async () => {
        const args = fill(entry.args, vars);
        const expected =
          entry.held.kind === 'value' ? fill({ v: entry.held.value }, vars)['v'] : undefined;
        const started = performance.now();
        // (a) a tool answer, never a protocol error or a dropped connection.
        const result = await target.conn.callTool(entry.tool, args, { timeoutMs: 60_000 });
        const ms = performance.now() - started;
        const wall = wallOf(result);
        const text = textOf(result);
        results.push(record(entry, wall, ms, rssMb(target.server.pid)));
        expect(text.length, 'the answer is bounded').toBeLessThan(3 * MAX_RESULT_BYTES);
        const why = notHeld(entry.held, result, wall, ms, expected);
        expect(why, `${why}\n${text.slice(0, 500)}`).toBeNull();
        await checkHeld(entry.name);
      });
    }
  });

  describe('legitimate analytics pass', () => {
    for (const entry of LEGITIMATE) {
      it(entry.name, async () => {
        const installed = !entry.requires || target.extensions.includes(entry.requires);
        const args = installed ? entry.args : (entry.fallback ?? entry.args);
        const result = await target.conn.callTool(entry.tool, fill(args, vars));
        expect(result.isError, textOf(result).slice(0, 500)).toBeFalsy();
        if (entry.expected !== undefined) expect(firstCell(entry, result)).toEqual(entry.expected);
        await checkHeld(entry.name);
      });
    }
  });
}

function record(entry: CorpusEntry, wall: Wall, ms: number, rss: number): EntryResult {
  return { name: entry.name, category: entry.category, tool: entry.tool, wall, ms, rssMb: rss };
}

function printSummary(
  label: string,
  results: EntryResult[],
  maxRss: number,
  scsDefault: unknown,
): void {
  if (results.length === 0) return;
  const tally = (rows: EntryResult[]): string => {
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.wall, (counts.get(r.wall) ?? 0) + 1);
    return [...counts]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([wall, n]) => `${wall} ${n}`)
      .join(', ');
  };
  const categories = [...new Set(results.map((r) => r.category))];
  const lines = [
    '',
    `=== pgmcp security corpus on ${label}: ${results.length} hostile entries run ===`,
    `server RSS max ${Math.round(maxRss)} MB; the database's own standard_conforming_strings: ${String(scsDefault)}`,
    `walls: ${tally(results)}`,
    '',
    ...categories.map((category) => {
      const rows = results.filter((r) => r.category === category);
      return `  ${`${category} (${rows.length})`.padEnd(38)} ${tally(rows)}`;
    }),
    '',
    'entry by entry:',
    ...results.map(
      (r) =>
        `  ${r.category.padEnd(32)} ${r.name.padEnd(62)} ${r.wall.padEnd(24)} ${String(Math.round(r.ms)).padStart(6)} ms`,
    ),
    '',
  ];
  console.log(lines.join('\n'));
}
