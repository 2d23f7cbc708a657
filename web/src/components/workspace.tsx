// Signed in (or no sign-in needed): the header with database, provider, model and theme; the
// conversation list; the chat or the schema browser.
import type { UIMessage } from 'ai';
import { useCallback, useEffect, useState } from 'react';
import {
  api,
  toUiMessages,
  type ConversationSummary,
  type DatabaseView,
  type ProviderView,
  type UserInfo,
} from '../api/endpoints';
import { describeError } from '../lib/plain-error';
import { applyTheme, initialTheme, type Theme } from '../lib/theme';
import { Chat } from './chat';
import { ConversationList } from './conversation-list';
import { DatabasePicker, ModelPicker } from './pickers';
import { SchemaBrowser } from './schema-browser';

interface Active {
  /** Remounts the chat when another conversation is opened or a new one started. */
  key: number;
  chatId: string;
  messages: UIMessage[];
}

let nextKey = 1;
const newChatId = () => `conv_${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`;

export function Workspace({ user, onLogout }: { user: UserInfo; onLogout(): void }) {
  const [theme, setTheme] = useState<Theme>(initialTheme);
  const [view, setView] = useState<'chat' | 'schema'>('chat');
  const [menuOpen, setMenuOpen] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [databases, setDatabases] = useState<DatabaseView[]>([]);
  const [database, setDatabase] = useState<string | null>(null);
  const [providers, setProviders] = useState<ProviderView[]>([]);
  const [provider, setProvider] = useState<string | null>(null);
  const [models, setModels] = useState<string[]>([]);
  const [model, setModel] = useState<string | null>(null);
  // null: the server keeps no conversations (authentication off).
  const [conversations, setConversations] = useState<ConversationSummary[] | null>(null);
  const [activeId, setActiveId] = useState<string | null>(null);
  const [active, setActive] = useState<Active>(() => ({
    key: nextKey++,
    chatId: newChatId(),
    messages: [],
  }));

  useEffect(() => applyTheme(theme), [theme]);

  const report = (error: unknown) => setProblem(describeError(error));

  const refreshConversations = useCallback(async () => {
    if (!user.authenticated) return;
    try {
      const answer = await api.conversations();
      setConversations(answer.conversations);
    } catch {
      setConversations(null);
    }
  }, [user.authenticated]);

  useEffect(() => {
    api.databases().then((a) => {
      setDatabases(a.databases);
      setDatabase(a.current ?? a.databases[0]?.name ?? null);
    }, report);
    api.providers().then((list) => {
      setProviders(list);
      const chosen = list.find((p) => p.isDefault) ?? list[0];
      if (chosen) {
        setProvider(chosen.name);
        setModel(chosen.defaultModel ?? null);
      }
    }, report);
    void refreshConversations();
  }, [refreshConversations]);

  useEffect(() => {
    if (!provider) return;
    let live = true;
    api.models(provider).then(
      (list) => {
        if (!live) return;
        setModels(list);
        setModel((current) => (current && list.includes(current) ? current : (list[0] ?? current)));
      },
      () => live && setModels([]),
    );
    return () => {
      live = false;
    };
  }, [provider]);

  const selectDatabase = async (name: string) => {
    try {
      await api.selectDatabase(name);
      setDatabase(name);
      setProblem(null);
    } catch (error) {
      report(error);
    }
  };

  const chooseProvider = (name: string) => {
    setProvider(name);
    setModel(providers.find((p) => p.name === name)?.defaultModel ?? null);
  };

  const startNew = () => {
    setActiveId(null);
    setActive({ key: nextKey++, chatId: newChatId(), messages: [] });
    setView('chat');
    setMenuOpen(false);
  };

  const open = async (id: string) => {
    try {
      const detail = await api.conversation(id);
      setActiveId(id);
      setActive({ key: nextKey++, chatId: id, messages: toUiMessages(detail.messages) });
      if (detail.connection && databases.some((d) => d.name === detail.connection)) {
        setDatabase(detail.connection);
      }
      setView('chat');
      setMenuOpen(false);
      setProblem(null);
    } catch (error) {
      report(error);
    }
  };

  const rename = async (id: string, title: string) => {
    try {
      await api.renameConversation(id, title);
      await refreshConversations();
    } catch (error) {
      report(error);
    }
  };

  const remove = async (id: string) => {
    try {
      await api.deleteConversation(id);
      if (id === activeId || id === active.chatId) startNew();
      await refreshConversations();
    } catch (error) {
      report(error);
    }
  };

  const removeAll = async () => {
    try {
      await api.deleteAllConversations();
      startNew();
      await refreshConversations();
    } catch (error) {
      report(error);
    }
  };

  return (
    <div className={`workspace${menuOpen ? ' menu-open' : ''}`}>
      <header className="topbar">
        {conversations !== null ? (
          <button
            type="button"
            className="menu-button"
            aria-expanded={menuOpen}
            aria-controls="sidebar"
            onClick={() => setMenuOpen((o) => !o)}
          >
            ☰<span className="visually-hidden"> Conversations</span>
          </button>
        ) : null}
        <h1 className="brand">pgmcp</h1>
        <div className="controls">
          <DatabasePicker
            databases={databases}
            current={database}
            onSelect={(n) => void selectDatabase(n)}
          />
          <ModelPicker
            providers={providers}
            provider={provider}
            models={models}
            model={model}
            onProvider={chooseProvider}
            onModel={setModel}
          />
        </div>
        <div className="tabs" role="tablist" aria-label="View">
          <button
            type="button"
            role="tab"
            aria-selected={view === 'chat'}
            onClick={() => setView('chat')}
          >
            Chat
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={view === 'schema'}
            onClick={() => setView('schema')}
          >
            Schema
          </button>
        </div>
        <button
          type="button"
          className="theme-toggle"
          aria-pressed={theme === 'dark'}
          onClick={() => setTheme((t) => (t === 'dark' ? 'light' : 'dark'))}
          title="Switch between light and dark"
        >
          <span aria-hidden="true">{theme === 'dark' ? '☀' : '☾'}</span>
          <span className="theme-word">{theme === 'dark' ? ' Light' : ' Dark'}</span>
        </button>
        {user.authenticated ? (
          <div className="user">
            <span className="muted">{user.username}</span>
            <button type="button" onClick={onLogout}>
              Sign out
            </button>
          </div>
        ) : null}
      </header>
      {problem ? (
        <div className="alert banner" role="alert">
          <p>{problem}</p>
          <button type="button" onClick={() => setProblem(null)}>
            Dismiss
          </button>
        </div>
      ) : null}
      <div className="body">
        {conversations !== null ? (
          <aside id="sidebar" className="sidebar">
            <ConversationList
              conversations={conversations}
              activeId={activeId}
              onNew={startNew}
              onOpen={(id) => void open(id)}
              onRename={rename}
              onDelete={remove}
              onDeleteAll={removeAll}
            />
          </aside>
        ) : null}
        <main className="main">
          {providers.length === 0 && view === 'chat' ? (
            <p className="notice">
              No language model is configured on the server, so questions cannot be answered yet.
              Set one up (for example <code>OPENAI_API_KEY</code>) and reload.
            </p>
          ) : null}
          <div hidden={view !== 'chat'} className="chat-host">
            <Chat
              key={active.key}
              chatId={active.chatId}
              initialMessages={active.messages}
              settings={{ provider, model, database }}
              onConversation={setActiveId}
              onFinished={() => {
                void refreshConversations();
                // The server stores the exchange as the stream ends, maybe just after this
                // client saw the end: look once more for the title and preview it sets.
                setTimeout(() => void refreshConversations(), 1500);
              }}
            />
          </div>
          {view === 'schema' ? <SchemaBrowser database={database} /> : null}
        </main>
      </div>
    </div>
  );
}
