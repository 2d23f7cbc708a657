// The role a call runs as (SET LOCAL ROLE), and the words that must never be one.

/**
 * The role a call runs as: the caller's own PostgreSQL role when it has a usable one, else the
 * configured role, else 'none' (the login role). Words PostgreSQL reads specially for `role`
 * ('none' resets to the login role) never come from a caller: they would lift the ceiling.
 */
export function callRole(
  callerRole: string | null | undefined,
  configured: string | null | undefined,
): string {
  const fallback = configured ?? 'none';
  if (!callerRole || RESERVED_ROLE_WORDS.has(callerRole.toLowerCase())) return fallback;
  return callerRole;
}
/** Words PostgreSQL reads specially as a `role` value; never a caller's role. */
export const RESERVED_ROLE_WORDS = new Set([
  'none',
  'public',
  'session_user',
  'current_user',
  'current_role',
  'default',
]);
