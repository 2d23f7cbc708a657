// The state database: schema `pgmcp`, its connection (the embedded PGlite or state.url) and
// versioned migrations (sql/state/), and the stores kept in it: API tokens, users, login
// sessions, lockout, the audit log, conversations, and the built-in OAuth authorization
// server's keys and grants (oauth/). Authentication and authorization built on them live in
// auth/. See docs/auth.md.
export {
  openStateDatabase,
  type OpenStateOptions,
  type Queryable,
  type StateDb,
} from './state-db.js';
export {
  LATEST_VERSION,
  MIGRATIONS,
  migrateState,
  stateMigrations,
  stateVersion,
  type Migration,
} from './migrations.js';
export {
  createTokenStore,
  tokenPrincipal,
  type CreatedToken,
  type CreateTokenInput,
  type TokenRecord,
  type TokenStore,
} from './token-store.js';
export {
  createUserStore,
  type AddUserInput,
  type UpdateUserInput,
  type UserRecord,
  type UserStore,
} from './user-store.js';
export {
  createSessionStore,
  userPrincipal,
  type LoginResult,
  type SessionStore,
} from './session-store.js';
export {
  CONVERSATION_ID_PATTERN,
  CONVERSATION_LIMITS,
  createConversationStore,
  keepsConversations,
  newConversationId,
  type ConversationInput,
  type ConversationRecord,
  type ConversationSettings,
  type ConversationStoreOptions,
  type ConversationStore,
  type ConversationSummary,
  type TokenUsage,
} from './conversation-store.js';
export { createLockout, DEFAULT_LOCKOUT, type Lockout, type LockoutPolicy } from './lockout.js';
export {
  actorOf,
  createAuditLog,
  scrubDetails,
  type AuditActor,
  type AuditEventName,
  type AuditLog,
  type AuditOutcome,
  type AuditRecord,
  type ToolCallRecord,
} from './audit.js';
export { MIN_PASSWORD_LENGTH } from './validate.js';
