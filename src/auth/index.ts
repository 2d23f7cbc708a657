// Who is calling: `createAuth()` → `authenticateBearer()` over the API tokens and login sessions
// kept in the state database (src/state/), the bearer and password rules they are checked by,
// and (oauth/) the OAuth resource server and built-in authorization server. See docs/auth.md.
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
} from '../state/types.js';
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
} from '../state/secrets.js';
export { parseLifetime } from './duration.js';
