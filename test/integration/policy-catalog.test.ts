// The system catalog under an access policy, as a client meets it: the built server over
// Streamable HTTP, the official SDK client, a non-superuser role. Catalog relations are sent as
// filtered subqueries, so what the caller wrote must still mean what PostgreSQL makes of it: a
// CTE named like a catalog relation is the CTE, error positions count in the caller's text,
// to_regclass answers NULL for a name it cannot show, and count_rows does not count the catalog.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTORS, LATEST_LEGACY, type McpConnection } from '../helpers/connectors.js';
import { realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';
import { serverEnv, startHttpServer, type HttpServer } from '../helpers/server.js';

const pg = await realPostgres('test/integration/policy-catalog.test.ts (catalog under a policy)');

const POLICY = {
  PGMCP_DENY_TABLES: 'cf.vault',
  PGMCP_DENY_SCHEMAS: 'cf_hidden',
  PGMCP_DENY_COLUMNS: 'cf.staff.salary',
};

interface Served {
  server: HttpServer;
  conn: McpConnection;
}

async function serve(url: string, env: Record<string, string>): Promise<Served> {
  const all = serverEnv({ PGMCP_LOG_LEVEL: 'warn', PGMCP_DEMO: 'false', ...POLICY, ...env });
  const server = await startHttpServer(['--database', url], { env: all });
  try {
    const connector = CONNECTORS.find(
      (c) => c.transport === 'http' && c.era === 'legacy' && c.version === LATEST_LEGACY,
    )!;
    const conn = await connector.connect({ httpUrl: () => server.url, stdioArgs: [], env: all });
    return { server, conn };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

interface Answer {
  isError: boolean;
  text: string;
  columns: string[];
  row: unknown[];
  error: Record<string, unknown> | undefined;
}

async function call(
  conn: McpConnection,
  tool: string,
  args: Record<string, unknown>,
): Promise<Answer> {
  const result = await conn.callTool(tool, args);
  const structured = result.structuredContent as
    { columns?: { name: string }[]; rows?: unknown[][] } | undefined;
  const meta = result['_meta'] as Record<string, Record<string, unknown>> | undefined;
  return {
    isError: result.isError === true,
    text: result.content.map((c) => c.text ?? '').join('\n'),
    columns: (structured?.columns ?? []).map((c) => c.name),
    row: structured?.rows?.[0] ?? [],
    error: meta?.['pgmcp/error'],
  };
}

/** The first row of a query that must succeed. */
async function row(conn: McpConnection, query: string): Promise<unknown[]> {
  const answer = await call(conn, 'query_database', { query });
  expect(answer.isError, `${query}\n${answer.text}`).toBe(false);
  return answer.row;
}

/** The caret line describeDbError draws under `line` for a 1-based position in it. */
const caret = (line: string, position: number): string =>
  `LINE: ${line}\n      ${' '.repeat(position - 1)}^`;

describe.skipIf(!pg)('the system catalog under an access policy (PostgreSQL, SDK client)', () => {
  const database = throwawayDatabase(pg!, 'pgmcp_catalog');
  const serverUrl = (): string => {
    const u = new URL(pg!.url);
    u.pathname = `/${database.name}`;
    return u.toString();
  };
  let served: Served;
  let conn: McpConnection;

  beforeAll(async () => {
    await withClient(database.url, (c) =>
      c.query(`
        CREATE SCHEMA cf;
        CREATE TABLE cf.sentinel (id int PRIMARY KEY, name text);
        INSERT INTO cf.sentinel VALUES (1, 'a'), (2, 'b');
        CREATE TABLE cf.vault (id int PRIMARY KEY, token text);
        CREATE TABLE cf.staff (id int PRIMARY KEY, name text, salary int);
        CREATE SCHEMA cf_hidden;
        CREATE TABLE cf_hidden.notes (id int);
        CREATE TYPE cf_hidden.mood AS ENUM ('calm');
        CREATE SEQUENCE cf_hidden.notes_seq;
        CREATE SEQUENCE cf.vault_seq OWNED BY cf.vault.id;
        CREATE TABLE cf.holder (id int DEFAULT nextval('cf_hidden.notes_seq'), m cf_hidden.mood, v cf.vault, k int);
        CREATE INDEX holder_k ON cf.holder (k);
        -- A table of the caller's own schema named like a catalog view, reached through the
        -- search_path ("$user", public): it is not information_schema.tables.
        CREATE TABLE public.tables (id int);
        INSERT INTO public.tables VALUES (1), (2), (3);
        GRANT USAGE ON SCHEMA cf, cf_hidden TO ${pg!.role};
        GRANT SELECT ON ALL TABLES IN SCHEMA cf, cf_hidden, public TO ${pg!.role};
      `),
    );
    served = await serve(serverUrl(), {});
    conn = served.conn;
  }, 120_000);

  afterAll(async () => {
    await served?.conn.close().catch(() => undefined);
    await served?.server.stop();
  });

  it('reads a CTE named like a catalog relation as the CTE, as PostgreSQL resolves names', async () => {
    // The CTE, not the (filtered) catalog relation it is named like.
    expect(await row(conn, 'WITH pg_class AS (SELECT 1 AS x) SELECT x FROM pg_class')).toEqual([1]);
    // A refused catalog relation's name, given to a CTE, is just the CTE.
    expect(await row(conn, 'WITH pg_views AS (SELECT 2 AS x) SELECT x FROM pg_views')).toEqual([2]);
    // Visible from a subquery of the query level that defines it.
    expect(
      await row(conn, 'WITH pg_class AS (SELECT 3 AS x) SELECT (SELECT x FROM pg_class)'),
    ).toEqual([3]);
    // A recursive CTE refers to itself.
    expect(
      await row(
        conn,
        'WITH RECURSIVE pg_class(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM pg_class WHERE x < 4) SELECT sum(x)::int FROM pg_class',
      ),
    ).toEqual([10]);
    // information_schema's views too, unqualified.
    expect(
      await row(conn, "WITH columns AS (SELECT 'mine' AS column_name) SELECT * FROM columns"),
    ).toEqual(['mine']);

    // Where the name is the catalog, it is still filtered: schema-qualified inside the CTE's
    // scope, a plain CTE's own name in its body, a later CTE's name, a CTE of a sibling scope.
    const visibleOnly = "relname IN ('vault', 'sentinel', 'notes')";
    expect(
      await row(
        conn,
        `WITH pg_class AS (SELECT 1 AS x) SELECT (SELECT x FROM pg_class), count(*)::int FROM pg_catalog.pg_class WHERE ${visibleOnly}`,
      ),
    ).toEqual([1, 1]);
    expect(
      await row(
        conn,
        `WITH pg_class AS (SELECT relname FROM pg_class) SELECT count(*)::int FROM pg_class WHERE ${visibleOnly}`,
      ),
    ).toEqual([1]);
    expect(
      await row(
        conn,
        `WITH a AS (SELECT relname FROM pg_class), pg_class AS (SELECT 'x'::name AS relname) SELECT count(*)::int FROM a WHERE ${visibleOnly}`,
      ),
    ).toEqual([1]);
    expect(
      await row(
        conn,
        `SELECT (SELECT count(*) FROM (WITH pg_class AS (SELECT 1) SELECT * FROM pg_class) s)::int, count(*)::int FROM pg_class WHERE ${visibleOnly}`,
      ),
    ).toEqual([1, 1]);
    // The caller's own table named like a catalog view, through the search_path.
    expect(await row(conn, 'SELECT count(*)::int FROM tables')).toEqual([3]);
    expect(
      await row(
        conn,
        "SELECT count(*)::int FROM information_schema.tables WHERE table_schema <> 'information_schema' AND table_name IN ('vault', 'sentinel', 'notes', 'tables')",
      ),
    ).toEqual([2]);
  });

  it('counts error positions in the caller’s text, after a replaced catalog relation', async () => {
    const query = "SELECT 'é' AS e, relname FROM pg_class WHERE nosuch = 1";
    // 'é' is one character and two bytes: the position counts characters, as PostgreSQL does.
    const position = query.indexOf('nosuch') + 1;
    for (const tool of ['query_database', 'execute_explain']) {
      const answer = await call(conn, tool, { query });
      expect(answer.isError, tool).toBe(true);
      expect(answer.error, tool).toMatchObject({ sqlstate: '42703', position: String(position) });
      expect(answer.text, tool).toContain(caret(query, position));
    }
    // A second line, and a replaced information_schema view ahead of the error on it.
    const twoLines =
      'SELECT c.column_name\nFROM information_schema.columns c JOIN pg_attribute a ON a.attname = c.column_name\nWHERE c.nosuch';
    const answer = await call(conn, 'query_database', { query: twoLines });
    expect(answer.error).toMatchObject({
      sqlstate: '42703',
      position: String(twoLines.indexOf('c.nosuch') + 1),
    });
    expect(answer.text).toContain(caret('WHERE c.nosuch', 7));
  });

  it('answers to_regclass of a missing or a denied name with NULL, alike', async () => {
    // The agent idiom: does the table exist?
    expect(await row(conn, "SELECT to_regclass('cf.nosuch') IS NOT NULL")).toEqual([false]);
    expect(await row(conn, "SELECT to_regclass('cf.sentinel') IS NOT NULL")).toEqual([true]);
    expect(await row(conn, "SELECT to_regclass('cf.vault') IS NOT NULL")).toEqual([false]);
    // Missing and denied look the same, column name and all.
    const missing = await call(conn, 'query_database', {
      query: "SELECT to_regclass('cf.nosuch'), to_regtype('cf.nosuch'), to_regnamespace('nosuch')",
    });
    const denied = await call(conn, 'query_database', {
      query: "SELECT to_regclass('cf.vault'), to_regtype('cf.vault'), to_regnamespace('cf_hidden')",
    });
    expect(missing.isError, missing.text).toBe(false);
    expect(denied.isError, denied.text).toBe(false);
    expect(denied.columns).toEqual(['to_regclass', 'to_regtype', 'to_regnamespace']);
    expect(denied.columns).toEqual(missing.columns);
    expect(denied.row).toEqual([null, null, null]);
    expect(missing.row).toEqual([null, null, null]);
    // Qualified, with a cast of its argument, in a filter; a visible table is still found.
    expect(
      await row(
        conn,
        "SELECT pg_catalog.to_regclass('cf.vault'::text) IS NULL, count(*)::int FROM cf.sentinel WHERE to_regclass('cf.staff') IS NOT NULL",
      ),
    ).toEqual([true, 2]);
    expect(await row(conn, "SELECT to_regtype('cf_hidden.notes') IS NULL")).toEqual([true]);
    // A cast still raises PostgreSQL's "does not exist", for both.
    for (const name of ['cf.nosuch', 'cf.vault']) {
      const cast = await call(conn, 'query_database', { query: `SELECT '${name}'::regclass` });
      expect(cast.isError).toBe(true);
      expect(cast.error).toMatchObject({ sqlstate: '42P01' });
      expect(cast.text).toContain(`relation "${name}" does not exist`);
    }
  });

  it('reads a name spaced around its dot as PostgreSQL does: a visible one found, a denied one missing', async () => {
    // PostgreSQL reads ' cf . sentinel ' as cf.sentinel; so does the policy's check of a
    // catalog function's argument or a regclass cast.
    expect(await row(conn, "SELECT ' cf . sentinel '::regclass IS NOT NULL")).toEqual([true]);
    expect(
      await row(
        conn,
        `SELECT pg_relation_size(' "cf" . sentinel ') >= 0, to_regclass('cf . vault')`,
      ),
    ).toEqual([true, null]);
    const denied = await call(conn, 'query_database', { query: "SELECT 'cf . vault'::regclass" });
    expect(denied.isError).toBe(true);
    expect(denied.error).toMatchObject({ sqlstate: '42P01' });
  });

  it('answers a denied type, or a constant PostgreSQL reads as a reg type, as a missing one', async () => {
    // Each pair: the same statement naming a denied object and a missing one. The answers are
    // the same but for the name: text, SQLSTATE and position (counted in characters).
    const pairs: [string, string, string][] = [
      ["SELECT 'é', NULL::cf_hidden.mood", 'cf_hidden', 'cf_nosuch'],
      ["SELECT 'é', (NULL::cf.vault).*", 'cf.vault', 'cf.nosuch'],
      ["SELECT 'é', '{}'::cf.vault[]", 'cf.vault', 'cf.nosuch'],
      ["SELECT * FROM json_to_record('{}') AS t(a cf.vault)", 'cf.vault', 'cf.nosuch'],
      [
        "SELECT 'é', CASE WHEN false THEN 'cf.sentinel'::regclass ELSE 'cf.vault' END",
        'cf.vault',
        'cf.nosuch',
      ],
      ["SELECT ARRAY['cf.sentinel'::regclass, 'cf_hidden.notes']", 'cf_hidden', 'cf_nosuch'],
      ["VALUES ('cf.sentinel'::regclass), ('cf.vault_seq')", 'cf.vault_seq', 'cf.nosuch'],
    ];
    for (const [query, denied, absent] of pairs) {
      for (const tool of ['query_database', 'execute_explain']) {
        const a = await call(conn, tool, { query });
        const b = await call(conn, tool, { query: query.replace(denied, absent) });
        expect(a.isError, `${tool}: ${query}\n${a.text}`).toBe(true);
        expect(b.isError, `${tool}: ${query}\n${b.text}`).toBe(true);
        expect(a.text.replaceAll(denied, absent), `${tool}: ${query}`).toBe(b.text);
        expect(a.error, `${tool}: ${query}`).toEqual(b.error);
        expect(a.text).toMatch(/does not exist/);
        expect(a.error?.['position'], `${tool}: ${query}`).toBeDefined();
      }
    }
    // The call form of a cast is judged as the cast; nextval's argument as a name.
    for (const query of [
      "SELECT regclass('cf.vault')",
      "SELECT pg_catalog.regnamespace('cf_hidden')",
      "SELECT nextval('cf.vault_seq')",
    ]) {
      const answer = await call(conn, 'query_database', { query });
      expect(answer.isError, query).toBe(true);
      expect(answer.text, query).toMatch(
        /^ERROR (42P01|3F000): (relation|schema) ".*" does not exist/,
      );
    }
    // A visible table's row type with a denied column is refused, as its whole-row value is.
    const staff = await call(conn, 'query_database', { query: 'SELECT (NULL::cf.staff).*' });
    expect(staff.isError).toBe(true);
    expect(staff.text).toContain(
      'Refused: the query names the row type of cf.staff, which has columns you may not use',
    );
    // Constants that name denied objects but are read as text are text.
    expect(
      await row(
        conn,
        "SELECT 'cf.vault' || ' ' || 'cf_hidden', count(*)::int FROM pg_namespace WHERE nspname = 'cf_hidden'",
      ),
    ).toEqual(['cf.vault cf_hidden', 0]);
    // No prepared statement is left behind by asking PostgreSQL how it reads the constants.
    expect(await row(conn, 'SELECT count(*)::int FROM pg_prepared_statements')).toEqual([0]);
  });

  it('hides what visible columns, indexes and locks say of denied objects', async () => {
    expect(
      await row(
        conn,
        "SELECT string_agg(column_name || ':' || coalesce(udt_name, '-') || ':' || coalesce(column_default, '-'), ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_schema = 'cf' AND table_name = 'holder'",
      ),
    ).toEqual(['id:int4:-,m:-:-,v:-:-,k:int4:-']);
    expect(
      await row(
        conn,
        "SELECT count(*)::int FROM pg_class WHERE relname IN ('vault_seq', 'notes_seq')",
      ),
    ).toEqual([0]);
    expect(await row(conn, "SELECT indexdef FROM pg_indexes WHERE indexname = 'holder_k'")).toEqual(
      ['CREATE INDEX holder_k ON cf.holder USING btree (k)'],
    );
    // Another session's lock on a denied table is not shown; on a visible one it is.
    const oids = await withClient(database.url, async (c) => {
      const { rows } = await c.query<{ vault: number; sentinel: number }>(
        "SELECT 'cf.vault'::regclass::oid::int AS vault, 'cf.sentinel'::regclass::oid::int AS sentinel",
      );
      return rows[0]!;
    });
    await withClient(database.url, async (c) => {
      await c.query('BEGIN; LOCK TABLE cf.vault, cf.sentinel IN ACCESS SHARE MODE');
      const locked = await row(
        conn,
        `SELECT count(*) FILTER (WHERE relation = ${oids.vault})::int, count(*) FILTER (WHERE relation = ${oids.sentinel})::int FROM pg_locks`,
      );
      await c.query('ROLLBACK');
      expect(locked).toEqual([0, 1]);
    });
  });

  it('reads a column qualified by the catalog relation’s schema', async () => {
    expect(
      await row(
        conn,
        "SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class WHERE pg_catalog.pg_class.relname = 'sentinel'",
      ),
    ).toEqual(['sentinel']);
    expect(
      await row(
        conn,
        "SELECT information_schema.columns.column_name FROM information_schema.columns WHERE table_name = 'sentinel' ORDER BY 1 LIMIT 1",
      ),
    ).toEqual(['id']);
  });

  it('refuses count_rows of a catalog relation, which would count denied objects', async () => {
    for (const [args, name] of [
      [{ table: 'pg_class' }, 'pg_catalog.pg_class'],
      [{ schema: 'information_schema', table: 'columns' }, 'information_schema.columns'],
      [{ table: 'information_schema.tables' }, 'information_schema.tables'],
    ] as const) {
      const answer = await call(conn, 'count_rows', args);
      expect(answer.isError, JSON.stringify(args)).toBe(true);
      expect(answer.error).toMatchObject({ code: 'PGMCP316' });
      expect(answer.text).toContain(
        `Refused: count_rows does not count the rows of a system catalog relation (${name}) under an access policy`,
      );
    }
    const counted = await conn.callTool('count_rows', { schema: 'cf', table: 'sentinel' });
    expect(counted.structuredContent).toMatchObject({ count: 2 });
  });

  describe('with a plan cost limit (the error comes from the estimate)', () => {
    let limited: Served;
    beforeAll(async () => {
      limited = await serve(serverUrl(), { PGMCP_MAX_PLAN_COST: '1000000000' });
    }, 60_000);
    afterAll(async () => {
      await limited?.conn.close().catch(() => undefined);
      await limited?.server.stop();
    });

    it('counts the position in the caller’s text, not in the EXPLAIN sent ahead of it', async () => {
      for (const query of ['SELECT nosuch FROM cf.sentinel', 'SELECT nosuch FROM pg_class']) {
        const answer = await call(limited.conn, 'query_database', { query });
        expect(answer.error, query).toMatchObject({ sqlstate: '42703', position: '8' });
        expect(answer.text, query).toContain(caret(query, 8));
      }
    });
  });
});
