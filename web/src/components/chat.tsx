// The conversation: messages streamed by /api/chat through useChat, tool steps with their SQL,
// rows and charts, and the write confirmation. Enter sends, Shift+Enter is a new line, Esc
// stops a running answer.
import { useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai';
import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { apiFetch } from '../lib/api';
import { describeError } from '../lib/plain-error';
import { ApprovalDialog } from './approval-dialog';
import { MessageView } from './message-view';
import { isToolPart, statementOf, type ToolPartLike } from './tool-step';

export interface ChatSettings {
  provider: string | null;
  model: string | null;
  database: string | null;
}

interface Props {
  /** useChat's id: the conversation's id, or a fresh one for a new conversation. */
  chatId: string;
  initialMessages: UIMessage[];
  settings: ChatSettings;
  /** The server named (or created) the conversation this chat is stored as. */
  onConversation(id: string): void;
  /** An answer finished (the conversation list may have changed). */
  onFinished(): void;
}

interface Metadata {
  conversationId?: string;
  model?: string;
  provider?: string;
  database?: string;
}

export function Chat({ chatId, initialMessages, settings, onConversation, onFinished }: Props) {
  const settingsRef = useRef(settings);
  settingsRef.current = settings;
  const conversationRef = useRef(chatId);
  const callbacks = useRef({ onConversation, onFinished });
  callbacks.current = { onConversation, onFinished };

  const transport = useMemo(
    () =>
      new DefaultChatTransport<UIMessage>({
        api: '/api/chat',
        // apiFetch adds the bearer and turns a refusal before the stream (401, 429, bad
        // provider) into an error in plain words.
        fetch: ((input: RequestInfo | URL, init?: RequestInit) =>
          apiFetch(String(input), init)) as typeof fetch,
        prepareSendMessagesRequest: ({ messages, trigger, messageId, body }) => {
          const { provider, model, database } = settingsRef.current;
          return {
            body: {
              ...body,
              id: conversationRef.current,
              messages,
              trigger,
              messageId,
              ...(provider ? { provider } : {}),
              ...(model ? { model } : {}),
              ...(database ? { database } : {}),
            },
          };
        },
      }),
    [],
  );

  const { messages, sendMessage, status, stop, error, clearError, addToolApprovalResponse } =
    useChat({
      id: chatId,
      messages: initialMessages,
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onFinish: ({ message }) => {
        const id = (message.metadata as Metadata | undefined)?.conversationId;
        // The stored conversation (the server may have named it): mark it as the open one.
        if (id) {
          conversationRef.current = id;
          callbacks.current.onConversation(id);
        }
        callbacks.current.onFinished();
      },
    });

  const [draft, setDraft] = useState('');
  const busy = status === 'submitted' || status === 'streaming';
  const input = useRef<HTMLTextAreaElement>(null);
  const end = useRef<HTMLDivElement>(null);

  useEffect(() => {
    end.current?.scrollIntoView?.({ block: 'end' });
  }, [messages]);

  // Esc stops a running answer wherever the focus is (the dialog handles its own Esc first).
  useEffect(() => {
    if (!busy) return undefined;
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key === 'Escape' && !event.defaultPrevented) void stop();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [busy, stop]);

  const send = () => {
    const text = draft.trim();
    if (text === '' || busy) return;
    clearError();
    setDraft('');
    void sendMessage({ text });
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    }
  };

  const pending = findPendingApproval(messages);
  const answer = useCallback(
    (approved: boolean) => {
      if (!pending?.approval) return;
      void addToolApprovalResponse({
        id: pending.approval.id,
        approved,
        ...(approved ? {} : { reason: 'The user refused to run this statement.' }),
      });
    },
    [pending, addToolApprovalResponse],
  );

  return (
    <div className="chat">
      <div className="messages" aria-live="polite" aria-busy={busy}>
        {messages.length === 0 ? (
          <div className="empty">
            <h2>Ask your database</h2>
            <p>
              Ask a question in plain language, for example “How many orders were placed each
              month?”. The assistant writes the SQL, runs it read-only and shows the rows.
            </p>
          </div>
        ) : null}
        {messages.map((message) => (
          <MessageView key={message.id} message={message} />
        ))}
        {status === 'submitted' ? (
          <p className="muted thinking" role="status">
            Thinking…
          </p>
        ) : null}
        {error ? (
          <div className="alert" role="alert">
            <p>{describeError(error)}</p>
            <button type="button" onClick={clearError}>
              Dismiss
            </button>
          </div>
        ) : null}
        <div ref={end} />
      </div>
      <form
        className="composer"
        onSubmit={(event) => {
          event.preventDefault();
          send();
        }}
      >
        <label htmlFor="prompt" className="visually-hidden">
          Your question
        </label>
        <textarea
          id="prompt"
          ref={input}
          rows={2}
          value={draft}
          placeholder="Ask about your data… (Enter sends, Shift+Enter new line)"
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={onKeyDown}
        />
        {busy ? (
          <button type="button" onClick={() => void stop()} title="Stop (Esc)">
            Stop
          </button>
        ) : (
          <button type="submit" className="primary" disabled={draft.trim() === ''}>
            Send
          </button>
        )}
      </form>
      {pending ? (
        <ApprovalDialog
          statement={statementOf(pending.input) ?? JSON.stringify(pending.input, null, 2)}
          database={settings.database}
          onAnswer={answer}
        />
      ) : null}
    </div>
  );
}

function findPendingApproval(messages: UIMessage[]): ToolPartLike | null {
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'assistant') return null;
  for (const part of last.parts) {
    if (isToolPart(part) && part.state === 'approval-requested') return part;
  }
  return null;
}
