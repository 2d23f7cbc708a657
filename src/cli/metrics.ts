// The Prometheus side of core/metrics.ts: one prom-client registry per process, its
// instruments, and the gauges read when Prometheus scrapes (pools, sessions, streams, the
// embedded database). Built by `serve` when metrics.enabled is on; the layers below only see
// the Metrics interface, and /metrics (http/metrics-route.ts) only `render`.
import client from 'prom-client';
import type { Metrics } from '../core/metrics.js';
import type { PoolStats } from '../db/pool-stats.js';

/** What the gauges read at scrape time; set once the parts exist. */
export interface MetricsSources {
  pools?(): { database: string; stats: PoolStats }[];
  /** Each embedded database: whether its child is up (1) or not (0). */
  embedded?(): { database: string; running: boolean }[];
  sessions?(): number;
  streams?(): number;
}

export interface PromMetrics extends Metrics {
  readonly contentType: string;
  render(): Promise<string>;
  /** Adds (or replaces) what the gauges read. */
  observe(sources: MetricsSources): void;
}

// Tool and MCP calls run from about a millisecond to the statement timeout.
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const LLM_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160];

export function createPromMetrics(): PromMetrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const sources: MetricsSources = {};
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new client.Counter<L>({ name, help, labelNames, registers: [registry] });
  const histogram = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    buckets: number[],
  ) => new client.Histogram<L>({ name, help, labelNames, buckets, registers: [registry] });
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    collect: (g: client.Gauge<L>) => void,
  ) =>
    new client.Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        collect(this);
      },
    });

  const http = counter(
    'pgmcp_http_requests_total',
    'HTTP requests answered, by route family and status.',
    ['family', 'status'],
  );
  const httpSeconds = histogram(
    'pgmcp_http_request_duration_seconds',
    'HTTP request latency by route family.',
    ['family'],
    CALL_BUCKETS,
  );
  const mcp = counter(
    'pgmcp_mcp_requests_total',
    'MCP requests answered, by method, protocol era and outcome.',
    ['method', 'era', 'outcome'],
  );
  const mcpSeconds = histogram(
    'pgmcp_mcp_request_duration_seconds',
    'MCP request latency by method.',
    ['method'],
    CALL_BUCKETS,
  );
  const tools = counter(
    'pgmcp_tool_calls_total',
    'Tool calls by tool, database and outcome (ok, tool_error, refused, timeout).',
    ['tool', 'database', 'outcome'],
  );
  const toolSeconds = histogram(
    'pgmcp_tool_call_duration_seconds',
    'Tool call latency by tool.',
    ['tool'],
    CALL_BUCKETS,
  );
  const pgErrors = counter(
    'pgmcp_postgres_errors_total',
    'PostgreSQL errors that reached a caller, by SQLSTATE class.',
    ['class'],
  );
  const limited = counter(
    'pgmcp_rate_limited_total',
    'Requests refused by the rate limit, by route family.',
    ['family'],
  );
  const authFailures = counter(
    'pgmcp_auth_failures_total',
    'Requests refused for their credentials, by reason.',
    ['reason'],
  );
  const llm = counter(
    'pgmcp_llm_requests_total',
    'Language model calls by provider, model and outcome.',
    ['provider', 'model', 'outcome'],
  );
  const llmTokens = counter(
    'pgmcp_llm_tokens_total',
    'Tokens sent to (in) and received from (out) language models.',
    ['provider', 'model', 'direction'],
  );
  const llmSeconds = histogram(
    'pgmcp_llm_request_duration_seconds',
    'Language model call latency by provider and model.',
    ['provider', 'model'],
    LLM_BUCKETS,
  );
  const embeddings = counter(
    'pgmcp_embedding_requests_total',
    'Requests to embedding providers by provider and outcome.',
    ['provider', 'outcome'],
  );
  const embeddedTexts = counter(
    'pgmcp_embedding_texts_total',
    'Texts sent to embedding providers.',
    ['provider'],
  );
  const embeddingSeconds = histogram(
    'pgmcp_embedding_request_duration_seconds',
    'Embedding request latency by provider.',
    ['provider'],
    LLM_BUCKETS,
  );

  gauge('pgmcp_pool_connections_max', "Each database pool's size.", ['database'], (g) => {
    for (const { database, stats } of sources.pools?.() ?? []) g.set({ database }, stats.max);
  });
  gauge(
    'pgmcp_pool_connections',
    'Open connections per database pool, by state (idle, in_use).',
    ['database', 'state'],
    (g) => {
      for (const { database, stats } of sources.pools?.() ?? []) {
        g.set({ database, state: 'idle' }, stats.idle);
        g.set({ database, state: 'in_use' }, stats.total - stats.idle);
      }
    },
  );
  gauge(
    'pgmcp_pool_waiting',
    'Callers waiting for a connection, per database.',
    ['database'],
    (g) => {
      for (const { database, stats } of sources.pools?.() ?? []) g.set({ database }, stats.waiting);
    },
  );
  gauge(
    'pgmcp_embedded_database_up',
    'The embedded PGlite child: 1 up, 0 down or restarting.',
    ['database'],
    (g) => {
      for (const { database, running } of sources.embedded?.() ?? [])
        g.set({ database }, running ? 1 : 0);
    },
  );
  gauge('pgmcp_sessions_active', 'Open MCP sessions (legacy era, HTTP).', [], (g) => {
    if (sources.sessions) g.set(sources.sessions());
  });
  gauge('pgmcp_sse_streams_open', 'Open MCP SSE streams (responses and GET streams).', [], (g) => {
    if (sources.streams) g.set(sources.streams());
  });

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    observe(more) {
      Object.assign(sources, more);
    },
    httpRequest({ family, status, seconds }) {
      http.inc({ family, status: String(status) });
      httpSeconds.observe({ family }, seconds);
    },
    mcpRequest({ method, era, outcome, seconds }) {
      mcp.inc({ method, era, outcome });
      mcpSeconds.observe({ method }, seconds);
    },
    toolCall({ tool, database, outcome, seconds }) {
      tools.inc({ tool, database, outcome });
      toolSeconds.observe({ tool }, seconds);
    },
    postgresError({ sqlstate }) {
      pgErrors.inc({ class: sqlstate.slice(0, 2) });
    },
    rateLimited({ family }) {
      limited.inc({ family });
    },
    authFailure({ reason }) {
      authFailures.inc({ reason });
    },
    llmRequest({ provider, model, outcome, seconds, inputTokens, outputTokens }) {
      llm.inc({ provider, model, outcome });
      llmSeconds.observe({ provider, model }, seconds);
      if (inputTokens > 0) llmTokens.inc({ provider, model, direction: 'in' }, inputTokens);
      if (outputTokens > 0) llmTokens.inc({ provider, model, direction: 'out' }, outputTokens);
    },
    embeddingRequest({ provider, outcome, texts, seconds }) {
      embeddings.inc({ provider, outcome });
      embeddingSeconds.observe({ provider }, seconds);
      if (texts > 0) embeddedTexts.inc({ provider }, texts);
    },
  };
}
