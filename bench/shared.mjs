// Constants and helpers shared by the bench scripts (run.mjs, loadgen.mjs, embedded-policy.mjs,
// settings-options.mjs).
import pg from 'pg';

/** Rows in pgmcp_bench.bench_kv: id 1..KV_ROWS, val 'value-<id>'. */
export const KV_ROWS = 10_000;
export const KV_SCHEMA = 'pgmcp_bench';
/** The point lookup both pgmcp's query_database and the raw pg.Pool run. */
export const KV_SQL = `select id, val from ${KV_SCHEMA}.bench_kv where id = $1`;
/** The same lookup as an annotated STABLE function (tool kv_get), and how raw pg calls it. */
export const KV_ROUTINE = 'kv_get';
export const KV_ROUTINE_SQL = `select * from ${KV_SCHEMA}.kv_get($1)`;
/** The same lookup as a registry handler (a tool in schema mcp), answering as kv_get does. */
export const KV_HANDLER = 'kv_handler';

export const LEGACY_VERSION = '2025-11-25';
export const MODERN_VERSION = '2026-07-28';
export const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': {},
};

/**
 * Opens a legacy MCP session on `url` (initialize, then notifications/initialized) and returns
 * the headers every later request of it carries, besides content-type and accept. `extra` (an
 * Authorization header) goes on every request: the session belongs to that caller.
 */
export async function openLegacySession(url, extra = {}) {
  const base = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extra,
  };
  const init = await fetch(url, {
    method: 'POST',
    headers: base,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LEGACY_VERSION,
        capabilities: {},
        clientInfo: { name: 'pgmcp-bench', version: '1' },
      },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = await init.text();
  const sessionId = init.headers.get('mcp-session-id');
  const version = init.status === 200 ? JSON.parse(body)?.result?.protocolVersion : undefined;
  if (!sessionId || version !== LEGACY_VERSION) {
    throw new Error(`initialize failed: HTTP ${init.status} ${body.slice(0, 300)}`);
  }
  const headers = { ...extra, 'mcp-session-id': sessionId, 'mcp-protocol-version': LEGACY_VERSION };
  const initialized = await fetch(url, {
    method: 'POST',
    headers: { ...base, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    signal: AbortSignal.timeout(10_000),
  });
  if (initialized.status !== 202) {
    throw new Error(`notifications/initialized answered HTTP ${initialized.status}, expected 202`);
  }
  return headers;
}

/**
 * One script per database at a time may use the fixture schema (its name is fixed: a second
 * run would drop and refill it under the first). Takes a session-level advisory lock on a
 * connection of its own and returns that connection: the lock is held until it is ended.
 * Throws, saying so, when another run holds it.
 */
export async function lockFixture(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  const { rows } = await client.query(
    `select pg_try_advisory_lock(hashtext('pgmcp bench ' || $1)) as locked`,
    [KV_SCHEMA],
  );
  if (!rows[0].locked) {
    await client.end().catch(() => undefined);
    throw new Error(
      `another bench run is using schema ${KV_SCHEMA} in this database: wait for it, or point BENCH_DATABASE_URL at another database`,
    );
  }
  return client;
}

/**
 * The point-lookup table (`KV_SCHEMA.bench_kv`, KV_ROWS rows), created when missing through the
 * connected `client`. True when this call created it: the caller drops the schema at its end.
 */
export async function ensureKvTable(client) {
  const { rows } = await client.query(
    'select count(*)::int as n from pg_tables where schemaname = $1 and tablename = $2',
    [KV_SCHEMA, 'bench_kv'],
  );
  if (rows[0].n > 0) return false;
  await client.query(`create schema if not exists ${KV_SCHEMA}`);
  await client.query(`create table ${KV_SCHEMA}.bench_kv (id int primary key, val text not null)`);
  await client.query(
    `insert into ${KV_SCHEMA}.bench_kv select g, 'value-' || g from generate_series(1, $1::int) g`,
    [KV_ROWS],
  );
  await client.query(`analyze ${KV_SCHEMA}.bench_kv`);
  return true;
}
