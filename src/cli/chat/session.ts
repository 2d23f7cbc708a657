// One conversation with a pgmcp's /api/chat through the AI SDK's own client: AbstractChat keeps
// the messages and applies the UI message stream, DefaultChatTransport speaks the wire. The
// terminal only supplies the state holder (which tells the printer about every change).
import {
  AbstractChat,
  DefaultChatTransport,
  generateId,
  getToolName,
  isToolUIPart,
  type ChatState,
  type ChatStatus,
  type UIMessage,
} from 'ai';
import { errorMessageOf, networkMessage, type ApiClient } from './api-client.js';

export interface ChatSettings {
  provider?: string;
  model?: string;
  database?: string;
}

/** The assistant message's metadata as the server sends it with the finish chunk. */
export interface AnswerMetadata {
  conversationId?: string;
  provider?: string;
  model?: string;
  database?: string;
  usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number };
}

export interface PendingApproval {
  id: string;
  tool: string;
  input: unknown;
}

export interface TurnResult {
  /** One line, when the turn failed (before or during the stream). */
  error?: string;
  /** Stopped by the person (Ctrl-C). */
  aborted: boolean;
}

class TerminalChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  constructor(
    public messages: UIMessage[],
    private readonly changed: () => void,
  ) {}
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
    this.changed();
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
    this.changed();
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
    this.changed();
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class TerminalChat extends AbstractChat<UIMessage> {
  constructor(init: ConstructorParameters<typeof AbstractChat<UIMessage>>[0]) {
    super(init);
  }
}

export interface ChatSession {
  readonly settings: ChatSettings;
  /** The conversation's id (the server's conv_… once it has answered with one). */
  readonly conversationId: string;
  readonly messages: readonly UIMessage[];
  readonly busy: boolean;
  ask(text: string): Promise<TurnResult>;
  /** Answer the pending write approvals, then send again so the server runs or refuses them. */
  answerApprovals(answers: readonly { id: string; approved: boolean }[]): Promise<TurnResult>;
  pendingApprovals(): PendingApproval[];
  /** Abort the running answer (the server stops the model and cancels the query). */
  stop(): Promise<void>;
  /** Start over: a new conversation, or a stored one with its messages. */
  reset(conversationId?: string, messages?: UIMessage[]): void;
  lastMetadata(): AnswerMetadata | undefined;
}

export interface SessionOptions {
  api: ApiClient;
  settings: ChatSettings;
  /** Called on every change of the messages (the printer renders from it). */
  onChange(messages: readonly UIMessage[]): void;
}

export function createChatSession(options: SessionOptions): ChatSession {
  const { api, settings } = options;
  const newId = (): string => `conv_${generateId()}`;
  let conversationId = newId();
  let aborted = false;
  let chat = create(conversationId, []);
  let running = false;

  function create(id: string, messages: UIMessage[]): TerminalChat {
    const state = new TerminalChatState(messages, () => options.onChange(state.messages));
    return new TerminalChat({
      id,
      state,
      onFinish: ({ isAbort }) => {
        if (isAbort) aborted = true;
      },
      transport: new DefaultChatTransport<UIMessage>({
        api: `${api.baseUrl}/api/chat`,
        headers: () => api.headers(),
        fetch: async (input, init) => {
          try {
            return await fetch(input, init);
          } catch (error) {
            if ((error as Error)?.name === 'AbortError') throw error;
            throw new Error(networkMessage(api.baseUrl, error));
          }
        },
        prepareSendMessagesRequest: ({ messages, trigger, messageId }) => ({
          body: {
            id: conversationId,
            messages,
            trigger,
            ...(messageId ? { messageId } : {}),
            ...(settings.provider ? { provider: settings.provider } : {}),
            ...(settings.model ? { model: settings.model } : {}),
            ...(settings.database ? { database: settings.database } : {}),
          },
        }),
      }),
    });
  }

  const lastMetadata = (): AnswerMetadata | undefined => {
    for (let i = chat.messages.length - 1; i >= 0; i--) {
      const message = chat.messages[i]!;
      if (message.role === 'assistant' && message.metadata)
        return message.metadata as AnswerMetadata;
    }
    return undefined;
  };

  const turn = async (send: () => Promise<void>): Promise<TurnResult> => {
    aborted = false;
    running = true;
    try {
      await send();
    } catch (error) {
      if (!aborted) return { aborted, error: oneLine(error) };
    } finally {
      running = false;
    }
    const adopted = lastMetadata()?.conversationId;
    if (adopted) conversationId = adopted;
    if (chat.status === 'error' && !aborted) {
      const error = chat.error;
      chat.clearError();
      return { aborted, error: oneLine(error) };
    }
    return { aborted };
  };

  return {
    settings,
    get conversationId() {
      return conversationId;
    },
    get messages() {
      return chat.messages;
    },
    get busy() {
      return running;
    },
    ask: (text) => turn(() => chat.sendMessage({ text })),
    answerApprovals: (answers) =>
      turn(async () => {
        for (const answer of answers) await chat.addToolApprovalResponse(answer);
        await chat.sendMessage();
      }),
    pendingApprovals() {
      const last = chat.lastMessage;
      if (!last || last.role !== 'assistant') return [];
      return last.parts.flatMap((part) =>
        isToolUIPart(part) && part.state === 'approval-requested'
          ? [{ id: part.approval.id, tool: getToolName(part), input: part.input }]
          : [],
      );
    },
    async stop() {
      aborted = true;
      await chat.stop();
    },
    reset(id, messages = []) {
      conversationId = id ?? newId();
      chat = create(conversationId, messages);
    },
    lastMetadata,
  };
}

/** An error from the transport or the stream as one line (a JSON {error} body unwrapped). */
export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error ?? 'unknown error');
  return errorMessageOf(message).split('\n')[0]!;
}
