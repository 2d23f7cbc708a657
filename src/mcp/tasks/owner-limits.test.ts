// Who owns a task (ownerKey).
import { describe, expect, it } from 'vitest';
import { ownerKey } from '../../core/tasks.js';

const oauth = (iss: string | undefined, userId: string | null, tenantId: string | null = null) => ({
  kind: 'oauth',
  userId,
  tenantId,
  claims: iss === undefined ? {} : { iss, sub: 'subject' },
});

describe('ownerKey', () => {
  it('gives no owner to an anonymous caller without a kept session, or an identity without a user', () => {
    expect(ownerKey({ kind: 'anonymous', userId: null, tenantId: null }, null)).toBeNull();
    expect(ownerKey(oauth('https://a.example', null), null)).toBeNull();
    expect(ownerKey({ kind: 'trusted-header', userId: null, tenantId: null }, 's1')).toBeNull();
    expect(ownerKey({ kind: 'anonymous', userId: null, tenantId: null }, 's1')).not.toBeNull();
  });

  it('tells apart OAuth subjects of different issuers, and tenants whatever their characters', () => {
    expect(ownerKey(oauth('https://a.example', 'u'), null)).not.toBe(
      ownerKey(oauth('https://b.example', 'u'), null),
    );
    // With ':' joining the parts these two were one key.
    const a = ownerKey({ kind: 'user', userId: 'x:user:y', tenantId: 't' }, null);
    const b = ownerKey({ kind: 'user', userId: 'y', tenantId: 't:user:x' }, null);
    expect(a).not.toBe(b);
    expect(ownerKey({ kind: 'token', userId: 'u', tokenId: 'k', tenantId: null }, null)).not.toBe(
      ownerKey({ kind: 'token', userId: 'u', tokenId: 'j', tenantId: null }, null),
    );
  });
});
