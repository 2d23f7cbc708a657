/** Who is calling. Built by auth/ (or anonymous); handed to PostgreSQL transaction-locally. */
export interface Principal {
  readonly kind: 'anonymous' | 'token' | 'user' | 'oauth' | 'trusted-header';
  readonly userId: string | null;
  readonly tenantId: string | null;
  readonly roles: readonly string[];
  readonly scopes: readonly string[];
  readonly claims: Readonly<Record<string, unknown>>;
}

export const ANONYMOUS: Principal = Object.freeze({
  kind: 'anonymous',
  userId: null,
  tenantId: null,
  roles: [],
  scopes: [],
  claims: {},
});
