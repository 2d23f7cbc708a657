// The Prometheus registry: every event becomes its series, and docs/operations.md lists each
// series pgmcp registers (so the table there stays true).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../core/package-path.js';
import { createPromMetrics } from './metrics.js';

describe('the Prometheus metrics', () => {
  it('renders each event and gauge, and the operations page lists every series', async () => {
    const metrics = createPromMetrics();
    metrics.httpRequest({ family: 'mcp', status: 200, seconds: 0.01 });
    metrics.mcpRequest({ method: 'tools/call', era: 'modern', outcome: 'ok', seconds: 0.01 });
    metrics.toolCall({ tool: 'query_database', database: 'shop', outcome: 'ok', seconds: 0.01 });
    metrics.postgresError({ sqlstate: '42P01' });
    metrics.rateLimited({ family: 'api.login' });
    metrics.authFailure({ reason: 'invalid_token' });
    metrics.llmRequest({
      ...{ provider: 'openai', model: 'gpt-x', outcome: 'ok', seconds: 1 },
      ...{ inputTokens: 5, outputTokens: 2 },
    });
    metrics.embeddingRequest({ provider: 'offline', outcome: 'ok', texts: 3, seconds: 0.1 });
    metrics.observe({
      pools: () => [{ database: 'shop', stats: { max: 10, total: 3, idle: 1, waiting: 2 } }],
      embedded: () => [{ database: 'demo', running: true }],
      sessions: () => 4,
      streams: () => 1,
    });
    const text = await metrics.render();
    expect(metrics.contentType).toMatch(/^text\/plain/);
    for (const line of [
      'pgmcp_http_requests_total{family="mcp",status="200"} 1',
      'pgmcp_mcp_requests_total{method="tools/call",era="modern",outcome="ok"} 1',
      'pgmcp_tool_calls_total{tool="query_database",database="shop",outcome="ok"} 1',
      'pgmcp_postgres_errors_total{class="42"} 1',
      'pgmcp_rate_limited_total{family="api.login"} 1',
      'pgmcp_auth_failures_total{reason="invalid_token"} 1',
      'pgmcp_llm_tokens_total{provider="openai",model="gpt-x",direction="in"} 5',
      'pgmcp_embedding_texts_total{provider="offline"} 3',
      'pgmcp_pool_connections{database="shop",state="in_use"} 2',
      'pgmcp_pool_waiting{database="shop"} 2',
      'pgmcp_embedded_database_up{database="demo"} 1',
      'pgmcp_sessions_active 4',
      'pgmcp_sse_streams_open 1',
    ]) {
      expect(text).toContain(line);
    }
    const names = new Set([...text.matchAll(/^# TYPE (pgmcp_\w+) /gm)].map((m) => m[1]!));
    expect(names.size).toBeGreaterThan(15);
    const page = readFileSync(packagePath('docs/operations.md'), 'utf8');
    expect([...names].filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
  });
});
