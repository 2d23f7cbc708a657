/** Who is calling. Built by auth/ (or anonymous); handed to PostgreSQL transaction-locally. */
export interface Principal {
  readonly kind: 'anonymous' | 'token' | 'user' | 'oauth' | 'trusted-header' | 'local';
  readonly userId: string | null;
  readonly tenantId: string | null;
  readonly roles: readonly string[];
  readonly scopes: readonly string[];
  readonly claims: Readonly<Record<string, unknown>>;
  /** The PostgreSQL role calls should run as (SET LOCAL ROLE); null/absent: the configured one. */
  readonly pgRole?: string | null;
  /** The only configured database this caller may use; null/absent: any it may otherwise see. */
  readonly boundDatabase?: string | null;
  /** For kind 'token': the API token's id (stable across renames; never the secret). */
  readonly tokenId?: string;
}

export const ANONYMOUS: Principal = Object.freeze({
  kind: 'anonymous',
  userId: null,
  tenantId: null,
  roles: [],
  scopes: [],
  claims: {},
});

/**
 * The one role check: whether the caller holds at least one of `roles`. An empty list is held
 * by nobody; each caller decides what "no roles configured" means before asking.
 */
export function holdsRole(principal: Pick<Principal, 'roles'>, roles: readonly string[]): boolean {
  return roles.some((role) => principal.roles.includes(role));
}
