// Constants shared by the orchestrator (run.mjs) and the load generator (loadgen.mjs).

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
