import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../core/principal.js';
import type { Metrics } from '../core/metrics.js';
import type { EmbeddingProvider } from '../embeddings/index.js';
import type { ExchangeRecord } from '../tools/handlers/index.js';
import { countEmbeddings, countExchanges, toolOutcome } from './metrics-feeds.js';

function recorder(): { metrics: Metrics; events: [string, unknown][] } {
  const events: [string, unknown][] = [];
  const on =
    (name: string) =>
    (event: unknown): void => {
      events.push([name, event]);
    };
  const metrics: Metrics = {
    httpRequest: on('http'),
    mcpRequest: on('mcp'),
    toolCall: on('tool'),
    postgresError: on('pg'),
    rateLimited: on('limited'),
    authFailure: on('auth'),
    llmRequest: on('llm'),
    embeddingRequest: on('embedding'),
  };
  return { metrics, events };
}

function fakeApp() {
  const listeners: ((record: ExchangeRecord) => void)[] = [];
  return {
    app: {
      onExchange(listener: (record: ExchangeRecord) => void) {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
      registry: { tool: (name: string) => (name === 'query_database' ? ({} as never) : undefined) },
      db: { name: 'shop' },
    } as unknown as Parameters<typeof countExchanges>[0],
    emit: (record: Partial<ExchangeRecord>) => {
      for (const l of listeners) {
        l({ principal: ANONYMOUS, method: 'tools/call', durationMs: 12, outcome: 'ok', ...record });
      }
    },
  };
}

describe('tool call outcomes', () => {
  it('tells refusals and timeouts from other failures by the recorded code', () => {
    expect(toolOutcome(false, null)).toBe('ok');
    expect(toolOutcome(true, 'PGMCP306')).toBe('refused');
    expect(toolOutcome(true, 'PGMCP313')).toBe('refused');
    expect(toolOutcome(true, -32001)).toBe('refused');
    expect(toolOutcome(true, 'PGMCP203')).toBe('timeout');
    expect(toolOutcome(true, '57014')).toBe('timeout');
    expect(toolOutcome(true, '42P01')).toBe('tool_error');
    expect(toolOutcome(true, 'PGMCP301')).toBe('tool_error');
  });
});

describe('exchange records as metrics', () => {
  it('keeps label values bounded: unknown methods and tools, never the caller text', () => {
    const { metrics, events } = recorder();
    const { app, emit } = fakeApp();
    countExchanges(app, metrics);
    emit({ method: 'tools/call', name: 'query_database', era: 'legacy', errorCode: null });
    emit({
      method: "SELECT 'secret'",
      era: 'modern',
      outcome: 'error',
      errorCode: -32601,
    });
    emit({ method: 'tools/call', name: 'drop table x; --', era: 'modern', outcome: 'error' });
    const text = JSON.stringify(events);
    expect(text).not.toContain('secret');
    expect(text).not.toContain('drop table');
    expect(events).toEqual([
      ['mcp', { method: 'tools/call', era: 'legacy', outcome: 'ok', seconds: 0.012 }],
      ['tool', { tool: 'query_database', database: 'shop', outcome: 'ok', seconds: 0.012 }],
      ['mcp', { method: 'other', era: 'modern', outcome: 'error', seconds: 0.012 }],
      ['mcp', { method: 'tools/call', era: 'modern', outcome: 'error', seconds: 0.012 }],
      ['tool', { tool: 'unknown', database: 'shop', outcome: 'tool_error', seconds: 0.012 }],
    ]);
  });

  it("counts a PostgreSQL error by class, and the chat agent's calls without an MCP request", () => {
    const { metrics, events } = recorder();
    const { app, emit } = fakeApp();
    countExchanges(app, metrics);
    emit({ name: 'query_database', outcome: 'error', errorCode: '22012', database: 'hr' });
    expect(events).toEqual([
      ['tool', { tool: 'query_database', database: 'hr', outcome: 'tool_error', seconds: 0.012 }],
      ['pg', { sqlstate: '22012' }],
    ]);
  });
});

describe('embedding requests as metrics', () => {
  it('counts each request by provider and outcome, the provider otherwise unchanged', async () => {
    const { metrics, events } = recorder();
    let fail = false;
    const provider: EmbeddingProvider = {
      name: 'offline',
      model: 'hash-256',
      dimensions: 256,
      batchSize: 8,
      embed: async (texts) => {
        if (fail) throw new Error('provider down');
        return { vectors: texts.map(() => [0]) } as never;
      },
    };
    const providers = countEmbeddings(
      { defaultName: 'offline', names: ['offline'], get: () => provider },
      metrics,
    );
    const counted = providers.get();
    expect(counted.dimensions).toBe(256);
    expect(providers.get()).toBe(counted);
    await counted.embed(['a', 'b']);
    fail = true;
    await expect(counted.embed(['c'])).rejects.toThrow('provider down');
    expect(events.map(([name, event]) => [name, { ...(event as object), seconds: 0 }])).toEqual([
      ['embedding', { provider: 'offline', outcome: 'ok', texts: 2, seconds: 0 }],
      ['embedding', { provider: 'offline', outcome: 'error', texts: 1, seconds: 0 }],
    ]);
  });
});
