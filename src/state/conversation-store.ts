// Conversations: each signed-in caller's chat history in the state database (pgmcp.conversations,
// migration 2), with the provider, model and database it used and the tokens it has spent.
//
// Every query names the owner, and the owner is part of the key: another caller's id finds no
// row, so it is answered exactly like an id that never existed (CONVERSATION_NOT_FOUND, a 404),
// and a client-chosen id (the AI SDK's useChat makes its own) cannot collide across owners.
// Messages are kept as given (the AI SDK's UI messages, or the pgEdge agent's {role, content}) in jsonb;
// the title and a preview are derived from the first user message when saved, so a list reads
// neither the messages nor more than one index range.
import { AppError, ErrorCodes } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import {
  CONVERSATION_ID_PATTERN,
  CONVERSATION_LIMITS,
  checkId,
  checkSetting,
  checkTitle,
  derived,
  messagesJson,
  newConversationId,
  notFound,
  pageOf,
  requireOwner,
  tooMany,
  usageNumber,
  type Owner,
} from './conversation-input.js';
import type { StateDb } from './state-db.js';

export {
  CONVERSATION_ID_PATTERN,
  CONVERSATION_LIMITS,
  keepsConversations,
  newConversationId,
} from './conversation-input.js';

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
}

export interface ConversationSettings {
  /** undefined: keep what is stored (on create: none); null: clear it. */
  readonly provider?: string | null;
  readonly model?: string | null;
  /** The database (configured name) the conversation runs against. */
  readonly connection?: string | null;
}

export interface ConversationInput extends ConversationSettings {
  readonly messages?: readonly unknown[];
  /** An explicit title; without one it follows the first user message. */
  readonly title?: string;
}

