// The REST routes the web client uses, typed as the server answers them.
import type { UIMessage } from 'ai';
import { apiJson } from '../lib/api';

export interface UserInfo {
  authenticated: boolean;
  /** Anonymous answers: whether the server requires a sign-in (false: go straight in). */
  sign_in_required?: boolean;
  username?: string | null;
  kind?: string;
}

export interface DatabaseView {
  name: string;
  host: string;
  port: number | null;
  database: string;
  user: string;
}

export interface ProviderView {
  name: string;
  type?: string;
  defaultModel?: string | null;
  isDefault?: boolean;
}

export interface ConversationSummary {
  id: string;
  title: string;
  connection?: string | null;
  created_at?: string;
  updated_at?: string;
  preview?: string;
}

export interface ConversationDetail extends ConversationSummary {
  provider?: string | null;
  model?: string | null;
  messages: unknown[];
}

export interface ColumnInfo {
  name: string;
  type: string;
  nullable: boolean;
  comment: string | null;
  primaryKey: boolean;
  references: string | null;
}

export interface TableInfo {
  name: string;
  kind: string;
  comment: string | null;
  columns: ColumnInfo[];
}

export interface SchemaInfo {
  name: string;
  comment: string | null;
  tables: TableInfo[];
}

export interface SchemaAnswer {
  database: string;
  schemas: SchemaInfo[];
}

export const api = {
  userInfo: () => apiJson<UserInfo>('/api/user/info'),
  login: (username: string, password: string) =>
    apiJson<{ session_token: string; expires_at: string }>('/api/login', 'POST', {
      username,
      password,
    }),
  logout: () => apiJson<{ success: boolean }>('/api/logout', 'POST'),
  databases: () => apiJson<{ databases: DatabaseView[]; current: string | null }>('/api/databases'),
  selectDatabase: (name: string) =>
    apiJson<{ success: boolean; current?: string }>('/api/databases/select', 'POST', { name }),
  providers: async (): Promise<ProviderView[]> => {
    const answer = await apiJson<unknown>('/api/llm/providers');
    return normalizeProviders(answer);
  },
  models: async (provider: string): Promise<string[]> => {
    const answer = await apiJson<unknown>(
      `/api/llm/models?provider=${encodeURIComponent(provider)}`,
    );
    return normalizeModels(answer);
  },
  schema: (database: string) =>
    apiJson<SchemaAnswer>(`/api/schema?database=${encodeURIComponent(database)}`),
  conversations: () =>
    apiJson<{ conversations: ConversationSummary[] }>('/api/conversations?limit=200'),
  conversation: (id: string) =>
    apiJson<ConversationDetail>(`/api/conversations/${encodeURIComponent(id)}`),
  renameConversation: (id: string, title: string) =>
    apiJson<{ success: boolean }>(`/api/conversations/${encodeURIComponent(id)}`, 'PATCH', {
      title,
    }),
  deleteConversation: (id: string) =>
    apiJson<{ success: boolean }>(`/api/conversations/${encodeURIComponent(id)}`, 'DELETE'),
  deleteAllConversations: () =>
    apiJson<{ success: boolean; deleted?: number }>('/api/conversations?all=true', 'DELETE'),
};

// Providers and models: accept `{providers: [...]}` or a bare array, names as strings or objects,
// snake_case or camelCase, so a small difference in the server's spelling never blanks the picker.
export function normalizeProviders(answer: unknown): ProviderView[] {
  const list = Array.isArray(answer)
    ? answer
    : ((answer as { providers?: unknown[] } | null)?.providers ?? []);
  return list.flatMap((item): ProviderView[] => {
    if (typeof item === 'string') return [{ name: item }];
    if (!item || typeof item !== 'object') return [];
    const r = item as Record<string, unknown>;
    const name = typeof r['name'] === 'string' ? r['name'] : null;
    if (!name) return [];
    const model = r['defaultModel'] ?? r['default_model'] ?? r['model'];
    return [
      {
        name,
        ...(typeof r['type'] === 'string' ? { type: r['type'] } : {}),
        defaultModel: typeof model === 'string' ? model : null,
        isDefault: r['isDefault'] === true || r['is_default'] === true || r['default'] === true,
      },
    ];
  });
}

export function normalizeModels(answer: unknown): string[] {
  const list = Array.isArray(answer)
    ? answer
    : ((answer as { models?: unknown[] } | null)?.models ?? []);
  return list.flatMap((item) => {
    if (typeof item === 'string') return [item];
    if (item && typeof item === 'object') {
      const r = item as Record<string, unknown>;
      const name = r['name'] ?? r['id'];
      if (typeof name === 'string') return [name];
    }
    return [];
  });
}

/** Stored messages as UI messages: kept as they are when they have parts, else text. */
export function toUiMessages(stored: unknown[]): UIMessage[] {
  return stored.flatMap((item, index): UIMessage[] => {
    if (!item || typeof item !== 'object') return [];
    const m = item as Record<string, unknown>;
    const role = m['role'];
    if (role !== 'user' && role !== 'assistant' && role !== 'system') return [];
    const id = typeof m['id'] === 'string' ? m['id'] : `stored-${index}`;
    if (Array.isArray(m['parts'])) return [{ ...(m as object), id, role } as UIMessage];
    const content = m['content'];
    const text =
      typeof content === 'string'
        ? content
        : Array.isArray(content)
          ? content
              .map((c) =>
                c && typeof c === 'object' && typeof (c as { text?: unknown }).text === 'string'
                  ? (c as { text: string }).text
                  : '',
              )
              .join('')
          : '';
    return [{ id, role, parts: [{ type: 'text', text }] }];
  });
}
