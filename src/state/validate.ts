// Small checks and helpers the stores share.
import { AppError, ErrorCodes } from '../core/errors.js';
import { RESERVED_ROLE_WORDS } from '../db/call-role.js';

// Printable, no spaces or quotes: names appear in tables, logs and auth.user_id.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}$/;
const ROLE = /^[A-Za-z0-9_.:-]{1,64}$/;

function invalid(message: string): AppError {
  return new AppError(ErrorCodes.AUTH_INVALID_INPUT, message, { category: 'input' });
}

export function assertName(value: string, what: string): string {
  const name = value.trim();
  if (!NAME.test(name)) {
    throw invalid(
      `${what}: expected 1–64 letters, digits or _ . @ + - (starting with a letter or digit), got ${JSON.stringify(value)}`,
    );
  }
  return name;
}

/** Roles as given, split on commas, without duplicates. */
export function assertRoles(values: readonly string[]): string[] {
  const roles = [
    ...new Set(
      values
        .flatMap((value) => value.split(','))
        .map((r) => r.trim())
        .filter(Boolean),
    ),
  ];
  for (const role of roles) {
    if (!ROLE.test(role))
      throw invalid(`role: expected letters, digits or _ . : -, got ${JSON.stringify(role)}`);
  }
  return roles;
}

// A PostgreSQL role name a caller's calls may run as (SET LOCAL ROLE). Words PostgreSQL reads
// specially there ('none' resets to the login role) are refused: they would lift the ceiling.
const PG_ROLE = /^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/;
const PG_ROLE_WORDS = RESERVED_ROLE_WORDS;

/** A --pg-role / pg_role value: null stays null; anything else must be a plain role name. */
export function assertPgRole(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const role = value.trim();
  if (!PG_ROLE.test(role) || PG_ROLE_WORDS.has(role.toLowerCase())) {
    throw invalid(
      `pg role: expected a PostgreSQL role name (letters, digits, _ $ -; not ${[...PG_ROLE_WORDS].join(', ')}), got ${JSON.stringify(value)}`,
    );
  }
  return role;
}

export const MIN_PASSWORD_LENGTH = 8;
const MAX_PASSWORD_LENGTH = 1024;

export function assertPassword(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw invalid(`password: expected at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw invalid(`password: expected at most ${MAX_PASSWORD_LENGTH} characters`);
  }
}

export interface LastUseThrottle {
  readonly intervalMs: number;
  /** Whether a last-use write for `id` is due now; records it as done when it is. */
  due(id: string, storedLastUse: Date | null, now: number): boolean;
}

/**
 * At most one last-use write per id per interval from this process; the stored value (which
 * other instances also write) skips the write as well. The map forgets ids past the interval.
 */
export function createLastUseThrottle(intervalMs: number): LastUseThrottle {
  const written = new Map<string, number>();
  return {
    intervalMs,
    due(id, storedLastUse, now) {
      if (storedLastUse && now - storedLastUse.getTime() < intervalMs) return false;
      const last = written.get(id);
      if (last !== undefined && now - last < intervalMs) return false;
      if (written.size > 10_000) {
        for (const [key, at] of written) if (now - at >= intervalMs) written.delete(key);
      }
      written.set(id, now);
      return true;
    },
  };
}