export interface ConversationSummary {
  readonly id: string;
  readonly title: string;
  readonly connection: string | null;
  readonly preview: string;
  readonly messageCount: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface ConversationRecord {
  readonly id: string;
  /** The owner's user id as the principal names it (a user name, a token's name, a subject). */
  readonly username: string;
  readonly title: string;
  readonly provider: string | null;
  readonly model: string | null;
  readonly connection: string | null;
  readonly messages: unknown[];
  readonly usage: TokenUsage;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface ConversationStore {
  /** Newest first (last change), at most `limit` (capped), skipping `offset`. */
  list(
    owner: Principal,
    page?: { limit?: number; offset?: number },
  ): Promise<ConversationSummary[]>;
  create(owner: Principal, input: ConversationInput): Promise<ConversationRecord>;
  /** Throws CONVERSATION_NOT_FOUND for an unknown id and for anyone else's. */
  get(owner: Principal, id: string): Promise<ConversationRecord>;
  /** null for an unknown id (or anyone else's). */
  find(owner: Principal, id: string): Promise<ConversationRecord | null>;
  /** PUT: replaces the messages (and the settings given). */
  replace(owner: Principal, id: string, input: ConversationInput): Promise<ConversationRecord>;
  rename(owner: Principal, id: string, title: string): Promise<void>;
  remove(owner: Principal, id: string): Promise<void>;
  /** Deletes every conversation of the owner; returns how many. */
  removeAll(owner: Principal): Promise<number>;
  /**
   * For the chat loop: the conversation with that id, created with `init` when the owner has
   * none (id null: always a new one with an id of ours).
   */
  getOrCreate(
    owner: Principal,
    id: string | null,
    init: ConversationInput,
  ): Promise<{ conversation: ConversationRecord; created: boolean }>;
  /**
   * For the chat loop: stores `messages` as the whole history, updates the settings given and
   * adds `usageDelta` to the conversation's totals. Creates the conversation when it is gone
   * (deleted while the answer streamed), so the exchange is never lost.
   */
  saveMessages(
    owner: Principal,
    id: string,
    messages: readonly unknown[],
    settings: ConversationSettings,
    usageDelta?: Partial<TokenUsage>,
  ): Promise<ConversationRecord>;
}

interface Row {
  id: string;
  username: string;
  title: string;
  provider: string | null;
  model: string | null;
  connection: string | null;
  messages: unknown[];
  input_tokens: string | number;
  output_tokens: string | number;
  total_tokens: string | number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, username, title, provider, model, connection, messages,
  input_tokens, output_tokens, total_tokens, created_at, updated_at`;

function record(row: Row): ConversationRecord {
  return {
    id: row.id,
    username: row.username,
    title: row.title,
    provider: row.provider,
    model: row.model,
    connection: row.connection,
    messages: Array.isArray(row.messages) ? row.messages : [],
    usage: {
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      totalTokens: Number(row.total_tokens),
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface ConversationStoreOptions {
  /** Conversations one owner may keep (default CONVERSATION_LIMITS.maxConversations). */
  maxConversations?: number;
}

export function createConversationStore(
  db: StateDb,
  options: ConversationStoreOptions = {},
): ConversationStore {
  const maxConversations = options.maxConversations ?? CONVERSATION_LIMITS.maxConversations;
  const find = async (principal: Principal, id: string): Promise<ConversationRecord | null> => {
    const owner = requireOwner(principal);
    // An id no conversation can have is simply not found (and costs no query).
    if (typeof id !== 'string' || !CONVERSATION_ID_PATTERN.test(id)) return null;
    const { rows } = await db.query<Row>(
      `SELECT ${COLUMNS} FROM pgmcp.conversations WHERE owner = $1 AND id = $2`,
      [owner.key, id],
    );
    return rows[0] ? record(rows[0]) : null;
  };

  const insert = async (
    owner: Owner,
    id: string,
    input: ConversationInput,
  ): Promise<ConversationRecord | null> => {
    const { json, count } = messagesJson(input.messages);
    const auto = derived(input.messages ?? []);
    const title = input.title === undefined ? auto.title : checkTitle(input.title);
    // The owner's count is checked in the same statement, so parallel creates cannot overshoot
    // by more than the ones in flight.
    const { rows } = await db.query<Row>(
      `INSERT INTO pgmcp.conversations
         (owner, id, username, title, title_set, preview, provider, model, connection, messages, message_count)
       SELECT $1, $2, $3, $4, $5::boolean, $6, $7, $8, $9, $10::jsonb, $11::integer
        WHERE (SELECT count(*) FROM pgmcp.conversations WHERE owner = $1) < $12::integer
       ON CONFLICT (owner, id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        owner.key,
        id,
        owner.username,
        title,
        input.title !== undefined,
        auto.preview,
        checkSetting('provider', input.provider) ?? null,
        checkSetting('model', input.model) ?? null,
        checkSetting('connection', input.connection) ?? null,
        json,
        count,
        maxConversations,
      ],
    );
    if (rows[0]) return record(rows[0]);
    const { rows: existing } = await db.query(
      'SELECT 1 FROM pgmcp.conversations WHERE owner = $1 AND id = $2',
      [owner.key, id],
    );
    if (existing.length > 0) return null;
    throw tooMany(maxConversations);
  };

  /** UPDATE of messages and settings; null when the owner has no such conversation. */
  const update = async (
    owner: Owner,
    id: string,
    messages: readonly unknown[],
    settings: ConversationSettings,
    usage: Partial<TokenUsage>,
  ): Promise<ConversationRecord | null> => {
    const { json, count } = messagesJson(messages);
    const auto = derived(messages);
    const setting = (name: keyof ConversationSettings): [boolean, string | null] => {
      const value = checkSetting(name, settings[name]);
      return [value !== undefined, value ?? null];
    };
    const [hasProvider, provider] = setting('provider');
    const [hasModel, model] = setting('model');
    const [hasConnection, connection] = setting('connection');
    const { rows } = await db.query<Row>(
      `UPDATE pgmcp.conversations SET
         messages = $3::jsonb, message_count = $4,
         title = CASE WHEN title_set THEN title ELSE $5 END, preview = $6,
         provider = CASE WHEN $7 THEN $8 ELSE provider END,
         model = CASE WHEN $9 THEN $10 ELSE model END,
         connection = CASE WHEN $11 THEN $12 ELSE connection END,
         input_tokens = input_tokens + $13, output_tokens = output_tokens + $14,
         total_tokens = total_tokens + $15,
         updated_at = greatest(now(), updated_at + interval '1 microsecond')
       WHERE owner = $1 AND id = $2
       RETURNING ${COLUMNS}`,
      [
        owner.key,
        id,
        json,
        count,
        auto.title,
        auto.preview,
        hasProvider,
        provider,
        hasModel,
        model,
        hasConnection,
        connection,
        usageNumber(usage.inputTokens),
        usageNumber(usage.outputTokens),
        usageNumber(usage.totalTokens),
      ],
    );
    return rows[0] ? record(rows[0]) : null;
  };

