// The DBA tools against a server of their own (pg_stat_statements preloaded, HypoPG installed),
// driven through the official SDK client over HTTP, which validates every structuredContent
// against the tool's outputSchema: a workload on a table with a missing index on a filter
// column, planted health problems, a table the access policy denies; and the embedded
// database, which has neither extension.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatServer, type ChatServer } from '../helpers/chat-server.js';
import { serverBinDir, startCluster, type Cluster } from '../helpers/pg-cluster.js';
import { reportSkipped } from '../helpers/postgres.js';

const binaries = serverBinDir();
if (!binaries) reportSkipped('dba-tools', 'no local PostgreSQL server binaries (initdb)');

interface Result {
  isError?: boolean;
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
}

async function connect(server: ChatServer): Promise<Client> {
  const client = new Client({ name: 'dba-tools', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`)));
  await client.listTools(); // the client validates structuredContent against these schemas
  return client;
}

const call = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Result> => (await client.callTool({ name, arguments: args })) as Result;
const textOf = (r: Result): string => r.content.map((c) => c.text ?? '').join('\n');

describe.skipIf(!binaries)('DBA tools on PostgreSQL with pg_stat_statements and HypoPG', () => {
  let cluster: Cluster;
  let server: ChatServer;
  let client: Client;
  const q = (sql: string): Promise<unknown[]> => cluster.query(sql, [], 'app');

  beforeAll(async () => {
    cluster = await startCluster({ settings: { shared_preload_libraries: 'pg_stat_statements' } });
    await cluster.query('CREATE DATABASE app');
    await cluster.query('CREATE DATABASE pgmcp_state');
    await q('CREATE EXTENSION pg_stat_statements');
    await q('CREATE EXTENSION hypopg');
    await q(`CREATE TABLE orders (id bigserial PRIMARY KEY, customer_id int NOT NULL, status text NOT NULL,
               created_at timestamptz NOT NULL)`);
    await q(`INSERT INTO orders (customer_id, status, created_at)
             SELECT g % 20000, (ARRAY['new','paid','sent'])[g % 3 + 1], now() - g * interval '1 minute'
             FROM generate_series(1, 300000) g`);
    await q('CREATE INDEX orders_created_at_idx ON orders (created_at)');
    await q('CREATE TABLE secret_orders (id int, tenant int)');
    await q('INSERT INTO secret_orders SELECT g, g % 100 FROM generate_series(1, 50000) g');
    // Planted health problems.
    await q('CREATE INDEX orders_created_at_twin ON orders (created_at)');
    await q('CREATE TABLE dupes (v int)');
    await q('INSERT INTO dupes VALUES (1), (1)');
    await q('CREATE UNIQUE INDEX CONCURRENTLY dupes_v_key ON dupes (v)').catch(() => undefined);
    await q('CREATE SEQUENCE ticket_seq MAXVALUE 1000');
    await q("SELECT setval('ticket_seq', 950)");
    await q('CREATE TABLE churn (id int, pad text) WITH (autovacuum_enabled = false)');
    await q("INSERT INTO churn SELECT g, repeat('x', 50) FROM generate_series(1, 20000) g");
    await q('ANALYZE');
    await q('DELETE FROM churn WHERE id > 4000; SELECT pg_stat_force_next_flush()');
    // The workload: customers looked up by id (no index), recent orders (indexed), a denied table.
    await q('SELECT pg_stat_statements_reset()');
    for (let i = 0; i < 15; i++) {
      await q(`SELECT id, status FROM orders WHERE customer_id = ${i * 7}`);
      await q(`SELECT count(*) FROM orders WHERE created_at > '2026-01-0${(i % 9) + 1}'`);
      await q(`SELECT * FROM secret_orders WHERE tenant = ${i}`);
    }
    server = await startChatServer({
      database: cluster.url('app'),
      config: {
        state: { url: cluster.url('pgmcp_state') },
        database: { allowWrites: true, access: { denyTables: ['secret_orders'] } },
      },
    });
    client = await connect(server);
  }, 180_000);

  afterAll(async () => {
    await client?.close();
    await server?.close();
    cluster?.destroy();
  });

  it('get_top_queries lists the workload with its shares, withholding the denied table', async () => {
    const result = await call(client, 'get_top_queries', { sort_by: 'total_time', limit: 10 });
    expect(result.isError).toBeFalsy();
    const s = result.structuredContent as {
      columns: { name: string; type: string }[];
      rows: unknown[][];
      withheld: number;
    };
    expect(s.columns.map((c) => c.name)).toContain('time_pct');
    const queries = s.rows.map((r) => String(r[0]));
    expect(queries.some((t) => /WHERE customer_id = \$1/.test(t))).toBe(true);
    expect(queries.join('\n')).not.toContain('secret_orders');
    expect(textOf(result)).not.toContain('secret_orders');
    expect(s.withheld).toBeGreaterThan(0);
  });

  it('analyze_workload_indexes finds the missing index and never an existing one', async () => {
    const result = await call(client, 'analyze_workload_indexes', { max_index_size_mb: 100 });
    expect(result.isError, textOf(result)).toBeFalsy();
    const s = result.structuredContent as {
      recommendations: {
        table: string;
        columns: string[];
        definition: string;
        cost_before: number;
        cost_after: number;
      }[];
      skipped: number;
    };
    const customer = s.recommendations.find((r) => r.columns[0] === 'customer_id');
    expect(customer).toMatchObject({ table: 'public.orders' });
    expect(customer!.definition).toMatch(
      /^CREATE INDEX CONCURRENTLY ON "public"\."orders" USING btree \("customer_id"/,
    );
    expect(customer!.cost_after).toBeLessThan(customer!.cost_before);
    expect(s.recommendations.some((r) => r.columns[0] === 'created_at')).toBe(false);
    expect(textOf(result)).not.toContain('secret_orders');
    expect(s.recommendations.some((r) => r.table.includes('secret'))).toBe(false);
    expect(s.skipped).toBeGreaterThan(0);
  });

  it('analyze_query_indexes: a recommendation for the filter column, none for the indexed one', async () => {
    const result = await call(client, 'analyze_query_indexes', {
      queries: [
        'SELECT id FROM orders WHERE customer_id = 42 ORDER BY created_at',
        "SELECT count(*) FROM orders WHERE created_at > now() - interval '1 hour'",
      ],
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const s = result.structuredContent as {
      recommendations: { columns: string[]; queries: string[]; size_mb: number }[];
    };
    expect(s.recommendations.length).toBeGreaterThan(0);
    expect(s.recommendations[0]!.columns[0]).toBe('customer_id');
    expect(s.recommendations[0]!.queries[0]).toContain('customer_id = 42');
    expect(s.recommendations[0]!.size_mb).toBeGreaterThan(0);
    expect(s.recommendations.every((r) => r.columns[0] !== 'created_at')).toBe(true);
    // The index needs about 7 MB: a budget of 1 MB leaves it out.
    const small = await call(client, 'analyze_query_indexes', {
      queries: ['SELECT id FROM orders WHERE customer_id = 42'],
      max_index_size_mb: 1,
    });
    expect(small.structuredContent!['recommendations']).toEqual([]);
    const denied = await call(client, 'analyze_query_indexes', {
      queries: ['SELECT * FROM secret_orders WHERE tenant = 1'],
    });
    expect(denied.isError).toBe(true);
  });

  it('explain_query compares the cost with a hypothetical index, which is gone afterwards', async () => {
    const sql = 'SELECT id FROM orders WHERE customer_id = 42';
    const result = await call(client, 'explain_query', {
      sql,
      hypothetical_indexes: [{ table: 'orders', columns: ['customer_id'], using: 'btree' }],
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    const s = result.structuredContent as {
      cost_before: number;
      cost_after: number;
      findings: unknown[];
    };
    expect(s.cost_after).toBeLessThan(s.cost_before / 10);
    expect(textOf(result)).toMatch(/btree_orders_customer_id/);
    // The pooled connection plans without it afterwards (query_database's plain EXPLAIN is
    // the one HypoPG would answer with a hypothetical index left behind).
    for (let i = 0; i < 3; i++) {
      const plain = await call(client, 'query_database', { query: `EXPLAIN ${sql}` });
      expect(textOf(plain)).toMatch(/Seq Scan on orders/);
      expect(textOf(plain)).not.toMatch(/btree_orders_customer_id/);
    }
    const again = await call(client, 'explain_query', { sql });
    expect((again.structuredContent as { cost_before: number }).cost_before).toBeGreaterThan(
      s.cost_after * 10,
    );
    const refused = await call(client, 'explain_query', {
      sql: 'SELECT * FROM secret_orders',
      hypothetical_indexes: [{ table: 'secret_orders', columns: ['tenant'] }],
    });
    expect(refused.isError).toBe(true);
  });

  it('analyze_db_health reports each planted problem with why and what to do', async () => {
    const result = await call(client, 'analyze_db_health', { health_type: 'all' });
    expect(result.isError, textOf(result)).toBeFalsy();
    const s = result.structuredContent as { columns: string[]; rows: (string | null)[][] };
    const found = (check: string, object: string): (string | null)[] | undefined =>
      s.rows.find((r) => r[0] === check && r[2] === object);
    expect(found('index', 'public.orders_created_at_twin')?.[3]).toMatch(
      /duplicates orders_created_at_idx/,
    );
    expect(found('index', 'public.dupes_v_key')?.[3]).toMatch(/invalid/);
    expect(found('sequence', 'public.ticket_seq')?.[3]).toMatch(/95%/);
    expect(found('vacuum', 'public.churn')?.[3]).toMatch(/dead tuples.*never vacuumed/);
    for (const row of s.rows) expect(row[4]).toBeTruthy();
    const only = await call(client, 'analyze_db_health', { health_type: 'sequence' });
    expect(
      (only.structuredContent as { rows: unknown[][] }).rows.every((r) => r[0] === 'sequence'),
    ).toBe(true);
    const wrong = await call(client, 'analyze_db_health', { health_type: 'disk' });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toMatch(/Unknown health_type disk/);
  });

  it('apply_index_recommendation creates the index only once confirmed, then shows the real plan', async () => {
    const args = {
      table: 'orders',
      columns: ['customer_id'],
      queries: ['SELECT id FROM orders WHERE customer_id = 42'],
    };
    const indexes = async (): Promise<number> =>
      (
        await q(
          "SELECT indexname FROM pg_indexes WHERE tablename = 'orders' AND indexdef LIKE '%(customer_id)%'",
        )
      ).length;
    const preview = await call(client, 'apply_index_recommendation', args);
    expect(preview.isError, textOf(preview)).toBeFalsy();
    const confirmation = preview.structuredContent!['confirmation'] as { nonce: string };
    expect(preview.structuredContent).toMatchObject({ applied: false });
    expect(await indexes()).toBe(0);
    const applied = await call(client, 'apply_index_recommendation', {
      ...args,
      confirm: confirmation.nonce,
    });
    expect(applied.isError, textOf(applied)).toBeFalsy();
    expect(applied.structuredContent).toMatchObject({ applied: true });
    expect(await indexes()).toBe(1);
    const rows = applied.structuredContent!['rows'] as unknown[][];
    expect(String(rows[0]![2])).toMatch(/orders_customer_id_idx/);
    const again = await call(client, 'apply_index_recommendation', {
      ...args,
      confirm: confirmation.nonce,
    });
    expect(again.isError).toBe(true);
    // Now covered: the advice no longer proposes it.
    const advice = await call(client, 'analyze_query_indexes', { queries: args.queries });
    const recommended = advice.structuredContent!['recommendations'] as { columns: string[] }[];
    expect(recommended.some((r) => r.columns[0] === 'customer_id')).toBe(false);
    const denied = await call(client, 'apply_index_recommendation', {
      table: 'secret_orders',
      columns: ['tenant'],
    });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toMatch(/No table secret_orders/);
  });

  it('tune_database leads through top queries, index analysis and health', async () => {
    const prompt = await client.getPrompt({ name: 'tune_database', arguments: {} });
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text.indexOf('get_top_queries')).toBeLessThan(text.indexOf('analyze_query_indexes'));
    expect(text.indexOf('analyze_query_indexes')).toBeLessThan(text.indexOf('analyze_db_health'));
  });
});

describe.skipIf(!binaries)('DBA tools on the embedded database', () => {
  let server: ChatServer;
  let client: Client;
  beforeAll(async () => {
    server = await startChatServer({ config: { tools: { get_top_queries: { enabled: false } } } });
    client = await connect(server);
  }, 180_000);
  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('say clearly that pg_stat_statements and HypoPG are missing', async () => {
    const top = await call(client, 'analyze_workload_indexes');
    expect(top.isError).toBe(true);
    expect(textOf(top)).toMatch(
      /pg_stat_statements.*not installed.*shared_preload_libraries.*embedded database does not have it/s,
    );
    const hypo = await call(client, 'explain_query', {
      sql: 'SELECT * FROM demo.sites WHERE id = 1',
      hypothetical_indexes: [{ table: 'demo.sites', columns: ['id'] }],
    });
    expect(hypo.isError).toBe(true);
    expect(textOf(hypo)).toMatch(/HypoPG.*CREATE EXTENSION hypopg/s);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('analyze_db_health');
    expect(tools.map((t) => t.name)).not.toContain('get_top_queries'); // tools.<name>.enabled: false
    const apply = await call(client, 'apply_index_recommendation', {
      table: 'demo.sites',
      columns: ['id'],
    });
    expect(apply.isError).toBe(true);
    expect(textOf(apply)).toMatch(/read-only for pgmcp \(database.allowWrites is false\)/);
    const health = await call(client, 'analyze_db_health', { health_type: 'index,constraint' });
    expect(health.isError, textOf(health)).toBeFalsy();
  });

  it('a tools.<name> key naming no built-in still stops the start, enabled or not', async () => {
    await expect(
      startChatServer({ config: { tools: { get_top_querys: { enabled: false } } } }),
    ).rejects.toThrow(/tools.get_top_querys: no built-in tool by that name/);
  });
});
