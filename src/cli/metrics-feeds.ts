// What the metrics hear from the composed app without any layer below counting anything itself.
// MCP requests and tool calls reach them through the app's exchange records, the same
// stream the exchange log and the audit hear (the dispatcher's requests and the chat agent's
// tool calls); embedding requests through a wrapper of the providers. Label values are made bounded here:
// a method is one the dispatcher knows (an unknown one is answered -32601), a tool one the
// registry holds, a database a configured name.
import { ErrorCodes } from '../core/errors.js';
import { sqlstateClass, type Metrics, type ToolCallOutcome } from '../core/metrics.js';
import type { EmbeddingProvider, EmbeddingProviders } from '../embeddings/index.js';
import type { App } from './app.js';

const METHOD_NOT_FOUND = -32601;
const AUTH_REQUIRED_RPC = -32001;

/** Failures that are a refusal (the policy, the gate, a role), not a tool that went wrong. */
const REFUSALS: ReadonlySet<string> = new Set([
  ErrorCodes.WRITE_NOT_ALLOWED,
  ErrorCodes.AUTH_REQUIRED,
  ErrorCodes.DATABASE_DENIED,
  ErrorCodes.CREDENTIALS_REFUSED,
  ErrorCodes.POLICY_INDIRECT_ACCESS,
  ErrorCodes.MASKED_COLUMN_DECIDES,
  ErrorCodes.FUNCTION_NOT_ANALYSABLE,
  ErrorCodes.CATALOG_NOT_FILTERED,
]);

/** How a failed tool call ended, from the code its record carries (SQLSTATE or PGMCP code). */
export function toolOutcome(
  failed: boolean,
  code: string | number | null | undefined,
): ToolCallOutcome {
  if (!failed) return 'ok';
  if (code === ErrorCodes.DB_TIMEOUT || code === '57014') return 'timeout';
  if (code === AUTH_REQUIRED_RPC || (typeof code === 'string' && REFUSALS.has(code))) {
    return 'refused';
  }
  return 'tool_error';
}

export function countExchanges(
  app: Pick<App, 'onExchange' | 'registry' | 'db'>,
  metrics: Metrics,
): () => void {
  return app.onExchange((record) => {
    const seconds = record.durationMs / 1000;
    if (record.era !== undefined) {
      const known =
        record.errorCode !== METHOD_NOT_FOUND && /^[a-z]+(\/[A-Za-z_]+)*$/.test(record.method);
      metrics.mcpRequest({
        method: known ? record.method : 'other',
        era: record.era,
        outcome: record.outcome,
        seconds,
      });
    }
    if (record.method !== 'tools/call' || !record.name) return;
    const failed = record.outcome === 'error';
    metrics.toolCall({
      tool: app.registry.tool(record.name) ? record.name : 'unknown',
      database: record.database ?? app.db.name,
      outcome: toolOutcome(failed, record.errorCode),
      seconds,
    });
    const sqlClass = failed ? sqlstateClass(record.errorCode) : null;
    if (sqlClass !== null) metrics.postgresError({ sqlstate: String(record.errorCode) });
  });
}

/** The providers, each request of theirs counted by provider (a configured name) and outcome. */
export function countEmbeddings(
  providers: EmbeddingProviders,
  metrics: Metrics,
): EmbeddingProviders {
  const counted = new WeakMap<EmbeddingProvider, EmbeddingProvider>();
  const wrap = (provider: EmbeddingProvider): EmbeddingProvider => {
    let wrapped = counted.get(provider);
    if (wrapped) return wrapped;
    wrapped = Object.create(provider, {
      embed: {
        value: async (
          texts: readonly string[],
          options?: Parameters<EmbeddingProvider['embed']>[1],
        ) => {
          const started = performance.now();
          const report = (outcome: 'ok' | 'error') =>
            metrics.embeddingRequest({
              provider: provider.name,
              outcome,
              texts: texts.length,
              seconds: (performance.now() - started) / 1000,
            });
          try {
            const batch = await provider.embed(texts, options);
            report('ok');
            return batch;
          } catch (error) {
            report('error');
            throw error;
          }
        },
      },
    }) as EmbeddingProvider;
    counted.set(provider, wrapped);
    return wrapped;
  };
  return {
    defaultName: providers.defaultName,
    names: providers.names,
    get: (name, model) => wrap(providers.get(name, model)),
  };
}
