// examples/rls-tenants.sql on real PostgreSQL: the annotated function, called through its tool
// spec as the NON-superuser serving role, shows each tenant (principal.tenantId → auth.tenant_id)
// only its own rows. RLS does not bind superusers or BYPASSRLS roles, so the role is checked too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS, type Principal } from '../../src/core/principal.js';
import type { ToolSpec } from '../../src/core/specs.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createFakeContext } from '../../src/testing/fake-context.js';
import { loadRoutineTools } from '../../src/tools/routines/index.js';
import {
  REPO_ROOT,
  realPostgres,
  TEST_ROLE,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';

const info = await realPostgres('test/integration/rls-tenants.test.ts (row-level security)');
const EXAMPLE = readFileSync(join(REPO_ROOT, 'examples/rls-tenants.sql'), 'utf8');

const member = (userId: string, tenantId: string | null): Principal => ({
  kind: 'token',
  userId,
  tenantId,
  roles: [],
  scopes: [],
  claims: {},
});

// Needs the non-superuser role: as a superuser the policy would not apply and the test would
// prove nothing.
describe.skipIf(!info || info.role !== TEST_ROLE)('row-level security per tenant', () => {
  const pgInfo = info as RealPostgres;
  const dbName = `pgmcp_rls_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const urlFor = (base: string): string => {
    const u = new URL(base);
    u.pathname = `/${dbName}`;
    return u.toString();
  };
  let db: Database;
  let listNotes: ToolSpec;

  beforeAll(async () => {
    await withClient(pgInfo.adminUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
    await withClient(urlFor(pgInfo.adminUrl), (c) => c.query(EXAMPLE));
    db = await createDatabase(
      {
        url: urlFor(pgInfo.url),
        poolSize: 2,
        embedded: { dataDir: '/nonexistent', demo: false },
      },
      pino({ level: 'silent' }),
    );
    const tools = await loadRoutineTools(db, {
      schemas: ['tenants'],
      allowWrites: false,
      statementTimeoutMs: 5_000,
    });
    listNotes = tools.find((t) => t.name === 'list_notes')!;
  });
  afterAll(async () => {
    await db?.close();
    await withClient(pgInfo.adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
    );
  });

  it('runs as a role that RLS binds', async () => {
    const { rows } = await db.withOwnConnection((c) =>
      c.query('SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user'),
    );
    expect(rows[0]).toEqual({ rolsuper: false, rolbypassrls: false });
  });

  it('shows each tenant only its rows', async () => {
    const call = async (principal: Principal) =>
      (await listNotes.call({}, createFakeContext({ principal }).ctx)).structuredContent;
    expect(await call(member('wile', 'acme'))).toEqual({
      items: [
        { id: 1, body: 'acme: renew the anvil contract' },
        { id: 2, body: 'acme: order more rockets' },
      ],
    });
    expect(await call(member('hank', 'globex'))).toEqual({
      items: [{ id: 3, body: 'globex: quarterly review' }],
    });
    expect(await call(member('nobody', 'initech'))).toEqual({ items: [] });
    expect(await call(member('loner', null))).toEqual({ items: [] });
  });

  it('hides the tool from anonymous callers and refuses them (@authorize)', async () => {
    expect(listNotes.allows?.(ANONYMOUS)).toBe(false);
    expect(listNotes.allows?.(member('wile', 'acme'))).toBe(true);
    await expect(
      listNotes.call({}, createFakeContext({ principal: ANONYMOUS }).ctx),
    ).rejects.toMatchObject({ category: 'auth' });
  });

  it('the table itself is filtered too, for anyone who sets the tenant', async () => {
    const seen = await db.withTransaction(
      { readOnly: true, timeoutMs: 5_000, principal: member('x', 'globex') },
      async (c) => (await c.query('SELECT tenant_id FROM tenants.notes')).rows,
    );
    expect(seen).toEqual([{ tenant_id: 'globex' }]);
  });
});
