// The slash commands of `pgmcp chat`. Each answers on the terminal; a failure is one line.
import type { UIMessage } from 'ai';
import type { ChatContext } from './context.js';
import { historyCommand } from './history-commands.js';
import { renderRecord } from './render/table.js';
import { truncate } from './render/width.js';

interface Command {
  usage: string;
  help: string;
  run(args: string[], context: ChatContext): Promise<void> | void;
}

export const LIST_TOPICS = ['databases', 'tools', 'resources', 'prompts', 'providers', 'models'];
export const SET_TOPICS = ['database', 'provider', 'model'];

const COMMANDS: Record<string, Command> = {
  help: { usage: '/help', help: 'this list', run: (_, c) => help(c) },
  list: {
    usage: `/list ${LIST_TOPICS.join('|')}`,
    help: 'what the server offers (models: of the current or a named provider)',
    run: list,
  },
  set: {
    usage: `/set ${SET_TOPICS.join('|')} NAME`,
    help: 'use another database, LLM provider or model from the next question on',
    run: set,
  },
  show: {
    usage: '/show settings',
    help: 'server, database, provider, model, conversation',
    run: show,
  },
  expand: {
    usage: '/expand N [COLUMN]',
    help: 'row N of the last result whole (or only one of its columns)',
    run: expand,
  },
  history: {
    usage: '/history [load|rename|delete N|ID [TITLE]]',
    help: 'your stored conversations (needs a signed-in server)',
    run: historyCommand,
  },
  new: { usage: '/new', help: 'start a new conversation', run: newConversation },
  save: { usage: '/save [TITLE]', help: 'store this conversation (optionally titled)', run: save },
  logout: { usage: '/logout', help: 'end the login session and leave', run: logout },
  exit: { usage: '/exit', help: 'leave (so does Ctrl-D)', run: (_, c) => c.quit() },
};

export const COMMAND_NAMES = Object.keys(COMMANDS).map((name) => `/${name}`);

/** Runs one `/command args…` line. */
export async function runCommand(line: string, context: ChatContext): Promise<void> {
  const [head, ...args] = line.trim().slice(1).split(/\s+/);
  const name = head === 'quit' ? 'exit' : (head ?? '');
  const command = COMMANDS[name];
  if (!command) {
    context.term.error(`unknown command /${name}; /help lists them`);
    return;
  }
  try {
    await command.run(args, context);
  } catch (error) {
    context.term.error((error as Error).message.split('\n')[0]!);
  }
}

function help({ term }: ChatContext): void {
  const { style } = term;
  const width = Math.max(...Object.values(COMMANDS).map((c) => c.usage.length));
  term.print(
    [
      'Ask a question in plain words, or:',
      ...Object.values(COMMANDS).map((c) => `  ${style.bold(c.usage.padEnd(width))}  ${c.help}`),
      '',
      style.dim('Ctrl-C stops an answer, Ctrl-D leaves; Tab completes commands and table names.'),
    ].join('\n'),
  );
}

interface Named {
  name?: unknown;
  id?: unknown;
  uri?: unknown;
  title?: unknown;
  description?: unknown;
}

const label = (item: unknown): string => {
  if (typeof item === 'string') return item;
  const n = item as Named;
  return String(n.name ?? n.id ?? n.uri ?? JSON.stringify(item));
};

/** An array, or the first array-valued field of an object (`{databases: […]}` and the like). */
function itemsOf(answer: unknown): unknown[] {
  if (Array.isArray(answer)) return answer;
  if (answer && typeof answer === 'object') {
    for (const value of Object.values(answer)) if (Array.isArray(value)) return value;
  }
  return [];
}

async function list(args: string[], context: ChatContext): Promise<void> {
  const { api, term, session } = context;
  const topic = args[0];
  const { style } = term;
  switch (topic) {
    case 'databases': {
      const answer = await api.get<{ databases: Named[]; current: string | null }>(
        '/api/databases',
      );
      const current = session.settings.database ?? answer.current;
      term.print(
        answer.databases
          .map((d) => `${d.name === current ? style.green('*') : ' '} ${label(d)}`)
          .join('\n') || style.dim('(none)'),
      );
      return;
    }
    case 'providers': {
      const items = itemsOf(await api.get('/api/llm/providers')) as Record<string, unknown>[];
      const current = session.settings.provider;
      term.print(
        items
          .map((p) => {
            const chosen = current
              ? p.name === current
              : p.default === true || p.isDefault === true;
            const model = p.defaultModel ?? p.default_model ?? p.model;
            return `${chosen ? style.green('*') : ' '} ${label(p)}${p.type ? style.dim(` (${String(p.type)})`) : ''}${model ? style.dim(` default model ${String(model)}`) : ''}`;
          })
          .join('\n') || style.dim('(no LLM provider is configured)'),
      );
      return;
    }
    case 'models': {
      const provider = args[1] ?? session.settings.provider;
      const query = provider ? `?provider=${encodeURIComponent(provider)}` : '';
      const items = itemsOf(await api.get(`/api/llm/models${query}`));
      const current = session.settings.model;
      term.print(
        items
          .map((m) => `${label(m) === current ? style.green('*') : ' '} ${label(m)}`)
          .join('\n') || style.dim('(none)'),
      );
      return;
    }
    case 'tools':
    case 'resources':
    case 'prompts': {
      const answer = await api.get<Record<string, unknown>>(`/api/${topic}`);
      const items = [
        ...((answer[topic] as Named[] | undefined) ?? []).map((item) =>
          topic === 'resources' ? { ...item, name: item.uri ?? item.name } : item,
        ),
        ...((answer.templates as (Named & { uriTemplate?: string })[] | undefined) ?? []).map(
          (t) => ({ ...t, name: t.uriTemplate ?? t.name }),
        ),
      ];
      const width = term.width();
      term.print(
        items
          .map((item) => {
            const description = typeof item.description === 'string' ? item.description : '';
            const line = `  ${style.bold(label(item))}${description ? `  ${style.dim(description.split('\n')[0]!)}` : ''}`;
            return truncate(line, width);
          })
          .join('\n') || style.dim('(none)'),
      );
      return;
    }
    default:
      throw new Error(`/list what? ${LIST_TOPICS.join(', ')}`);
  }
}

