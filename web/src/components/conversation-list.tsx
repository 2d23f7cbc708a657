// The stored conversations (the pgEdge-compatible API): start a new one, open, rename, delete one or all,
// and search by title. Only shown when the server keeps conversations (authentication on).
import { useState } from 'react';
import type { ConversationSummary } from '../api/endpoints';

interface Props {
  conversations: ConversationSummary[];
  activeId: string | null;
  onNew(): void;
  onOpen(id: string): void;
  onRename(id: string, title: string): Promise<void>;
  onDelete(id: string): Promise<void>;
  onDeleteAll(): Promise<void>;
}

export function ConversationList(props: Props) {
  const { conversations, activeId } = props;
  const [query, setQuery] = useState('');
  const [editing, setEditing] = useState<{ id: string; title: string } | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);
  const needle = query.trim().toLowerCase();
  const shown = conversations.filter(
    (c) => needle === '' || c.title.toLowerCase().includes(needle),
  );

  const saveRename = async () => {
    if (!editing) return;
    const title = editing.title.trim();
    if (title !== '') await props.onRename(editing.id, title);
    setEditing(null);
  };

  return (
    <nav className="conversations" aria-label="Conversations">
      <button type="button" className="primary wide" onClick={props.onNew}>
        New conversation
      </button>
      <label className="search">
        <span className="visually-hidden">Search conversations by title</span>
        <input
          type="search"
          placeholder="Search by title"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
      </label>
      <ul>
        {shown.map((c) => (
          <li key={c.id} className={c.id === activeId ? 'active' : undefined}>
            {editing?.id === c.id ? (
              <form
                className="rename"
                onSubmit={(e) => {
                  e.preventDefault();
                  void saveRename();
                }}
              >
                <label className="visually-hidden" htmlFor={`rename-${c.id}`}>
                  New title
                </label>
                <input
                  id={`rename-${c.id}`}
                  value={editing.title}
                  autoFocus
                  onChange={(e) => setEditing({ id: c.id, title: e.target.value })}
                  onKeyDown={(e) => {
                    if (e.key === 'Escape') {
                      e.preventDefault();
                      setEditing(null);
                    }
                  }}
                />
                <button type="submit">Save</button>
              </form>
            ) : (
              <>
                <button
                  type="button"
                  className="conversation-title"
                  aria-current={c.id === activeId ? 'page' : undefined}
                  onClick={() => props.onOpen(c.id)}
                  title={c.preview ?? c.title}
                >
                  {c.title || 'Untitled'}
                </button>
                <span className="row-actions">
                  <button
                    type="button"
                    aria-label={`Rename ${c.title}`}
                    title="Rename"
                    onClick={() => setEditing({ id: c.id, title: c.title })}
                  >
                    ✎
                  </button>
                  <button
                    type="button"
                    aria-label={`Delete ${c.title}`}
                    title="Delete"
                    onClick={() => void props.onDelete(c.id)}
                  >
                    ✕
                  </button>
                </span>
              </>
            )}
          </li>
        ))}
      </ul>
      {conversations.length === 0 ? <p className="muted">No conversations yet.</p> : null}
      {conversations.length > 0 && needle !== '' && shown.length === 0 ? (
        <p className="muted">No title matches “{query}”.</p>
      ) : null}
      {conversations.length > 0 ? (
        confirmAll ? (
          <div className="confirm-all" role="group" aria-label="Delete all conversations?">
            <span>Delete all {conversations.length}?</span>
            <button
              type="button"
              className="danger"
              onClick={() => void props.onDeleteAll().finally(() => setConfirmAll(false))}
            >
              Delete all
            </button>
            <button type="button" onClick={() => setConfirmAll(false)}>
              Keep
            </button>
          </div>
        ) : (
          <button type="button" className="link" onClick={() => setConfirmAll(true)}>
            Delete all conversations
          </button>
        )
      ) : null}
    </nav>
  );
}
