// The LLM side of `pgmcp serve --http`: the providers from `llm:` and the environment, and what
// /api/llm/* and /api/chat need. The AI SDK's own warnings (an unknown model's limits …) go to
// the log at debug level instead of the console.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Metrics } from '../core/metrics.js';
import type { ModelMessage } from 'ai';
import type { ApiLlmDeps } from '../api/index.js';
import type { Authenticator } from '../auth/index.js';
import type { Config } from '../config/index.js';
import { compactMessages, type TokenCounterType } from '../llm/compaction/index.js';
import type { LlmProviderType } from '../config/index.js';
import { createLlmProviders } from '../llm/index.js';
import type { App } from './app.js';

const COUNTERS: Record<LlmProviderType, TokenCounterType> = {
  openai: 'openai',
  openaiCompatible: 'openai',
  anthropic: 'anthropic',
  google: 'generic',
  ollama: 'ollama',
};

export function llmDeps(
  config: Config,
  app: Pick<App, 'registry' | 'directory' | 'recordExchange'>,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  auth?: Pick<Authenticator, 'conversations'>,
  metrics?: Metrics,
): ApiLlmDeps {
  globalThis.AI_SDK_LOG_WARNINGS = (options) => {
    for (const warning of options.warnings) {
      logger.debug({ provider: options.provider, model: options.model, warning }, 'AI SDK warning');
    }
  };
  return {
    providers: createLlmProviders(config.llm, env, metrics),
    llm: config.llm,
    registry: app.registry,
    directory: app.directory,
    // The agent's tool calls are recorded as MCP calls are: the exchange log and the audit.
    onToolCall: app.recordExchange,
    // Every exchange of a signed-in caller is saved to its conversation, with the tokens spent.
    ...(auth ? { store: auth.conversations } : {}),
    // A history nearing the model's context is compacted before it is sent (the stored
    // conversation keeps every message).
    compact: async ({ messages, maxTokens, providerType }) =>
      compactMessages({
        messages: messages as unknown as { role: string }[],
        max_tokens: maxTokens,
        options: { token_counter_type: COUNTERS[providerType] },
      }).messages as unknown as ModelMessage[],
    // Approvals are signed so a client can only approve the call the model proposed; with a
    // state secret, every instance behind a load balancer accepts the others' approvals.
    approvalSecret: config.server.stateSecret ?? randomBytes(32),
  };
}