async function set(args: string[], { api, session, term }: ChatContext): Promise<void> {
  const [what, value] = args;
  if (!what || !SET_TOPICS.includes(what) || !value) {
    throw new Error(`usage: /set ${SET_TOPICS.join('|')} NAME`);
  }
  if (what === 'database') {
    await api.send('POST', '/api/databases/select', { name: value });
    session.settings.database = value;
  } else if (what === 'provider') {
    const names = itemsOf(await api.get('/api/llm/providers')).map(label);
    if (!names.includes(value)) {
      throw new Error(`no provider ${value} (configured: ${names.join(', ') || 'none'})`);
    }
    session.settings.provider = value;
    delete session.settings.model; // a model name belongs to its provider
  } else {
    session.settings.model = value;
  }
  term.print(`${what}: ${value}`);
}

async function show(args: string[], context: ChatContext): Promise<void> {
  if (args[0] !== 'settings') throw new Error('usage: /show settings');
  const { api, session, term, mode, historyFile } = context;
  const info = await api
    .get<{ authenticated?: boolean; username?: string | null; kind?: string }>('/api/user/info')
    .catch(() => null);
  const last = session.lastMetadata();
  const rows: [string, string][] = [
    ['server', `${api.baseUrl}${mode === 'local' ? ' (started by this chat)' : ''}`],
    ['signed in', info?.authenticated ? `${info.username ?? '?'} (${info.kind ?? '?'})` : 'no'],
    ['database', session.settings.database ?? last?.database ?? '(server default)'],
    ['provider', session.settings.provider ?? last?.provider ?? '(server default)'],
    ['model', session.settings.model ?? last?.model ?? "(the provider's default)"],
    ['conversation', session.conversationId],
    ['colour', term.style.color ? 'on' : 'off'],
    ['line history', historyFile ?? 'off'],
  ];
  if (last?.usage?.totalTokens !== undefined) {
    rows.push(['last answer', `${last.usage.totalTokens} tokens`]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  term.print(rows.map(([k, v]) => `${term.style.bold(k.padEnd(width))}  ${v}`).join('\n'));
}

function expand(args: string[], { printer, term }: ChatContext): void {
  const table = printer.lastTable();
  if (!table) throw new Error('no result to expand yet');
  const n = Number(args[0]);
  if (!Number.isInteger(n) || n < 1 || n > table.rows.length) {
    throw new Error(`usage: /expand N, with N from 1 to ${table.rows.length}`);
  }
  const column = args[1];
  if (column !== undefined) {
    const index = table.columns.findIndex((c) => c.name === column);
    if (index < 0) {
      throw new Error(
        `no column ${column} (columns: ${table.columns.map((c) => c.name).join(', ')})`,
      );
    }
    const value = table.rows[n - 1]![index];
    term.print(
      typeof value === 'object' && value !== null
        ? JSON.stringify(value, null, 2)
        : String(value ?? 'NULL'),
    );
    return;
  }
  term.print(renderRecord(table, n - 1, term.style).join('\n'));
}

function newConversation(_: string[], { session, printer, term }: ChatContext): void {
  session.reset();
  printer.reset();
  term.note('(a new conversation)');
}

async function save(args: string[], context: ChatContext): Promise<void> {
  const { api, session, term } = context;
  if (session.messages.length === 0) throw new Error('nothing to save yet');
  const body = {
    messages: session.messages as UIMessage[],
    ...(session.settings.provider ? { provider: session.settings.provider } : {}),
    ...(session.settings.model ? { model: session.settings.model } : {}),
    ...(session.settings.database ? { connection: session.settings.database } : {}),
  };
  const path = `/api/conversations/${encodeURIComponent(session.conversationId)}`;
  let id = session.conversationId;
  try {
    await api.send('PUT', path, body);
  } catch (error) {
    if ((error as { status?: number }).status !== 404) throw error;
    const created = await api.send<{ id: string }>('POST', '/api/conversations', body);
    id = created.id;
    session.reset(id, [...session.messages]);
  }
  const title = args.join(' ').trim();
  if (title !== '') {
    await api.send('PATCH', `/api/conversations/${encodeURIComponent(id)}`, { title });
  }
  term.print(`saved as ${id}${title ? ` (“${title}”)` : ''}`);
}

async function logout(_: string[], { api, term, quit }: ChatContext): Promise<void> {
  const info = await api
    .get<{ authenticated?: boolean; kind?: string }>('/api/user/info')
    .catch(() => null);
  if (info?.kind === 'user') {
    await api.send('POST', '/api/logout');
    term.print('logged out');
  } else {
    term.print('nothing to log out of (API tokens are revoked with pgmcp token revoke); leaving');
  }
  api.setToken(null);
  quit();
}
