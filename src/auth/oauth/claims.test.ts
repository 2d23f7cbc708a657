import { describe, expect, it } from 'vitest';
import { claimAt, principalFromClaims, scopesOf } from './claims.js';

const mapping = {
  claims: { userId: 'sub', tenantId: 'tid', roles: 'realm_access.roles', pgRole: 'ext.pg' },
  scopeRoles: { 'mcp:read': ['analyst'] },
};

describe('claims to a principal', () => {
  it('reads dotted paths, and a key with dots whole', () => {
    expect(claimAt({ a: { b: { c: 1 } } }, 'a.b.c')).toBe(1);
    expect(claimAt({ 'https://x.example/roles': ['r'] }, 'https://x.example/roles')).toEqual(['r']);
    expect(claimAt({ a: 1 }, 'a.b')).toBeUndefined();
    expect(claimAt({ a: { constructor: 1 } }, 'a.__proto__')).toBeUndefined();
  });

  it('takes scopes from scope or scp (string or list)', () => {
    expect(scopesOf({ scope: 'a b  a' })).toEqual(['a', 'b']);
    expect(scopesOf({ scp: ['x', 'y'] })).toEqual(['x', 'y']);
    expect(scopesOf({ scp: 'Files.Read User.Read' })).toEqual(['Files.Read', 'User.Read']);
    expect(scopesOf({})).toEqual([]);
  });

  it('maps scopes to roles (mapped, else the same name) and adds the roles claim', () => {
    const p = principalFromClaims(
      {
        sub: 'u1',
        tid: 't1',
        scope: 'mcp:read openid',
        realm_access: { roles: ['ops', 'bad role'] },
        ext: { pg: 'reader' },
      },
      mapping,
    );
    expect(p).toMatchObject({ kind: 'oauth', userId: 'u1', tenantId: 't1', pgRole: 'reader' });
    expect([...p.roles].sort()).toEqual(['analyst', 'openid', 'ops']);
  });

  it('leaves out what is missing or not a usable value', () => {
    const p = principalFromClaims({ sub: { nested: true }, tid: 42 }, mapping);
    expect(p.userId).toBeNull();
    expect(p.tenantId).toBe('42');
    expect(p.pgRole).toBeNull();
    expect(p.roles).toEqual([]);
  });
});
