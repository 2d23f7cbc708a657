// Who is calling: API tokens, users with passwords and their sessions, lockout and the audit
// log, all kept in the `pgmcp` schema of the state database. See docs/auth.md.
export {
  createAuth,
  openAuth,
  type Authenticator,
  type AuthOptions,
  type OpenAuthOptions,
} from './authenticator.js';
export {
  isAuthFailure,
  type AuthFailure,
  type AuthFailureReason,
  type ChangeContext,
  type Invalidation,
  type LapseReason,
  type Verified,
} from './types.js';
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
export {
  API_TOKEN_PREFIX,
  SESSION_TOKEN_PREFIX,
  DEFAULT_SCRYPT,
  bearerFromHeader,
  bearerKind,
  MAX_BEARER_LENGTH,
  hashBearer,
  hashPassword,
  verifyPassword,
  type ScryptParams,
} from './secrets.js';
export { parseLifetime } from './duration.js';
export { MIN_PASSWORD_LENGTH } from './validate.js';
