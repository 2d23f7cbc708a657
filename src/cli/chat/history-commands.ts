// /history: the signed-in person's stored conversations (the pgEdge-compatible routes), listed, loaded back
// into the terminal, renamed or deleted. A conversation is named by its number in the last
// listing or by its id.
import { generateId, type UIMessage } from 'ai';
import type { ChatContext } from './context.js';
import { truncate } from './render/width.js';

interface ConversationSummary {
  id: string;
  title?: string | null;
  connection?: string | null;
  updated_at?: string;
  preview?: string | null;
}

interface StoredMessage {
  id?: string;
  role: UIMessage['role'];
  parts?: UIMessage['parts'];
  content?: unknown;
  metadata?: unknown;
}

interface Conversation extends ConversationSummary {
  provider?: string | null;
  model?: string | null;
  messages: StoredMessage[];
}

export async function historyCommand(args: string[], context: ChatContext): Promise<void> {
  const [action, ref, ...rest] = args;
  switch (action) {
    case undefined:
    case 'list':
      return listConversations(context);
    case 'load':
      return loadConversation(resolve(ref, context), context);
    case 'rename': {
      const title = rest.join(' ').trim();
      if (title === '') throw new Error('usage: /history rename N|ID TITLE');
      const id = resolve(ref, context);
      await context.api.send('PATCH', path(id), { title });
      context.term.print(`renamed ${id} to “${title}”`);
      return;
    }
    case 'delete': {
      const id = resolve(ref, context);
      await context.api.send('DELETE', path(id));
      context.listed = context.listed.filter((listed) => listed !== id);
      context.term.print(`deleted ${id}`);
      return;
    }
    default:
      throw new Error('usage: /history [load|rename|delete N|ID [TITLE]]');
  }
}

const path = (id: string): string => `/api/conversations/${encodeURIComponent(id)}`;

function resolve(ref: string | undefined, context: ChatContext): string {
  if (!ref) throw new Error('which conversation? give its number in /history or its id');
  if (/^\d+$/.test(ref)) {
    const id = context.listed[Number(ref) - 1];
    if (!id) throw new Error(`no conversation ${ref} in the last /history listing`);
    return id;
  }
  return ref;
}

async function listConversations(context: ChatContext): Promise<void> {
  const { api, term, session } = context;
  const { style } = term;
  const answer = await api.get<{ conversations: ConversationSummary[] }>('/api/conversations');
  const conversations = answer.conversations ?? [];
  context.listed = conversations.map((c) => c.id);
  if (conversations.length === 0) {
    term.print(style.dim('(no stored conversations)'));
    return;
  }
  const width = term.width();
  term.print(
    conversations
      .map((c, i) => {
        const mark = c.id === session.conversationId ? style.green('*') : ' ';
        const when = c.updated_at
          ? style.dim(` ${c.updated_at.slice(0, 16).replace('T', ' ')}`)
          : '';
        const title = c.title || c.preview || '(untitled)';
        const line = `${mark}${String(i + 1).padStart(3)}  ${title}${when}  ${style.dim(c.id)}`;
        return truncate(line, width);
      })
      .join('\n'),
  );
  term.note('(/history load N brings one back)');
}

/** A stored message as a UIMessage: ours carry parts; the pgEdge agent's plain form has content. */
function toUiMessage(message: StoredMessage): UIMessage {
  const parts: UIMessage['parts'] = Array.isArray(message.parts)
    ? message.parts
    : [
        {
          type: 'text',
          text:
            typeof message.content === 'string'
              ? message.content
              : JSON.stringify(message.content ?? ''),
        },
      ];
  return {
    id: message.id ?? generateId(),
    role: message.role,
    parts,
    ...(message.metadata !== undefined ? { metadata: message.metadata } : {}),
  };
}

async function loadConversation(id: string, context: ChatContext): Promise<void> {
  const { api, term, session, printer } = context;
  const conversation = await api.get<Conversation>(path(id));
  const messages = (conversation.messages ?? []).map(toUiMessage);
  session.reset(conversation.id ?? id, messages);
  if (conversation.connection) session.settings.database = conversation.connection;
  printer.reset();
  term.print(term.style.dim(`── ${conversation.title || conversation.id} ──`));
  messages.forEach((message, index) => {
    if (message.role === 'user') {
      const text = message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
      term.print(`${term.style.bold('›')} ${text}`);
    } else if (message.role === 'assistant') {
      printer.update(message, index, true);
    }
  });
  term.note(`(conversation ${conversation.id ?? id} loaded; ask on to continue it)`);
}
