import { describe, expect, it } from 'vitest';
import { createAccessPolicy, NO_RULES } from './access-policy.js';

describe('access policy', () => {
  it('is inactive and permissive without rules', () => {
    const policy = createAccessPolicy(NO_RULES);
    expect(policy.active).toBe(false);
    expect(policy.tableVisible('public', 'users')).toBe(true);
  });

  it('applies schema, table and column rules with globs', () => {
    const policy = createAccessPolicy({
      ...NO_RULES,
      allowSchemas: ['public', 'sales*'],
      denyTables: ['public.secrets', 'audit_*'],
      denyColumns: ['*.ssn', 'public.users.password_hash'],
      maskColumns: ['*.email', 'users.phone'],
    });
    expect(policy.schemaVisible('public')).toBe(true);
    expect(policy.schemaVisible('sales_eu')).toBe(true);
    expect(policy.schemaVisible('hr')).toBe(false);
    expect(policy.schemaVisible('pg_catalog')).toBe(true);
    expect(policy.tableVisible('public', 'secrets')).toBe(false);
    expect(policy.tableVisible('sales_eu', 'audit_log')).toBe(false);
    expect(policy.tableVisible('public', 'users')).toBe(true);
    expect(policy.columnVisible('public', 'users', 'ssn')).toBe(false);
    expect(policy.columnVisible('sales_eu', 'people', 'ssn')).toBe(false);
    expect(policy.columnVisible('public', 'users', 'password_hash')).toBe(false);
    expect(policy.columnVisible('public', 'users', 'name')).toBe(true);
    expect(policy.columnMasked('public', 'users', 'email')).toBe(true);
    expect(policy.columnMasked('x', 'users', 'phone')).toBe(true);
    expect(policy.columnMasked('x', 'orders', 'phone')).toBe(false);
  });

  it('lets a deny-list win over an allow-list', () => {
    const policy = createAccessPolicy({
      ...NO_RULES,
      allowSchemas: ['public'],
      denySchemas: ['public'],
    });
    expect(policy.schemaVisible('public')).toBe(false);
  });
});
