// POST /api/chat: the agent loop in the server. The useChat body's UI messages become model
// messages; the model is called with pgmcp's own tools (chat-tools.ts) until it answers, a
// write waits for the person's approval, or a bound is reached (tool rounds, tokens per
// request); everything streams back as the AI SDK UI message stream. What can be refused is
// refused before the stream starts (thrown as AppError); what fails later is the stream's
// `error` chunk, in plain words. The exchange is saved to the conversation when there is a store.
import {
  convertToModelMessages,
  createUIMessageStream,
  isStepCount,
  modelMessageSchema,
  streamText,
  validateUIMessages,
  type ModelMessage,
  type FinishReason,
  type StopCondition,
  type ToolSet,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import type { LlmConfig } from '../config/index.js';
import { isExpectedFailure } from '../core/error-table.js';
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import type { DatabaseChoice } from '../core/specs.js';
import { aiTelemetry } from '../core/tracing.js';
import type { DatabaseDirectory } from '../tools/databases.js';
import type { Registry } from '../tools/registry.js';
import type { ToolCallSink } from '../tools/tool-call-record.js';
import { historyConflict, storedHistory } from './chat-history.js';
import type { ChatCompactor, ChatConversationStore, ChatTokenUsage } from './chat-seams.js';
import { createChatTools } from './chat-tools.js';
import { chatInvalid, providerFailure } from './errors.js';
import type { LlmProviders } from './providers.js';
import { systemPrompt } from './system-prompt.js';

export interface ChatDeps {
  providers: LlmProviders;
  llm: LlmConfig;
  registry: Registry;
  directory?: DatabaseDirectory;
  store?: ChatConversationStore;
  compact?: ChatCompactor;
  /** Signs approval requests, so an approval only ever runs the call the model proposed. */
  approvalSecret: string | Uint8Array;
  /** Each tool call the model makes, once it has ended: the exchange log and the audit. */
  onToolCall?: ToolCallSink;
  logger: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface ChatBody {
  id?: string;
  messages: unknown[];
  /** The AI SDK's: `submit-message`, or `regenerate-message` to answer again. */
  trigger?: string;
  /** With regenerate-message: the message to answer again (the AI SDK's messageId). */
  messageId?: string;
  provider?: string;
  model?: string;
  database?: string;
}

export interface ChatMetadata {
  conversationId: string | null;
  provider: string;
  model: string;
  database: string | null;
  usage?: ChatTokenUsage;
}

/** Whether this caller can have stored conversations. */
const keepsConversations = (principal: Principal): boolean =>
  principal.kind !== 'anonymous' && principal.userId !== null && principal.userId !== '';

/** Tool calls the person approved, as the client's messages record them. */
function approvedCalls(messages: UIMessage[]): Set<string> {
  const approved = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.parts) {
      const p = part as {
        toolCallId?: unknown;
        state?: unknown;
        approval?: { approved?: unknown };
      };
      if (
        typeof p.toolCallId === 'string' &&
        p.state === 'approval-responded' &&
        p.approval?.approved === true
      ) {
        approved.add(p.toolCallId);
      }
    }
  }
  return approved;
}

const estimateTokens = (messages: ModelMessage[]): number =>
  Math.ceil(JSON.stringify(messages).length / 4);

const tokensUsedAtLeast =
  (limit: number): StopCondition<ToolSet> =>
  ({ steps }) =>
    steps.reduce((sum, step) => sum + (step.usage.totalTokens ?? 0), 0) >= limit;

