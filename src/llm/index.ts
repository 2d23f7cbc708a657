// The LLM layer: model providers on the Vercel AI SDK, the pgEdge-compatible proxy and the chat loop.
export { createLlmProviders, TYPE_DEFAULTS } from './providers.js';
export type { LlmProvider, LlmProviders, ProviderView } from './providers.js';
export { listModels } from './models.js';
export type { ModelView } from './models.js';
export { createProxy } from './proxy.js';
export type { Proxy, ProxyAnswer, ProxyRequest, ProxyToolDefinition } from './proxy.js';
export { startChat } from './chat-loop.js';
export type { ChatBody, ChatDeps, ChatMetadata } from './chat-loop.js';
export type {
  ChatCompactor,
  ChatConversationSettings,
  ChatConversationStore,
  ChatTokenUsage,
} from './chat-seams.js';
export type { ChatToolOutput } from './chat-tools.js';
export { providerFailure, scrubSecrets } from './errors.js';
