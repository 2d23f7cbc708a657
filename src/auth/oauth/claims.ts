// A verified token's claims → the Principal every other part of pgmcp already understands.
// Roles come from scopes (a scope grants the role of the same name unless auth.oauth.scopeRoles
// says otherwise) and from a roles claim where one is configured; the user id, tenant and
// PostgreSQL role come from configurable claim paths.
import type { Principal } from '../../core/principal.js';

export interface ClaimMapping {
  claims: {
    userId: string;
    tenantId: string | null;
    roles: string | null;
    pgRole: string | null;
  };
  scopeRoles: Readonly<Record<string, readonly string[]>>;
}

const ROLE = /^[A-Za-z0-9_.:-]{1,64}$/;

/** The value at a dotted path (realm_access.roles); a key that itself has dots wins whole. */
export function claimAt(claims: Readonly<Record<string, unknown>>, path: string): unknown {
  if (Object.hasOwn(claims, path)) return claims[path];
  let value: unknown = claims;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function words(value: unknown): string[] {
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

function scalar(value: unknown): string | null {
  if (typeof value === 'string' && value.length > 0 && value.length <= 256) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** `scope` (RFC 9068, space-separated) or `scp` (Entra and others: a string or a list). */
export function scopesOf(claims: Readonly<Record<string, unknown>>): string[] {
  const found = words(claims.scope ?? claims.scp).filter((s) => s.length <= 128);
  return [...new Set(found)];
}

export function principalFromClaims(
  claims: Readonly<Record<string, unknown>>,
  mapping: ClaimMapping,
): Principal {
  const scopes = scopesOf(claims);
  const roles = new Set<string>();
  for (const scope of scopes) {
    const mapped = mapping.scopeRoles[scope];
    for (const role of mapped ?? [scope]) if (ROLE.test(role)) roles.add(role);
  }
  if (mapping.claims.roles) {
    for (const role of words(claimAt(claims, mapping.claims.roles))) {
      if (ROLE.test(role)) roles.add(role);
    }
  }
  const { tenantId, pgRole } = mapping.claims;
  return {
    kind: 'oauth',
    userId: scalar(claimAt(claims, mapping.claims.userId)),
    tenantId: tenantId ? scalar(claimAt(claims, tenantId)) : null,
    roles: [...roles],
    scopes,
    claims,
    pgRole: pgRole ? scalar(claimAt(claims, pgRole)) : null,
  };
}
