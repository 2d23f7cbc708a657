// What the chat loop needs from the conversation store and the compactor, stated here so the
// loop depends on shapes, not on their layers: state/conversation-store.ts satisfies the store,
// the compaction of POST /api/chat/compact the compactor. Both are optional.
import type { ModelMessage } from 'ai';
import type { LlmProviderType } from '../config/index.js';
import type { Principal } from '../core/principal.js';

export interface ChatTokenUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface ChatConversationSettings {
  provider?: string | null;
  model?: string | null;
  connection?: string | null;
}

export interface ChatConversationStore {
  /** The owner's conversation `id`, created with `init` when it has none (null: a new id). */
  getOrCreate(
    owner: Principal,
    id: string | null,
    init: ChatConversationSettings & { messages?: readonly unknown[] },
  ): Promise<{ conversation: { id: string; messages?: readonly unknown[] }; created: boolean }>;
  /** Stores `messages` as the whole history and adds `usageDelta` to the totals. */
  saveMessages(
    owner: Principal,
    id: string,
    messages: readonly unknown[],
    settings: ChatConversationSettings,
    usageDelta?: Partial<ChatTokenUsage>,
  ): Promise<unknown>;
}

/** Shortens a history that no longer fits the model's context, keeping what matters. */
export type ChatCompactor = (request: {
  messages: ModelMessage[];
  /** The budget the compacted history should fit. */
  maxTokens: number;
  /** Whose tokenizer to count with. */
  providerType: LlmProviderType;
}) => Promise<ModelMessage[]>;
