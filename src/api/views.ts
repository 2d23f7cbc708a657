// The JSON shapes /api answers with. Built field by field from the store records, so a hash or
// a secret can never slip into a list because a record grew a column.
import type { TokenRecord, UserRecord } from '../state/index.js';

const iso = (date: Date | null): string | null => date?.toISOString() ?? null;

export interface TokenView {
  id: string;
  name: string;
  prefix: string;
  roles: readonly string[];
  bind_database: string | null;
  pg_role: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

export function tokenView(token: TokenRecord): TokenView {
  return {
    id: token.id,
    name: token.name,
    prefix: token.prefix,
    roles: token.roles,
    bind_database: token.boundDatabase,
    pg_role: token.pgRole,
    created_at: token.createdAt.toISOString(),
    expires_at: iso(token.expiresAt),
    last_used_at: iso(token.lastUsedAt),
    revoked_at: iso(token.revokedAt),
  };
}

export interface UserView {
  id: string;
  username: string;
  roles: readonly string[];
  pg_role: string | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
}

export function userView(user: UserRecord): UserView {
  return {
    id: user.id,
    username: user.username,
    roles: user.roles,
    pg_role: user.pgRole,
    enabled: !user.disabled,
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
    last_login_at: iso(user.lastLoginAt),
  };
}
