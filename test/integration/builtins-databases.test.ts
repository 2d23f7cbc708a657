// The built-in tools, resources and prompts against a real PostgreSQL (as the non-superuser
// role pgmcp_test, on this file's own fixture schema) and, with the same tests, against the
// embedded PGlite; then the demo dataset (with its vector table) on the embedded database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog } from '../../src/catalog/index.js';
import { ErrorCodes, type AppError } from '../../src/core/errors.js';
import type { PromptSpec, ResourceTemplateSpec, ToolSpec } from '../../src/core/specs.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { createAccessPolicy, NO_RULES, type AccessPolicy } from '../../src/tools/access-policy.js';
import { registerBuiltins } from '../../src/tools/builtin/index.js';
import { createGetSchemaInfoTool } from '../../src/tools/builtin/get-schema-info.js';
import { createExecuteExplainTool } from '../../src/tools/explain/execute-explain.js';
import { createRegistry, type Registry } from '../../src/tools/registry.js';
import { DEFAULT_DENIED_FUNCTIONS } from '../../src/tools/sql-guard.js';
import {
  realPostgres,
  TEST_ROLE,
  uniqueSchemaName,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';

const pgInfo = await realPostgres('test/integration/builtins-databases.test.ts (built-in tools)');
const logger = pino({ level: 'silent' });
const LIMITS = {
  defaultRows: 100,
  maxRows: 1000,
  maxResultBytes: 1_048_576,
  statementTimeoutMs: 10_000,
};

/** Related tables, comments, indexes, keys, a partitioned table, views, and a big table. */
function fixture(s: string): string {
  return `
    CREATE SCHEMA ${s};
    COMMENT ON SCHEMA ${s} IS 'builtins fixture';
    CREATE TABLE ${s}.customers (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      email text NOT NULL UNIQUE,
      name text NOT NULL,
      ssn text,
      created_at timestamptz NOT NULL DEFAULT now(),
      name_upper text GENERATED ALWAYS AS (upper(name)) STORED
    );
    COMMENT ON TABLE ${s}.customers IS 'People who buy things';
    COMMENT ON COLUMN ${s}.customers.email IS 'Login address';
    CREATE TABLE ${s}.orders (
      id bigserial PRIMARY KEY,
      customer_id integer NOT NULL REFERENCES ${s}.customers (id),
      status text NOT NULL,
      total numeric(10,2) NOT NULL,
      placed_at date NOT NULL
    );
    COMMENT ON TABLE ${s}.orders IS 'One purchase';
    CREATE INDEX orders_status_idx ON ${s}.orders (status);
    CREATE INDEX orders_customer_idx ON ${s}.orders (customer_id, placed_at);
    CREATE TABLE ${s}.order_lines (
      order_id bigint REFERENCES ${s}.orders (id),
      line_no integer,
      sku text NOT NULL,
      qty integer NOT NULL,
      PRIMARY KEY (order_id, line_no)
    );
    CREATE TABLE ${s}.events (id bigint, happened_at date NOT NULL, kind text)
      PARTITION BY RANGE (happened_at);
    CREATE TABLE ${s}.events_2024 PARTITION OF ${s}.events
      FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
    CREATE TABLE ${s}.events_2025 PARTITION OF ${s}.events
      FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
    CREATE VIEW ${s}.big_orders AS SELECT id, customer_id, total FROM ${s}.orders WHERE total > 100;
    CREATE MATERIALIZED VIEW ${s}.customer_totals AS
      SELECT customer_id, sum(total) AS total FROM ${s}.orders GROUP BY customer_id;
    CREATE TABLE ${s}.secrets (id integer PRIMARY KEY, value text);
    CREATE TABLE ${s}.readings AS
      SELECT g AS id, g % 100 AS sensor, g % 100 AS sensor_copy, (g % 1000)::float8 AS value
      FROM generate_series(1, 30000) g;
    INSERT INTO ${s}.customers (email, name, ssn)
      SELECT 'c' || g || '@example.org', 'customer ' || g, '000-00-' || g FROM generate_series(1, 20) g;
    INSERT INTO ${s}.orders (customer_id, status, total, placed_at)
      SELECT 1 + g % 20, (ARRAY['new', 'paid', 'shipped'])[1 + g % 3], g * 1.5, date '2025-01-01' + g
      FROM generate_series(1, 200) g;
    INSERT INTO ${s}.events VALUES (1, '2024-05-01', 'a'), (2, '2025-02-01', 'b'), (3, '2025-03-01', 'b');
    INSERT INTO ${s}.secrets VALUES (1, 'the password');
    ANALYZE ${s}.customers; ANALYZE ${s}.orders; ANALYZE ${s}.events; ANALYZE ${s}.readings;
    ANALYZE ${s}.secrets; ANALYZE ${s}.order_lines;
  `;
}

interface Setup {
  db: Database;
  schema: string;
  /** DDL as the fixture's owner. */
  admin(sql: string): Promise<void>;
  /**
   * Another connection as the server's role, named `applicationName`, idle after running
   * `sql`; resolves to its close(). Only where the database has more than one session.
   */
  openSession?(applicationName: string, sql: string): Promise<() => Promise<void>>;
  cleanup(): Promise<void>;
}

async function onPostgres(info: RealPostgres): Promise<Setup> {
  const schema = uniqueSchemaName('pgmcp_it');
  await withClient(info.adminUrl, async (client) => {
    await client.query(fixture(schema));
    if (info.role === TEST_ROLE) {
      await client.query(`GRANT USAGE ON SCHEMA ${schema} TO ${TEST_ROLE}`);
      await client.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${TEST_ROLE}`);
      await client.query(`REVOKE SELECT ON ${schema}.secrets FROM ${TEST_ROLE}`);
      await client.query(
        `ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT ON TABLES TO ${TEST_ROLE}`,
      );
    }
  });
  const db = await createDatabase(
    {
      url: info.url,
      poolSize: 2,
      embedded: { dataDir: '/nonexistent', demo: false },
    },
    logger,
  );
  return {
    db,
    schema,
    admin: (sql) => withClient(info.adminUrl, (c) => c.query(sql)).then(() => undefined),
    async openSession(applicationName, sql) {
      const client = new pg.Client({
        connectionString: info.url,
        application_name: applicationName,
      });
      client.on('error', () => undefined);
      await client.connect();
      await client.query(sql);
      return () => client.end();
    },
    async cleanup() {
      await db.close();
      await withClient(info.adminUrl, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    },
  };
}

let embedded: { db: Database; root: string } | null = null;
async function embeddedDb(): Promise<Database> {
  if (!embedded) {
    const root = mkdtempSync(join(tmpdir(), 'pgmcp-builtins-'));
    const db = await createDatabase(
      {
        url: null,
        poolSize: 1,
        embedded: { dataDir: join(root, 'data'), demo: true },
      },
      logger,
    );
    embedded = { db, root };
  }
  return embedded.db;
}

async function onEmbedded(): Promise<Setup> {
  const db = await embeddedDb();
  const schema = uniqueSchemaName('pgmcp_it');
  await db.withOwnConnection((c) => c.query(fixture(schema)));
  return {
    db,
    schema,
    admin: (sql) => db.withOwnConnection((c) => c.query(sql)).then(() => undefined),
    async cleanup() {
      await db.withOwnConnection((c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    },
  };
}

afterAll(async () => {
  if (!embedded) return;
  await embedded.db.close();
  rmSync(embedded.root, { recursive: true, force: true });
}, 30_000);

const ctx = () => createFakeContext().ctx;
const text = (result: { content: { type: string }[] }): string =>
  result.content.map((c) => (c as { text?: string }).text ?? '').join('\n');

/** Everything registered for one database, as an MCP server would have it. */
function serve(db: Database, policy: AccessPolicy, showQueryText = false) {
  const catalog = createCatalog(db, policy, { ttlMs: 60_000 });
  const registry = createRegistry();
  registerBuiltins(registry, {
    db,
    catalog,
    policy,
    limits: LIMITS,
    allowWrites: false,
    deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
    showQueryText,
  });
  const tool = (name: string): ToolSpec => registry.tool(name)!.spec;
  const call = (name: string, args: Record<string, unknown>) => tool(name).call(args, ctx());
  const template = (uri: string): ResourceTemplateSpec =>
    registry.templates().find((t) => t.uriTemplate === uri)!;
  const prompt = (name: string): PromptSpec => registry.prompt(name)!;
  const read = async (uri: string): Promise<any> => {
    const direct = registry.resource(uri);
    const result = direct
      ? await direct.read(ctx())
      : await (() => {
          const m = registry.matchTemplate(uri);
          if (!m) throw new Error(`no resource ${uri}`);
          return m.template.read(uri, m.vars, ctx());
        })();
    expect(result.contents[0]).toMatchObject({ uri, mimeType: 'application/json' });
    return JSON.parse((result.contents[0] as { text: string }).text);
  };
  return { catalog, registry, tool, call, template, prompt, read };
}

/** [name, setup, skip, whether other sessions than the server's can exist (PGlite has one)] */
const targets: Array<[string, () => Promise<Setup>, boolean, boolean]> = [
  ['PostgreSQL', () => onPostgres(pgInfo!), !pgInfo, true],
  ['the embedded database', onEmbedded, false, false],
];

describe.each(targets)('built-in tools on %s', (_name, setup, skip, otherSessions) => {
  let s: Setup;
  let open: ReturnType<typeof serve>;
  let S: string;

  beforeAll(async () => {
    if (skip) return;
    s = await setup();
    S = s.schema;
    open = serve(s.db, createAccessPolicy(NO_RULES));
  }, 120_000);

  afterAll(async () => {
    await s?.cleanup();
  }, 60_000);

  describe.skipIf(skip)('catalog', () => {
    it('describes tables, columns, keys, indexes, comments and partitions', async () => {
      const snap = await open.catalog.snapshot();
      expect(snap.schema(S)).toEqual({ name: S, comment: 'builtins fixture' });
      expect(snap.relationsOf(S).map((r) => `${r.name}:${r.kind}`)).toEqual([
        'big_orders:view',
        'customer_totals:materialized_view',
        'customers:table',
        'events:partitioned_table',
        'events_2024:table',
        'events_2025:table',
        'order_lines:table',
        'orders:table',
        'readings:table',
        'secrets:table',
      ]);
      const customers = snap.relation(S, 'customers')!;
      expect(customers.comment).toBe('People who buy things');
      expect(customers.rowEstimate).toBe(20);
      expect(customers.primaryKey).toEqual({ name: 'customers_pkey', columns: ['id'] });
      const col = (name: string) => customers.columns.find((c) => c.name === name)!;
      expect(col('id')).toMatchObject({
        dataType: 'integer',
        nullable: false,
        identity: 'always',
        isPrimaryKey: true,
        isUnique: true,
        isIndexed: true,
      });
      expect(col('email')).toMatchObject({ comment: 'Login address', isUnique: true });
      expect(col('created_at')).toMatchObject({
        dataType: 'timestamp with time zone',
        default: 'now()',
      });
      expect(col('name_upper')).toMatchObject({
        default: null,
        generated: { kind: 'stored', expression: 'upper(name)' },
      });
      const orders = snap.relation(S, 'orders')!;
      expect(orders.columns.find((c) => c.name === 'customer_id')).toMatchObject({
        references: { schema: S, table: 'customers', column: 'id' },
        isIndexed: true,
      });
      expect(orders.columns.find((c) => c.name === 'placed_at')!.isIndexed).toBe(false);
      expect(orders.columns.find((c) => c.name === 'id')!.default).toMatch(/^nextval\(/);
      expect(orders.indexes.map((i) => [i.name, i.columns, i.method])).toEqual([
        ['orders_customer_idx', ['customer_id', 'placed_at'], 'btree'],
        ['orders_pkey', ['id'], 'btree'],
        ['orders_status_idx', ['status'], 'btree'],
      ]);
      const lines = snap.relation(S, 'order_lines')!;
      expect(lines.primaryKey!.columns).toEqual(['order_id', 'line_no']);
      expect(lines.columns.filter((c) => c.isUnique)).toEqual([]);
      expect(lines.foreignKeys).toEqual([
        expect.objectContaining({
          columns: ['order_id'],
          references: { schema: S, table: 'orders', columns: ['id'] },
          onDelete: 'NO ACTION',
        }),
      ]);
      const events = snap.relation(S, 'events')!;
      expect(events.partitionKey).toBe('RANGE (happened_at)');
      expect(events.partitions).toEqual([
        { schema: S, name: 'events_2024' },
        { schema: S, name: 'events_2025' },
      ]);
      expect(events.rowEstimate).toBe(3);
      expect(snap.relation(S, 'events_2025')).toMatchObject({
        isPartition: true,
        parent: { schema: S, name: 'events' },
        partitionBound: "FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
      });
      expect(snap.relation(S, 'big_orders')!.rowEstimate).toBeNull();
      expect(
        snap.relations.some((r) => ['pg_catalog', 'information_schema'].includes(r.schema)),
      ).toBe(false);
    });

    it('caches the snapshot and reloads after invalidate(), telling onChange listeners', async () => {
      // Only this file's schema: other test files change other schemas meanwhile.
      const { catalog } = serve(s.db, createAccessPolicy({ ...NO_RULES, allowSchemas: [S] }));
      const first = await catalog.snapshot();
      expect(await catalog.snapshot()).toBe(first);
      const changes: number[] = [];
      const off = catalog.onChange((next) => changes.push(next.relations.length));
      catalog.invalidate();
      const same = await catalog.snapshot();
      expect(same).not.toBe(first);
      expect(changes).toEqual([]); // nothing changed in the structure
      await s.admin(`CREATE TABLE ${S}.added_later (x integer)`);
      try {
        catalog.invalidate();
        const next = await catalog.snapshot();
        expect(next.relation(S, 'added_later')).toBeDefined();
        expect(changes).toEqual([next.relations.length]);
      } finally {
        off();
        await s.admin(`DROP TABLE ${S}.added_later`);
        catalog.invalidate();
      }
    });
  });

  describe.skipIf(skip)('get_schema_info', () => {
    it('lists a schema as TSV with the seed’s columns, partitions folded', async () => {
      const out = text(await open.call('get_schema_info', { schema_name: S }));
      const [first, blank, header, ...rest] = out.split('\n');
      expect(first).toMatch(/^Database: \S+/);
      expect(blank).toBe('');
      expect(header).toBe(
        'schema\ttable\ttype\ttable_desc\tcolumn\tdata_type\tnullable\tcol_desc\tis_pk\tis_unique\tfk_ref\tis_indexed\tidentity\tdefault\tis_vector\tvector_dims',
      );
      const row = (table: string, column: string) =>
        rest
          .find((l) => l.startsWith(`${S}\t${table}\t`) && l.split('\t')[4] === column)
          ?.split('\t');
      expect(row('customers', 'id')).toEqual([
        S,
        'customers',
        'table',
        'People who buy things',
        'id',
        'integer',
        'NO',
        '',
        'YES',
        'YES',
        '',
        'YES',
        'ALWAYS',
        '',
        'NO',
        '',
      ]);
      expect(row('customers', 'email')!.slice(3, 10)).toEqual([
        '',
        'email',
        'text',
        'NO',
        'Login address',
        'NO',
        'YES',
      ]);
      expect(row('customers', 'name_upper')![13]).toBe('GENERATED ALWAYS AS (upper(name)) STORED');
      expect(row('orders', 'customer_id')![10]).toBe(`${S}.customers(id)`);
      expect(row('order_lines', 'order_id')!.slice(8, 12)).toEqual([
        'YES',
        'NO',
        `${S}.orders(id)`,
        'YES',
      ]);
      expect(row('events', 'id')![3]).toBe('[partitioned by RANGE (happened_at); 2 partitions]');
      expect(rest.some((l) => l.includes('events_2024'))).toBe(false);
      expect(row('big_orders', 'total')![2]).toBe('view');
      expect(out).toContain('query the parent, or pass include_partitions=true');
      // Deterministic order: table, then column position.
      const order = rest
        .filter((l) => l.startsWith(`${S}\t`))
        .map((l) => l.split('\t').slice(1, 2)[0]);
      expect(order).toEqual([...order].sort());
      expect(text(await open.call('get_schema_info', { schema_name: S }))).toBe(out);
    });

    it('filters by table, lists partitions on request, and has a compact layout', async () => {
      const one = text(
        await open.call('get_schema_info', { schema_name: S, table_name: 'orders' }),
      );
      expect(one.split('\n').filter((l) => l.startsWith(`${S}\t`))).toHaveLength(5);
      const parts = text(
        await open.call('get_schema_info', { schema_name: S, include_partitions: true }),
      );
      expect(parts).toContain(`${S}\tevents_2024\ttable\t[partition of ${S}.events FOR VALUES`);
      const compact = text(
        await open.call('get_schema_info', { schema_name: S, table_name: 'orders', compact: true }),
      );
      expect(compact.split('\n')[2]).toBe('schema\ttable\ttype\tcolumn\tdata_type\tnullable\tkeys');
      expect(compact).toContain(`${S}\torders\ttable\tid\tbigint\tNO\tPK`);
      expect(compact).toContain(
        `${S}\torders\ttable\tcustomer_id\tinteger\tNO\tFK ${S}.customers(id), INDEXED`,
      );
      expect(compact).toContain(`${S}\torders\ttable\tstatus\ttext\tNO\tINDEXED`);
      const anywhere = text(await open.call('get_schema_info', { table_name: 'order_lines' }));
      expect(anywhere).toContain(`${S}\torder_lines\t`);
    });

    it('says what is missing, and summarises a large database by schema', async () => {
      await expect(open.call('get_schema_info', { schema_name: 'missing' })).rejects.toMatchObject({
        category: 'not_found',
        message: expect.stringContaining("No tables found in schema 'missing'"),
      });
      await expect(
        open.call('get_schema_info', { schema_name: S, table_name: 'nope' }),
      ).rejects.toMatchObject({ category: 'not_found' });
      const small = createGetSchemaInfoTool(open.catalog, { summaryThreshold: 5 });
      const summary = text(await small.call({}, ctx()));
      expect(summary).toContain('too many to list at once. Summary by schema:');
      expect(summary).toContain('schema\ttables\tviews\tcolumns\tvector_tables\tdescription');
      expect(summary).toMatch(new RegExp(`\\n${S}\\t6\\t2\\t\\d+\\t0\\tbuiltins fixture\\n`));
      expect(summary).toContain('Next steps:');
      const tables = createGetSchemaInfoTool(open.catalog, { tableListThreshold: 5 });
      const listed = text(await tables.call({ schema_name: S }, ctx()));
      expect(listed).toContain('schema\ttable\ttype\tcolumns\trow_estimate\ttable_desc');
      expect(listed).toContain(`${S}\tcustomers\ttable\t6\t20\tPeople who buy things`);
    });
  });

  describe.skipIf(skip)('count_rows', () => {
    it('counts exactly, with and without a filter', async () => {
      const all = await open.call('count_rows', { schema: S, table: 'orders' });
      expect(all.structuredContent).toEqual({ schema: S, table: 'orders', count: 200 });
      expect(text(all)).toMatch(new RegExp(`${S}\\.orders: 200 rows\\.$`));
      const some = await open.call('count_rows', {
        schema: S,
        table: 'orders',
        where: "status = 'paid' AND total > 100 AND lower(status) <> 'x'",
      });
      expect(some.structuredContent).toEqual({ schema: S, table: 'orders', count: 45 });
      expect((await open.call('count_rows', { table: `${S}.events` })).structuredContent).toEqual({
        schema: S,
        table: 'events',
        count: 3,
      });
      expect(
        (await open.call('count_rows', { schema: S, table: 'big_orders', where: 'total > 250' }))
          .structuredContent,
      ).toMatchObject({ count: 34 });
    });

    it('finds a table created after the catalog was loaded', async () => {
      await open.catalog.snapshot();
      await s.admin(`CREATE TABLE ${S}.fresh AS SELECT g AS x FROM generate_series(1, 3) g`);
      try {
        expect(
          (await open.call('count_rows', { schema: S, table: 'fresh', where: 'x > 1' }))
            .structuredContent,
        ).toEqual({ schema: S, table: 'fresh', count: 2 });
        await s.admin(`CREATE TABLE ${S}.fresher (y integer)`);
        expect((await open.read(`pg://table/${S}/fresher`)).columns[0].name).toBe('y');
      } finally {
        await s.admin(`DROP TABLE IF EXISTS ${S}.fresh, ${S}.fresher`);
        open.catalog.invalidate();
      }
    });

    it('refuses injections and reports SQL errors with the position', async () => {
      for (const where of [
        `1=1) UNION SELECT count(*) FROM ${S}.secrets WHERE (true`,
        `EXISTS (SELECT 1 FROM ${S}.secrets)`,
        'true; DROP TABLE x',
        'true --',
        'pg_sleep(10) IS NULL',
        `id = (SELECT max(id) FROM ${S}.secrets)`,
      ]) {
        await expect(
          open.call('count_rows', { schema: S, table: 'orders', where }),
        ).rejects.toMatchObject({ code: ErrorCodes.TOOL_INPUT_INVALID, category: 'input' });
      }
      await expect(
        open.call('count_rows', { schema: S, table: 'orders', where: 'status > 1' }),
      ).rejects.toMatchObject({
        category: 'database',
        details: { sqlstate: '42883' },
        message: expect.stringMatching(/operator does not exist[\s\S]*LINE: SELECT count/),
      });
      await expect(open.call('count_rows', { schema: S, table: 'nope' })).rejects.toMatchObject({
        category: 'not_found',
      });
      await expect(open.call('count_rows', { table: 'orders' })).rejects.toMatchObject({
        category: 'not_found',
        message: expect.stringContaining('on the search_path'),
      });
    });
  });

  describe.skipIf(skip)('execute_explain', () => {
    it('explains a SELECT and points at a sequential scan of a large table', async () => {
      const result = await open.call('execute_explain', {
        query: `SELECT * FROM ${S}.readings WHERE value = 5`,
      });
      const out = text(result);
      expect(out).toContain('Query plan:\n');
      expect(out).toMatch(/Seq Scan on readings/);
      const findings = (
        result.structuredContent as { findings: { kind: string; message: string }[] }
      ).findings;
      expect(findings[0]).toMatchObject({ kind: 'seq_scan' });
      expect(findings[0]!.message).toMatch(
        new RegExp(
          `Sequential scan on readings \\(~30,000 rows\\) with Filter \\(value = '5'::double precision\\)`,
        ),
      );
      expect(findings.at(-1)!.kind).toBe('summary');
      expect((result.structuredContent as { plan: { Plan: object } }).plan.Plan).toBeDefined();
    });

    it('runs ANALYZE read-only and finds misestimated rows; returns JSON on request', async () => {
      const result = await open.call('execute_explain', {
        query: `SELECT count(*) FROM ${S}.readings WHERE sensor = 5 AND sensor_copy = 5`,
        analyze: true,
        buffers: true,
        format: 'json',
      });
      const out = text(result);
      const json = out.slice(out.indexOf('['), out.indexOf('\n\nAnalysis:'));
      expect(JSON.parse(json)[0].Plan['Actual Loops']).toBe(1);
      const findings = (result.structuredContent as { findings: { kind: string }[] }).findings;
      expect(findings.map((f) => f.kind)).toContain('misestimate');
      expect(findings.at(-1)).toMatchObject({
        kind: 'summary',
        message: expect.stringMatching(/execution [\d.]+ ms/),
      });
    });

    it('refuses what is not a plain read-only SELECT', async () => {
      for (const query of [
        `DELETE FROM ${S}.orders`,
        `EXPLAIN SELECT 1`,
        `SELECT 1; SELECT 2`,
        `SELECT pg_read_file('/etc/passwd')`,
        `SELECT * FROM ${S}.orders FOR UPDATE`,
        `SHOW work_mem`,
      ]) {
        await expect(open.call('execute_explain', { query })).rejects.toMatchObject({
          category: 'input',
        });
      }
      await expect(
        open.call('execute_explain', { query: 'SELECT * FROM no_such_table' }),
      ).rejects.toMatchObject({ details: { sqlstate: '42P01' } });
      // The position counts in the caller's query (not the EXPLAIN prefix), marked like
      // query_database marks it.
      const failed = await open
        .call('execute_explain', { query: 'select * from nosuch' })
        .catch((e: unknown) => e as AppError);
      expect(failed).toMatchObject({ details: { sqlstate: '42P01', position: '15' } });
      expect((failed as AppError).message).toContain(
        'LINE: select * from nosuch\n                    ^',
      );
    });

    it('reports its findings with lower thresholds on small tables (nested loop)', async () => {
      const tool = createExecuteExplainTool({
        db: s.db,
        catalog: open.catalog,
        policy: createAccessPolicy(NO_RULES),
        statementTimeoutMs: LIMITS.statementTimeoutMs,
        deniedFunctions: DEFAULT_DENIED_FUNCTIONS,
        analysis: { largeTableRows: 10, nestedLoopIterations: 10 },
      });
      const result = await tool.call(
        {
          query: `SELECT o.id FROM ${S}.orders o WHERE EXISTS (SELECT 1 FROM ${S}.customers c WHERE c.id = o.customer_id AND c.name LIKE 'customer%')`,
        },
        ctx(),
      );
      const kinds = (result.structuredContent as { findings: { kind: string }[] }).findings.map(
        (f) => f.kind,
      );
      expect(kinds).toContain('seq_scan');
    });
  });

  describe.skipIf(skip)('resources', () => {
    it('pg://system_info, pg://settings and the statistics', async () => {
      const info = await open.read('pg://system_info');
      expect(info).toMatchObject({
        database: expect.any(String),
        user: expect.any(String),
        encoding: 'UTF8',
        allowWrites: false,
      });
      expect(info.versionNumber).toBeGreaterThanOrEqual(150000);
      expect(info.uptimeSeconds).toBeGreaterThanOrEqual(0);
      expect(Array.isArray(info.extensions)).toBe(true);
      expect(info.extensions.map((e: { name: string }) => e.name)).toContain('plpgsql');

      const settings = (await open.read('pg://settings')).settings as {
        name: string;
        setting: string;
      }[];
      const names = settings.map((x) => x.name);
      expect(names).toContain('work_mem');
      expect(names).not.toContain('listen_addresses');
      expect(names.some((n) => /password|ssl_key|data_directory|hba/.test(n))).toBe(false);
      // The session's value, not the transaction-local one pgmcp sets.
      expect(settings.find((x) => x.name === 'statement_timeout')!.setting).not.toBe('10000');

      const replication = await open.read('pg://stat/replication');
      expect(replication).toMatchObject({ inRecovery: false, replicas: expect.any(Array) });
      const stats = await open.read('pg://stat/database');
      expect(stats).toMatchObject({ datname: info.database, xact_commit: expect.any(Number) });
      expect(stats.sizeBytes).toBeGreaterThan(0);
    });

    // Defined only where it applies: a skipped test fails CI, and PGlite has one session.
    const itWhen = (applies: boolean): typeof it =>
      applies ? it : ((() => undefined) as unknown as typeof it);
    // One session of our own, so the list below is not empty and the rules are seen applied.
    const PROBE_SQL = "SELECT 'pgmcp activity probe'";
    const probeName = (): string => uniqueSchemaName('pgmcp_probe');
    const probeOf = (sessions: { application_name?: string }[], name: string) =>
      sessions.filter((session) => session.application_name === name);

    itWhen(otherSessions)(
      'pg://stat/activity lists other sessions without SQL text or addresses',
      async () => {
        const name = probeName();
        const close = await s.openSession!(name, PROBE_SQL);
        try {
          const activity = await open.read('pg://stat/activity');
          expect(activity.queryTextShown).toBe(false);
          expect(probeOf(activity.sessions, name)).toEqual([
            expect.objectContaining({ state: 'idle' }),
          ]);
          for (const session of activity.sessions) {
            expect(session).not.toHaveProperty('query');
            expect(session).not.toHaveProperty('client_addr');
          }
        } finally {
          await close();
        }
      },
    );

    itWhen(otherSessions)(
      'shows query text in pg://stat/activity only when configured',
      async () => {
        const name = probeName();
        const close = await s.openSession!(name, PROBE_SQL);
        try {
          const shown = serve(s.db, createAccessPolicy(NO_RULES), true);
          const activity = await shown.read('pg://stat/activity');
          expect(activity.queryTextShown).toBe(true);
          expect(probeOf(activity.sessions, name)).toEqual([
            expect.objectContaining({ query: PROBE_SQL }),
          ]);
          for (const session of activity.sessions) expect(session).toHaveProperty('query');
          expect(activity.sessions.every((x: object) => !('client_addr' in x))).toBe(true);
        } finally {
          await close();
        }
      },
    );

    itWhen(!otherSessions)(
      'pg://stat/activity on a single-session database lists no other session',
      async () => {
        for (const showQueryText of [false, true]) {
          const served = serve(s.db, createAccessPolicy(NO_RULES), showQueryText);
          expect(await served.read('pg://stat/activity')).toEqual({
            queryTextShown: showQueryText,
            sessions: [],
          });
        }
      },
    );

    it('describes a schema and a table through the templates, with completion', async () => {
      const schema = await open.read(`pg://schema/${S}`);
      expect(schema.schema).toBe(S);
      expect(schema.tables.map((t: { name: string }) => t.name)).not.toContain('events_2024');
      expect(schema.tables.find((t: { name: string }) => t.name === 'events')).toMatchObject({
        type: 'partitioned table',
        partitions: [`${S}.events_2024`, `${S}.events_2025`],
        rowEstimate: 3,
      });
      const table = await open.read(`pg://table/${S}/orders`);
      expect(table).toMatchObject({ schema: S, name: 'orders', description: 'One purchase' });
      expect(table.sizeBytes).toBeGreaterThan(0);
      expect(table.foreignKeys[0].references).toEqual({
        schema: S,
        table: 'customers',
        columns: ['id'],
      });
      expect(table.referencedBy).toEqual([
        expect.objectContaining({ schema: S, table: 'order_lines', columns: ['order_id'] }),
      ]);
      expect(
        table.indexes.find((i: { name: string }) => i.name === 'orders_status_idx').definition,
      ).toBe(`CREATE INDEX orders_status_idx ON ${S}.orders USING btree (status)`);
      const view = await open.read(`pg://table/${S}/big_orders`);
      expect(view.viewDefinition).toContain('total > 100');

      await expect(open.read(`pg://table/${S}/nope`)).rejects.toMatchObject({
        code: ErrorCodes.RESOURCE_NOT_FOUND,
        category: 'not_found',
      });
      await expect(open.read('pg://schema/nope')).rejects.toMatchObject({
        code: ErrorCodes.RESOURCE_NOT_FOUND,
      });

      const tableTemplate = open.template('pg://table/{schema}/{table}');
      expect((await tableTemplate.complete!('schema', S.slice(0, -2), {})).values).toEqual([S]);
      expect((await tableTemplate.complete!('table', 'ord', { schema: S })).values).toEqual([
        'order_lines',
        'orders',
      ]);
      expect(
        (await open.template('pg://schema/{schema}').complete!('schema', S.toUpperCase(), {}))
          .values,
      ).toEqual([S]);
    });
  });

  describe.skipIf(skip)('prompts and read_resource', () => {
    it('explore_database carries the tables with their comments', async () => {
      // Only this file's schema: other test files create schemas in the same database.
      const mine = serve(s.db, createAccessPolicy({ ...NO_RULES, allowSchemas: [S] }));
      const result = await mine.prompt('explore_database').get({}, ctx());
      const body = (result.messages[0]!.content as { text: string }).text;
      expect(body).toContain(`Schema ${S} — builtins fixture`);
      expect(body).toContain(`- ${S}.customers (table, ~20 rows): People who buy things`);
      expect(body).toContain('get_schema_info');
      expect(body).not.toContain('events_2024');
    });

    it('write_query includes the named tables, diagnose_slow_query their indexes', async () => {
      const write = await open
        .prompt('write_query')
        .get({ task: 'total spent per customer', tables: `${S}.orders, customers, nope` }, ctx());
      const body = (write.messages[0]!.content as { text: string }).text;
      expect(body).toContain('Write a PostgreSQL query for this task: total spent per customer');
      expect(body).toContain(
        `- ${S}.orders (id bigint [PK], customer_id integer [FK ${S}.customers(id), INDEXED]`,
      );
      expect(body).toContain(`- ${S}.customers (`);
      expect(body).toContain('Not found (check the names with get_schema_info): nope.');
      expect(body).toContain('query_database');
      const diagnose = await open.prompt('diagnose_slow_query').get(
        {
          query: `SELECT * FROM ${S}.orders o JOIN ${S}.customers c ON c.id = o.customer_id WHERE o.status = 'paid'`,
        },
        ctx(),
      );
      const text2 = (diagnose.messages[0]!.content as { text: string }).text;
      expect(text2).toContain(`- ${S}.orders (table, ~200 rows`);
      expect(text2).toContain('index orders_status_idx on (status) [btree]');
      expect(text2).toContain(`- ${S}.customers (table, ~20 rows`);
      expect(text2).toContain('execute_explain');
      const completion = await open.prompt('write_query').complete!(
        'tables',
        `${S}.orders, ${S}.cus`,
        {},
      );
      expect(completion.values).toEqual([
        `${S}.orders, ${S}.customer_totals`,
        `${S}.orders, ${S}.customers`,
      ]);
    });

    it('read_resource lists and reads through the registry', async () => {
      const listed = await open.call('read_resource', { list: true });
      expect(text(listed)).toContain('pg://system_info\tsystem_info\t');
      expect(text(listed)).toContain('pg://table/{schema}/{table}\ttable\t');
      const read = await open.call('read_resource', { uri: `pg://table/${S}/customers` });
      expect(JSON.parse(text(read)).name).toBe('customers');
      await expect(open.call('read_resource', { uri: 'pg://nothing' })).rejects.toMatchObject({
        code: ErrorCodes.RESOURCE_NOT_FOUND,
      });
      await expect(open.call('read_resource', {})).rejects.toMatchObject({ category: 'input' });
    });
  });

  describe.skipIf(skip)('access policy', () => {
    let hidden: ReturnType<typeof serve>;
    beforeAll(() => {
      hidden = serve(
        s.db,
        createAccessPolicy({
          ...NO_RULES,
          denyTables: [`${S}.secrets`],
          denyColumns: [`${S}.customers.ssn`],
          maskColumns: ['*.email'],
        }),
      );
    });

    it('hides denied tables and columns everywhere', async () => {
      const snap = await hidden.catalog.snapshot();
      const everything = JSON.stringify(snap.relationsOf(S));
      expect(everything).not.toContain('secrets');
      expect(everything).not.toContain('ssn');
      expect(snap.relation(S, 'customers')!.columns.find((c) => c.name === 'email')!.masked).toBe(
        true,
      );
      const info = text(await hidden.call('get_schema_info', { schema_name: S }));
      expect(info).not.toMatch(/secrets|ssn/);
      expect(info).toContain('Login address [values masked]');
      await expect(
        hidden.call('get_schema_info', { schema_name: S, table_name: 'secrets' }),
      ).rejects.toMatchObject({
        category: 'not_found',
      });
      await expect(
        hidden.call('count_rows', { schema: S, table: 'secrets' }),
      ).rejects.toMatchObject({
        category: 'not_found',
      });
      await expect(
        hidden.call('count_rows', { schema: S, table: 'customers', where: "ssn = '000-00-1'" }),
      ).rejects.toMatchObject({
        category: 'input',
        message: expect.stringContaining('"ssn" is not a column'),
      });
      await expect(hidden.read(`pg://table/${S}/secrets`)).rejects.toMatchObject({
        category: 'not_found',
      });
      const table = await hidden.read(`pg://table/${S}/customers`);
      expect(JSON.stringify(table)).not.toContain('ssn');
      expect(
        (
          await hidden.template('pg://table/{schema}/{table}').complete!('table', 's', {
            schema: S,
          })
        ).values,
      ).toEqual([]);
      const explore = await hidden.prompt('explore_database').get({}, ctx());
      expect(JSON.stringify(explore)).not.toContain('secrets');
    });

    it('execute_explain refuses hidden tables and columns', async () => {
      await expect(
        hidden.call('execute_explain', { query: `SELECT * FROM ${S}.secrets` }),
      ).rejects.toMatchObject({
        details: { sqlstate: '42P01' },
        message: expect.stringContaining('does not exist'),
      });
      await expect(
        hidden.call('execute_explain', { query: `SELECT id FROM ${S}.customers WHERE ssn = 'x'` }),
      ).rejects.toMatchObject({ category: 'forbidden' });
      await expect(
        hidden.call('execute_explain', { query: `SELECT * FROM ${S}.customers` }),
      ).rejects.toMatchObject({ category: 'forbidden' });
      await expect(
        hidden.call('execute_explain', { query: `SELECT c FROM ${S}.customers c` }),
      ).rejects.toMatchObject({ category: 'forbidden' });
      const ok = await hidden.call('execute_explain', {
        query: `SELECT id, email FROM ${S}.customers WHERE name = 'x'`,
      });
      expect(text(ok)).toContain('customers');
    });
  });
});

