// Shapes shared by the stores and the authenticator.
import type { Principal } from '../core/principal.js';
import type { AuditActor } from './audit.js';

/**
 * Why a bearer token was not accepted. The HTTP edge answers 401 for each, except
 * 'unavailable' (the issuer's keys or introspection could not be reached: 503).
 */
export type AuthFailureReason =
  | 'malformed'
  | 'unknown'
  | 'expired'
  | 'revoked'
  | 'invalid'
  | 'wrong_audience'
  | 'too_large'
  | 'unavailable';

export interface AuthFailure {
  readonly reason: AuthFailureReason;
  /** A PGMCPnnn code for the client (OAuth failures carry one). */
  readonly code?: string;
  /** Shown to the client as error_description: never a token, key or secret. */
  readonly description?: string;
}

export function isAuthFailure(value: Principal | AuthFailure): value is AuthFailure {
  return 'reason' in value;
}

/** A bearer token that checked out, with what the cache needs to know about it. */
export interface Verified {
  readonly principal: Principal;
  /** The token's or session's own expiry; a cached answer never outlives it. */
  readonly expiresAt: Date | null;
  /** For a login session: its id (sessions are invalidated by it). */
  readonly sessionId?: string;
}

/**
 * Why a bearer that once checked out no longer does: revoked (an API token), expired, its user
 * disabled, or ended (no such token or session any more: logout, password change, removal).
 */
export type LapseReason = 'revoked' | 'expired' | 'disabled' | 'ended';

/** What a cache of verified bearers must forget after a change made in this process. */
export type Invalidation =
  { readonly tokenId: string } | { readonly sessionId: string } | { readonly userId: string };

export type InvalidationListener = (what: Invalidation) => void;

/** Who asked for a change, and from where, for the audit record. */
export interface ChangeContext {
  readonly actor?: AuditActor | null;
  readonly clientAddress?: string | null;
}