export async function startChat(
  deps: ChatDeps,
  principal: Principal,
  body: ChatBody,
  signal: AbortSignal,
): Promise<ReadableStream<UIMessageChunk>> {
  const { llm, providers } = deps;
  const provider = providers.get(body.provider ?? null);
  const modelId = body.model ?? provider.defaultModel;
  const model = provider.languageModel(modelId); // a missing key is refused here, before the stream
  const secrets = providers.secrets();

  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw chatInvalid('messages must be a non-empty array of UI messages.');
  }
  let messages: UIMessage[];
  try {
    messages = await validateUIMessages({ messages: body.messages });
  } catch (error) {
    throw chatInvalid(
      `messages are not AI SDK UI messages: ${error instanceof Error ? error.message.split('\n')[0] : 'invalid'}`,
    );
  }

  // The database: the body's (checked now, so a bad name is a 4xx), else the caller's selection.
  const directory = deps.directory;
  let databaseName: string | null = null;
  let database: DatabaseChoice | undefined;
  if (directory) {
    databaseName = directory.resolve(principal, body.database, null).name;
    database = {
      get selected() {
        return databaseName;
      },
      select(name) {
        directory.selectFor(principal, name);
        databaseName = name;
      },
      used() {},
    };
  }
  const writable = (name: string | undefined): boolean => {
    if (!directory) return true;
    const target = directory.get(name ?? databaseName ?? directory.defaultName);
    return target?.allowWrites ?? true;
  };

  let conversationId: string | null = body.id ?? null;
  const store = deps.store && keepsConversations(principal) ? deps.store : undefined;
  if (store) {
    const { conversation, created } = await store.getOrCreate(principal, body.id ?? null, {
      provider: provider.name,
      model: modelId,
      connection: databaseName,
    });
    conversationId = conversation.id;
    // A stored conversation's history is the store's; the request adds only what is new.
    const kept = conversation.messages ?? [];
    if (!created && kept.length > 0) {
      const history = storedHistory(conversation.id, kept, messages, {
        trigger: body.trigger,
        messageId: body.messageId,
      });
      try {
        messages = await validateUIMessages({ messages: history });
      } catch {
        throw historyConflict(
          conversation.id,
          'the stored conversation holds messages that are not AI SDK UI messages',
        );
      }
    }
  }

  const chatTools = createChatTools({
    registry: deps.registry,
    principal,
    signal,
    ...(database ? { database } : {}),
    approvedCalls: approvedCalls(messages),
    writable,
    maxSameFailures: llm.maxSameFailures,
    maxToolResultChars: llm.maxToolResultChars,
    logger: deps.logger,
    ...(deps.onToolCall ? { onToolCall: deps.onToolCall } : {}),
    conversationId: store ? conversationId : null,
  });

  let modelMessages = await convertToModelMessages(messages, {
    tools: chatTools.tools,
    ignoreIncompleteToolCalls: true,
  });
  const budget = Math.floor(provider.contextTokens * llm.compactAt);
  if (deps.compact && estimateTokens(modelMessages) > budget) {
    try {
      const compacted = await deps.compact({
        messages: modelMessages,
        maxTokens: budget,
        providerType: provider.type,
      });
      // Only a history the providers accept replaces the original.
      if (compacted.every((m) => modelMessageSchema.safeParse(m).success)) {
        modelMessages = compacted;
      } else {
        throw new Error('the compacted history holds messages that are not model messages');
      }
    } catch (error) {
      deps.logger.warn(
        { err: { message: error instanceof Error ? error.message : String(error) } },
        'chat compaction failed; sending the whole history',
      );
    }
  }

  const metadata: ChatMetadata = {
    conversationId,
    provider: provider.name,
    model: modelId,
    database: databaseName,
  };
  let usage: ChatTokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  const plain = (error: unknown): string => {
    if (isExpectedFailure(error)) return error.message;
    return providerFailure(error, provider.name, secrets).message;
  };
  const maxSteps = llm.maxToolRounds + 1;

  return createUIMessageStream<UIMessage>({
    originalMessages: messages,
    onError: plain,
    async execute({ writer }) {
      const result = streamText({
        model,
        instructions: llm.systemPrompt ?? systemPrompt(databaseName),
        messages: modelMessages,
        // A stored conversation may hold system messages (the conversation API takes the role);
        // they follow pgmcp's instructions, as they always have.
        allowSystemInMessages: true,
        tools: chatTools.tools,
        stopWhen: [isStepCount(maxSteps), tokensUsedAtLeast(llm.maxTokensPerRequest)],
        prepareStep: () => ({ activeTools: chatTools.active() }),
        maxOutputTokens: llm.maxOutputTokens,
        maxRetries: llm.maxRetries,
        abortSignal: signal,
        timeout: { stepMs: llm.timeoutMs },
        experimental_toolApprovalSecret: deps.approvalSecret,
        experimental_telemetry: aiTelemetry('pgmcp.chat'),
        // The client gets the error chunk; the log gets the same cleaned words, not the console.
        onError: ({ error }) =>
          deps.logger.warn(
            { provider: provider.name, model: modelId, error: plain(error) },
            'chat failed',
          ),
      });
      for await (const chunk of result.toUIMessageStream({
        sendFinish: false,
        onError: plain,
        messageMetadata: ({ part }) => (part.type === 'start' ? { ...metadata } : undefined),
      })) {
        writer.write(chunk);
      }
      let finishReason: FinishReason | undefined;
      try {
        const steps = await result.steps;
        const total = await result.usage; // every step's, summed
        usage = {
          inputTokens: total.inputTokens ?? 0,
          outputTokens: total.outputTokens ?? 0,
          totalTokens: total.totalTokens ?? (total.inputTokens ?? 0) + (total.outputTokens ?? 0),
        };
        const last = steps.at(-1);
        finishReason = last?.finishReason;
        const waiting = last?.content.some((part) => part.type === 'tool-approval-request');
        if (last?.finishReason === 'tool-calls' && !waiting) {
          const note = limitReached(steps.length >= maxSteps, llm);
          const id = `limit-${Date.now().toString(36)}`;
          writer.write({ type: 'text-start', id });
          writer.write({ type: 'text-delta', id, delta: note.message });
          writer.write({ type: 'text-end', id });
        }
      } catch {
        // the stream already carried the error chunk; usage stays what it was
      }
      writer.write({
        type: 'finish',
        ...(finishReason ? { finishReason } : {}),
        messageMetadata: { ...metadata, usage },
      });
    },
    async onFinish({ messages: all }) {
      if (!store || conversationId === null) return;
      try {
        await store.saveMessages(
          principal,
          conversationId,
          all,
          { provider: provider.name, model: modelId, connection: databaseName },
          usage,
        );
      } catch (error) {
        deps.logger.error(
          {
            conversationId,
            err: { message: error instanceof Error ? error.message : String(error) },
          },
          'could not save the chat exchange',
        );
      }
    },
  });
}

function limitReached(rounds: boolean, llm: LlmConfig): AppError {
  return new AppError(
    ErrorCodes.LLM_LIMIT_REACHED,
    rounds
      ? `\n\n(Stopped: this request reached its limit of ${llm.maxToolRounds} tool rounds, llm.maxToolRounds. Ask me to go on.)`
      : `\n\n(Stopped: this request reached its limit of ${llm.maxTokensPerRequest} tokens, llm.maxTokensPerRequest. Ask me to go on.)`,
    { category: 'input' },
  );
}