describe('the demo dataset on the embedded database', () => {
  let open: ReturnType<typeof serve>;

  beforeAll(async () => {
    open = serve(await embeddedDb(), createAccessPolicy(NO_RULES));
  }, 120_000);

  it('knows the vector column and its HNSW index', async () => {
    const snap = await open.catalog.snapshot();
    const objects = snap.relation('demo', 'celestial_objects')!;
    expect(objects.hasVectors).toBe(true);
    expect(objects.columns.find((c) => c.name === 'spectral_signature')).toMatchObject({
      dataType: 'vector(8)',
      vector: { type: 'vector', dimensions: 8 },
      nullable: false,
    });
    expect(objects.indexes.find((i) => i.name === 'celestial_objects_signature_idx')).toMatchObject(
      {
        method: 'hnsw',
        columns: ['spectral_signature'],
      },
    );
    const vectors = text(
      await open.call('get_schema_info', { schema_name: 'demo', vector_tables_only: true }),
    );
    const rows = vectors.split('\n').filter((l) => l.startsWith('demo\t'));
    expect(new Set(rows.map((l) => l.split('\t')[1]))).toEqual(
      new Set(['celestial_objects', 'logbook_entries']),
    );
    expect(
      rows
        .find((l) => l.split('\t')[4] === 'embedding')!
        .split('\t')
        .slice(14),
    ).toEqual(['YES', '256']);
    expect(
      rows
        .find((l) => l.split('\t')[4] === 'spectral_signature')!
        .split('\t')
        .slice(14),
    ).toEqual(['YES', '8']);
  });

  it('answers the demo questions', async () => {
    expect(
      (await open.call('count_rows', { schema: 'demo', table: 'observations' })).structuredContent,
    ).toEqual({ schema: 'demo', table: 'observations', count: 7000 });
    const flagged = await open.call('count_rows', {
      schema: 'demo',
      table: 'observations',
      where: "flagged AND filter_band IN ('B', 'V')",
    });
    expect((flagged.structuredContent as { count: number }).count).toBeGreaterThan(0);
    expect(
      (
        await open.call('count_rows', {
          schema: 'demo',
          table: 'celestial_objects',
          where: "kind = 'galaxy'",
        })
      ).structuredContent,
    ).toMatchObject({ table: 'celestial_objects' });

    const plan = await open.call('execute_explain', {
      query:
        'SELECT o.id FROM demo.observations o JOIN demo.celestial_objects c ON c.id = o.object_id WHERE o.quality = 5',
      analyze: true,
    });
    expect(text(plan)).toContain('Execution Time:');
    expect(text(plan)).toMatch(/observations/);

    const info = await open.read('pg://system_info');
    expect(info.versionNumber).toBeGreaterThanOrEqual(180000);
    expect(info.extensions.map((e: { name: string }) => e.name)).toContain('vector');
    const table = await open.read('pg://table/demo/celestial_objects');
    expect(
      table.indexes.find((i: { name: string }) => i.name === 'celestial_objects_signature_idx')
        .definition,
    ).toContain('USING hnsw (spectral_signature vector_l2_ops)');
    const explore = await open.prompt('explore_database').get({}, ctx());
    expect((explore.messages[0]!.content as { text: string }).text).toContain(
      '- demo.celestial_objects (table, ~1,600 rows, has vector columns)',
    );
  });

  it('registers everything under the expected names', () => {
    const registry: Registry = open.registry;
    expect(registry.tools().map((t) => t.name)).toEqual([
      'analyze_db_health',
      'analyze_query_indexes',
      'analyze_workload_indexes',
      'count_rows',
      'execute_explain',
      'explain_query',
      'get_schema_info',
      'get_top_queries',
      'read_resource',
    ]);
    expect(registry.resources().map((r) => r.uri)).toEqual([
      'pg://settings',
      'pg://stat/activity',
      'pg://stat/database',
      'pg://stat/replication',
      'pg://system_info',
    ]);
    expect(registry.templates().map((t) => t.uriTemplate)).toEqual([
      'pg://schema/{schema}',
      'pg://table/{schema}/{table}',
    ]);
    expect(registry.prompts().map((p) => p.name)).toEqual([
      'diagnose_slow_query',
      'explore_database',
      'tune_database',
      'write_query',
    ]);
    for (const tool of registry.tools()) {
      expect(tool.inputSchema['additionalProperties']).toBe(false);
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    }
  });
});