  return {
    find,

    async get(principal, id) {
      const found = await find(principal, id);
      if (!found) throw notFound();
      return found;
    },

    async list(principal, page) {
      const owner = requireOwner(principal);
      const [limit, offset] = pageOf(page);
      const { rows } = await db.query<{
        id: string;
        title: string;
        connection: string | null;
        preview: string;
        message_count: number;
        created_at: Date;
        updated_at: Date;
      }>(
        `SELECT id, title, connection, preview, message_count, created_at, updated_at
           FROM pgmcp.conversations WHERE owner = $1
          ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [owner.key, limit, offset],
      );
      return rows.map((row) => ({
        id: row.id,
        title: row.title,
        connection: row.connection,
        preview: row.preview,
        messageCount: row.message_count,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
      }));
    },

    async create(principal, input) {
      const owner = requireOwner(principal);
      // 128 random bits: a clash is not going to happen, but a retry costs nothing.
      for (let attempt = 0; attempt < 3; attempt++) {
        const created = await insert(owner, newConversationId(), input);
        if (created) return created;
      }
      throw new AppError(ErrorCodes.INTERNAL, 'Could not allocate a conversation id.', {
        category: 'internal',
      });
    },

    async replace(principal, id, input) {
      const owner = requireOwner(principal);
      if (!CONVERSATION_ID_PATTERN.test(id)) throw notFound();
      const settings: ConversationSettings = {
        provider: input.provider,
        model: input.model,
        connection: input.connection,
      };
      const updated = await update(owner, id, input.messages ?? [], settings, {});
      if (!updated) throw notFound();
      if (input.title === undefined) return updated;
      await this.rename(principal, id, input.title);
      return this.get(principal, id);
    },

    async rename(principal, id, title) {
      const owner = requireOwner(principal);
      const text = checkTitle(title);
      if (!CONVERSATION_ID_PATTERN.test(id)) throw notFound();
      const { rowCount } = await db.query(
        `UPDATE pgmcp.conversations SET title = $3, title_set = true,
           updated_at = greatest(now(), updated_at + interval '1 microsecond')
         WHERE owner = $1 AND id = $2`,
        [owner.key, id, text],
      );
      if (!rowCount) throw notFound();
    },

    async remove(principal, id) {
      const owner = requireOwner(principal);
      if (!CONVERSATION_ID_PATTERN.test(id)) throw notFound();
      const { rowCount } = await db.query(
        'DELETE FROM pgmcp.conversations WHERE owner = $1 AND id = $2',
        [owner.key, id],
      );
      if (!rowCount) throw notFound();
    },

    async removeAll(principal) {
      const owner = requireOwner(principal);
      const { rowCount } = await db.query('DELETE FROM pgmcp.conversations WHERE owner = $1', [
        owner.key,
      ]);
      return rowCount ?? 0;
    },

    async getOrCreate(principal, id, init) {
      const owner = requireOwner(principal);
      if (id === null) {
        return { conversation: await this.create(principal, init), created: true };
      }
      checkId(id);
      const existing = await find(principal, id);
      if (existing) return { conversation: existing, created: false };
      const created = await insert(owner, id, init);
      if (created) return { conversation: created, created: true };
      // Created by a request racing this one.
      return { conversation: await this.get(principal, id), created: false };
    },

    async saveMessages(principal, id, messages, settings, usageDelta = {}) {
      const owner = requireOwner(principal);
      checkId(id);
      const updated = await update(owner, id, messages, settings, usageDelta);
      if (updated) return updated;
      await insert(owner, id, { ...settings, messages });
      const again = await update(owner, id, messages, {}, usageDelta);
      if (!again) throw notFound();
      return again;
    },
  };
}
