// The auth stores against a real state database: PostgreSQL (a throwaway database per run) and
// the embedded PGlite (a temp data directory, started by openStateDatabase itself). One body of
// scenarios runs on both.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuth, hashBearer, isAuthFailure, type Authenticator } from '../../src/auth/index.js';
import {
  createAuditLog,
  LATEST_VERSION,
  MIGRATIONS,
  migrateState,
  openStateDatabase,
  stateVersion,
  type StateDb,
} from '../../src/state/index.js';
import { ErrorCodes, isAppError } from '../../src/core/errors.js';
import pg from 'pg';
import {
  realPostgres,
  throwawayDatabase,
  withClient,
  type RealPostgres,
} from '../helpers/postgres.js';

/** Until some session of the database waits for a lock (10 s at most). */
async function waitForLockWaiter(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await withClient(url, (c) =>
      c.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      ),
    );
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no session came to wait for the lock');
}

const logger = pino({ level: 'silent' });
const FAST_SCRYPT = { N: 1024, r: 8, p: 1 };
const LOCKOUT = { maxFailures: 3, maxFailuresPerAddress: 6, windowSeconds: 60, lockSeconds: 60 };

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error.code;
    throw error;
  }
  return undefined;
}

/** auditDb: where audit records go; a counting wrapper passes the real one, so a batch flushed
 * on its timer is not counted as a round trip of the call under test. */
function authOn(db: StateDb, auditDb: StateDb = db): Authenticator {
  return createAuth(db, {
    sessionTtlSeconds: 3600,
    cacheTtlMs: 5_000,
    lockout: LOCKOUT,
    scrypt: FAST_SCRYPT,
    slowDown: { baseMs: 0, maxMs: 0 },
    audit: createAuditLog({ db: auditDb, file: null, flushIntervalMs: 10 }),
  });
}

/** Counts queries, so a test can see the cache answer without a round trip. */
function counting(db: StateDb): StateDb & { queries: number } {
  const wrapped = {
    ...db,
    queries: 0,
    query(text: string, values?: unknown[]) {
      wrapped.queries++;
      return db.query(text, values);
    },
  };
  return wrapped as StateDb & { queries: number };
}

function scenarios(open: () => Promise<StateDb>): void {
  let db: StateDb;
  let auth: Authenticator;

  beforeAll(async () => {
    db = await open();
    auth = authOn(db);
  });
  afterAll(async () => {
    await auth?.close();
    await db?.close();
  });

  it('migrations are recorded once; applying again is a no-op', async () => {
    expect(await stateVersion(db)).toBe(LATEST_VERSION);
    expect(await migrateState(db, { migrate: true })).toEqual([]);
    const { rows } = await db.query('SELECT version FROM pgmcp.schema_version');
    expect(rows.map((r) => r.version).sort((a, b) => a - b)).toEqual(
      MIGRATIONS.map((m) => m.version),
    );
    expect(MIGRATIONS.at(-1)!.version).toBe(LATEST_VERSION);
  });

  it('applies a version that landed below one already applied (branches merged in any order)', async () => {
    const v = (version: number) => ({
      version,
      description: `test ${version}`,
      sql: `CREATE TABLE pgmcp.gap_test_${version} (x int)`,
    });
    try {
      expect(
        await migrateState(db, { migrate: true, migrations: [...MIGRATIONS, v(901)] }),
      ).toEqual([901]);
      expect(
        await migrateState(db, { migrate: true, migrations: [...MIGRATIONS, v(901), v(900)] }),
      ).toEqual([900]);
      expect(
        await migrateState(db, { migrate: true, migrations: [...MIGRATIONS, v(900), v(901)] }),
      ).toEqual([]);
    } finally {
      await db.query('DROP TABLE IF EXISTS pgmcp.gap_test_900, pgmcp.gap_test_901');
      await db.query('DELETE FROM pgmcp.schema_version WHERE version IN (900, 901)');
    }
  });

  it('a schema newer than this pgmcp is refused with a clear error', async () => {
    await db.query(
      "INSERT INTO pgmcp.schema_version (version, description) VALUES (999, 'future')",
    );
    try {
      const code = await codeOf(migrateState(db, { migrate: true }));
      expect(code).toBe(ErrorCodes.STATE_SCHEMA_MISMATCH);
    } finally {
      await db.query('DELETE FROM pgmcp.schema_version WHERE version = 999');
    }
  });

  it('creates, lists, verifies and revokes API tokens', async () => {
    const created = await auth.tokens.create({
      name: 'ci-bot',
      expiresInSeconds: 3600,
      roles: ['reader', 'ops'],
      boundDatabase: 'shop',
      pgRole: 'shop_reader',
    });
    expect(created.token).toMatch(/^pgmcp_[A-Za-z0-9_-]{43}$/);
    expect(created.token.startsWith(created.record.prefix)).toBe(true);

    const principal = await auth.tokens.verify(created.token);
    expect(principal).toMatchObject({
      kind: 'token',
      userId: 'ci-bot',
      roles: ['reader', 'ops'],
      boundDatabase: 'shop',
      pgRole: 'shop_reader',
      tokenId: created.record.id,
    });

    const listed = await auth.tokens.list();
    const row = listed.find((t) => t.id === created.record.id)!;
    expect(row).toMatchObject({ name: 'ci-bot', prefix: created.record.prefix, revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(created.token.slice(14));

    // Stored as SHA-256 hex only.
    const stored = await db.query('SELECT token_hash FROM pgmcp.tokens WHERE id = $1', [
      created.record.id,
    ]);
    expect(stored.rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);

    expect(await codeOf(auth.tokens.create({ name: 'ci-bot', expiresInSeconds: null }))).toBe(
      ErrorCodes.AUTH_CONFLICT,
    );

    const revoked = await auth.tokens.revoke(created.record.prefix);
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect(await auth.tokens.verify(created.token)).toEqual({ reason: 'revoked' });
    // The name is free again once revoked.
    const again = await auth.tokens.create({ name: 'ci-bot', expiresInSeconds: null });
    expect(await auth.tokens.verify(again.token)).toMatchObject({
      userId: 'ci-bot',
      tokenId: again.record.id,
    });
    await auth.tokens.revoke(again.record.id);
  });

  it('tells malformed, unknown and expired tokens apart', async () => {
    expect(await auth.tokens.verify('nope')).toEqual({ reason: 'malformed' });
    expect(await auth.tokens.verify(`pgmcp_${'A'.repeat(43)}`)).toEqual({ reason: 'unknown' });
    const short = await auth.tokens.create({ name: 'short-lived', expiresInSeconds: 60 });
    await db.query(
      "UPDATE pgmcp.tokens SET expires_at = now() - interval '1 second' WHERE id = $1",
      [short.record.id],
    );
    expect(await auth.tokens.verify(short.token)).toEqual({ reason: 'expired' });
    expect(await codeOf(auth.tokens.revoke('pgmcp_zzzzzzzz'))).toBe(ErrorCodes.AUTH_NOT_FOUND);
  });

  it('writes the last-use time once, not on every verification', async () => {
    const created = await auth.tokens.create({ name: 'busy', expiresInSeconds: null });
    for (let i = 0; i < 5; i++) await auth.tokens.verify(created.token);
    await new Promise((r) => setTimeout(r, 100));
    const first = (
      await db.query('SELECT last_used_at FROM pgmcp.tokens WHERE id = $1', [created.record.id])
    ).rows[0]!.last_used_at as Date;
    expect(first).toBeInstanceOf(Date);
    await auth.tokens.verify(created.token);
    await new Promise((r) => setTimeout(r, 100));
    const second = (
      await db.query('SELECT last_used_at FROM pgmcp.tokens WHERE id = $1', [created.record.id])
    ).rows[0]!.last_used_at as Date;
    expect(second.getTime()).toBe(first.getTime());
  });

  it('authenticateBearer answers from the cache and forgets a token revoked here', async () => {
    const spy = counting(db);
    const cached = authOn(spy, db);
    const created = await cached.tokens.create({ name: 'cached', expiresInSeconds: null });
    expect(await cached.authenticateBearer(created.token)).toMatchObject({ userId: 'cached' });
    const before = spy.queries;
    expect(await cached.authenticateBearer(created.token)).toMatchObject({ userId: 'cached' });
    expect(spy.queries).toBe(before);
    await cached.tokens.revoke(created.record.id);
    expect(await cached.authenticateBearer(created.token)).toEqual({ reason: 'revoked' });
    expect(await cached.authenticateBearer('Basic abc')).toEqual({ reason: 'malformed' });
    await cached.close();
  });

  it('lapsedBearers re-checks the bearers of open streams in one query and forgets the lapsed', async () => {
    const spy = counting(db);
    const here = authOn(spy, db);
    // Another instance (or the CLI) makes the changes: this one's cache knows nothing of them.
    const elsewhere = authOn(db);
    const good = await here.tokens.create({ name: 'lapse-good', expiresInSeconds: 3600 });
    const revoked = await here.tokens.create({ name: 'lapse-revoked', expiresInSeconds: 3600 });
    const expired = await here.tokens.create({ name: 'lapse-expired', expiresInSeconds: 3600 });
    await here.users.add({ username: 'lapse-user', password: 'lapse-password' });
    await here.users.add({ username: 'lapse-other', password: 'lapse-password' });
    const kept = await here.sessions.login('lapse-user', 'lapse-password', null);
    const outOfTime = await here.sessions.login('lapse-user', 'lapse-password', null);
    const loggedOut = await here.sessions.login('lapse-user', 'lapse-password', null);
    const ofDisabled = await here.sessions.login('lapse-other', 'lapse-password', null);
    const bearers = {
      good: good.token,
      revoked: revoked.token,
      expired: expired.token,
      kept: kept.sessionToken,
      outOfTime: outOfTime.sessionToken,
      loggedOut: loggedOut.sessionToken,
      ofDisabled: ofDisabled.sessionToken,
    };
    for (const raw of Object.values(bearers)) {
      expect(isAuthFailure(await here.authenticateBearer(raw))).toBe(false);
    }

    await elsewhere.tokens.revoke(revoked.record.id);
    await db.query("UPDATE pgmcp.tokens SET expires_at = now() WHERE name = 'lapse-expired'");
    await db.query('UPDATE pgmcp.sessions SET expires_at = now() WHERE token_hash = $1', [
      hashBearer(outOfTime.sessionToken),
    ]);
    await elsewhere.sessions.logout(loggedOut.sessionToken);
    // A disabled user's sessions end; one left behind (an older pgmcp) is refused all the same.
    await db.query("UPDATE pgmcp.users SET disabled = true WHERE username = 'lapse-other'");
    // Still trusted from the cache, as any request would be for up to cacheTtlMs.
    expect(await here.authenticateBearer(revoked.token)).toMatchObject({ userId: 'lapse-revoked' });

    const unknown = hashBearer(`pgmcp_${'x'.repeat(43)}`);
    const hashes = [...Object.values(bearers).map(hashBearer), unknown];
    const before = spy.queries;
    const lapsed = await here.lapsedBearers(hashes);
    expect(spy.queries - before).toBe(1);
    expect(Object.fromEntries(lapsed)).toEqual({
      [hashBearer(revoked.token)]: 'revoked',
      [hashBearer(expired.token)]: 'expired',
      [hashBearer(outOfTime.sessionToken)]: 'expired',
      [hashBearer(loggedOut.sessionToken)]: 'ended',
      [hashBearer(ofDisabled.sessionToken)]: 'disabled',
      [unknown]: 'ended',
    });
    // The lapsed are refused at once; the good ones still come from the cache.
    expect(await here.authenticateBearer(revoked.token)).toEqual({ reason: 'revoked' });
    expect(await here.authenticateBearer(ofDisabled.sessionToken)).toEqual({ reason: 'revoked' });
    const cachedFrom = spy.queries;
    expect(await here.authenticateBearer(good.token)).toMatchObject({ userId: 'lapse-good' });
    expect(await here.authenticateBearer(kept.sessionToken)).toMatchObject({
      userId: 'lapse-user',
    });
    expect(spy.queries).toBe(cachedFrom);
    expect((await here.lapsedBearers([])).size).toBe(0);
    expect(spy.queries).toBe(cachedFrom);
    await here.users.remove('lapse-user');
    await here.users.remove('lapse-other');
    await here.close();
    await elsewhere.close();
  });

  it('users log in with a session token that verifies like an API token', async () => {
    await auth.users.add({
      username: 'alice',
      password: 'correct horse',
      roles: ['analyst'],
      pgRole: 'alice_pg',
    });
    expect(await codeOf(auth.users.add({ username: 'alice', password: 'whatever1' }))).toBe(
      ErrorCodes.AUTH_CONFLICT,
    );
    const stored = await db.query("SELECT password_hash FROM pgmcp.users WHERE username = 'alice'");
    expect(stored.rows[0]!.password_hash).toMatch(/^scrypt\$1024\$8\$1\$[\w-]+\$[\w-]+$/);

    const login = await auth.sessions.login('alice', 'correct horse', '10.0.0.1');
    expect(login.sessionToken).toMatch(/^pgmcps_/);
    expect(login.expiresAt.getTime()).toBeGreaterThan(Date.now() + 3500_000);
    const principal = await auth.authenticateBearer(login.sessionToken);
    expect(principal).toMatchObject({
      kind: 'user',
      userId: 'alice',
      roles: ['analyst'],
      pgRole: 'alice_pg',
    });

    expect(await auth.sessions.logout(login.sessionToken)).toBe(true);
    expect(await auth.authenticateBearer(login.sessionToken)).toEqual({ reason: 'unknown' });
    expect(await auth.sessions.logout(login.sessionToken)).toBe(false);
  });

  it('disabling a user or changing the password ends the sessions', async () => {
    await auth.users.add({ username: 'bob', password: 'bob-password' });
    const first = await auth.sessions.login('bob', 'bob-password', null);
    expect(isAuthFailure(await auth.authenticateBearer(first.sessionToken))).toBe(false);
    await auth.users.setEnabled('bob', false);
    expect(await auth.authenticateBearer(first.sessionToken)).toEqual({ reason: 'unknown' });
    expect(await codeOf(auth.sessions.login('bob', 'bob-password', null))).toBe(
      ErrorCodes.LOGIN_FAILED,
    );
    await auth.users.setEnabled('bob', true);

    const second = await auth.sessions.login('bob', 'bob-password', null);
    await auth.users.setPassword('bob', 'new-bob-password');
    expect(await auth.sessions.verify(second.sessionToken)).toEqual({ reason: 'unknown' });
    expect(await codeOf(auth.sessions.login('bob', 'bob-password', null))).toBe(
      ErrorCodes.LOGIN_FAILED,
    );
    await auth.sessions.login('bob', 'new-bob-password', null);

    const removed = await auth.users.remove('bob');
    expect(removed.username).toBe('bob');
    expect(
      (
        await db.query('SELECT count(*)::int AS n FROM pgmcp.sessions WHERE user_id = $1', [
          removed.id,
        ])
      ).rows[0]!.n,
    ).toBe(0);
    expect(await codeOf(auth.users.remove('bob'))).toBe(ErrorCodes.AUTH_NOT_FOUND);
  });

  it('locks a user name after repeated failures, the same way whether or not it exists', async () => {
    await auth.users.add({ username: 'carol', password: 'carol-password' });
    const messages: string[] = [];
    for (const name of ['carol', 'nobody']) {
      for (let i = 0; i < LOCKOUT.maxFailures; i++) {
        try {
          await auth.sessions.login(name, 'wrong-password', `192.0.2.${name.length}`);
        } catch (error) {
          expect(isAppError(error) && error.code).toBe(ErrorCodes.LOGIN_FAILED);
          messages.push((error as Error).message);
        }
      }
      // Locked now: even the right password is refused, with the lock's own error.
      expect(await codeOf(auth.sessions.login(name, 'carol-password', '198.51.100.1'))).toBe(
        ErrorCodes.LOGIN_LOCKED,
      );
    }
    expect(new Set(messages).size).toBe(1);
    // Another user from the same address is not affected by the name lock.
    await auth.users.add({ username: 'dave', password: 'dave-password' });
    await auth.sessions.login('dave', 'dave-password', '192.0.2.5');

    // The lock ends with its time.
    await db.query("UPDATE pgmcp.lockouts SET locked_until = now() - interval '1 second'");
    await auth.sessions.login('carol', 'carol-password', null);
  });

  it('locks a client address that sprays many names', async () => {
    const address = '203.0.113.9';
    for (let i = 0; i < LOCKOUT.maxFailuresPerAddress; i++) {
      expect(await codeOf(auth.sessions.login(`spray${i}`, 'wrong-password', address))).toBe(
        ErrorCodes.LOGIN_FAILED,
      );
    }
    await auth.users.add({ username: 'erin', password: 'erin-password' });
    expect(await codeOf(auth.sessions.login('erin', 'erin-password', address))).toBe(
      ErrorCodes.LOGIN_LOCKED,
    );
    await auth.sessions.login('erin', 'erin-password', '203.0.113.10');
  });

  it('audits auth events without secrets', async () => {
    await auth.audit.flush();
    const { rows } = await db.query(
      'SELECT event, outcome, principal_id, details::text AS details FROM pgmcp.audit',
    );
    const events = new Set(rows.map((r) => r.event));
    for (const event of [
      'token_created',
      'token_revoked',
      'user_added',
      'login',
      'login_failed',
      'lockout',
      'login_locked',
      'logout',
      'user_disabled',
      'user_password_changed',
      'user_removed',
    ]) {
      expect(events).toContain(event);
    }
    const text = JSON.stringify(rows);
    expect(text).not.toMatch(/pgmcps?_[A-Za-z0-9_-]{20}/);
    expect(text).not.toMatch(/correct horse|wrong-password|scrypt\$/);
  });
}

const info = await realPostgres('auth state on PostgreSQL');

describe.skipIf(!info)('auth state on PostgreSQL', () => {
  const pgInfo = info as RealPostgres;
  const { url } = throwawayDatabase(pgInfo, 'pgmcp_auth');

  it('instances starting together migrate once', async () => {
    const dbs = await Promise.all(
      [1, 2, 3].map(() => openStateDatabase({ url, dataDir: '/nonexistent', logger })),
    );
    const { rows } = await dbs[0]!.query('SELECT count(*)::int AS n FROM pgmcp.schema_version');
    expect(rows[0]!.n).toBe(MIGRATIONS.length);
    await Promise.all(dbs.map((d) => d.close()));
  });

  scenarios(() => openStateDatabase({ url, dataDir: '/nonexistent', logger }));

  it('disabling a user or changing a password ends the sessions in the same instant', async () => {
    // An open stream's re-check (on any instance) must never see the user disabled while the
    // session still exists, or the other way round. The sessions table is held locked by
    // another session: the change waits for it, and until it is through nobody sees any of it.
    const db = await openStateDatabase({ url, dataDir: '/nonexistent', logger });
    const auth = authOn(db);
    try {
      for (const [name, action] of [
        ['atomic-disable', () => auth.users.setEnabled('atomic-disable', false)],
        ['atomic-passwd', () => auth.users.setPassword('atomic-passwd', 'another password')],
      ] as const) {
        await auth.users.add({ username: name, password: 'atomic-password' });
        await auth.sessions.login(name, 'atomic-password', null);
        const locker = new pg.Client({ connectionString: url });
        await locker.connect();
        try {
          await locker.query('BEGIN');
          await locker.query('LOCK TABLE pgmcp.sessions IN ACCESS EXCLUSIVE MODE');
          const changing = action();
          // The change has reached PostgreSQL and waits for the lock.
          await waitForLockWaiter(url);
          const seen = await withClient(url, (c) =>
            c.query<{ changed: boolean }>(
              `SELECT disabled OR updated_at > created_at AS changed FROM pgmcp.users
                WHERE username = $1`,
              [name],
            ),
          );
          expect(
            seen.rows[0]!.changed,
            `${name}: the change showed before its sessions ended`,
          ).toBe(false);
          await locker.query('COMMIT');
          await changing;
        } finally {
          await locker.end();
        }
        const left = await db.query(
          'SELECT count(*)::int AS n FROM pgmcp.sessions s JOIN pgmcp.users u ON u.id = s.user_id WHERE u.username = $1',
          [name],
        );
        expect(left.rows[0]!.n).toBe(0);
      }
    } finally {
      await auth.close();
      await db.close();
    }
  });

  it('an unreachable state database is a clear error', async () => {
    const bad = new URL(url);
    bad.port = '1';
    const error = await openStateDatabase({
      url: bad.toString(),
      dataDir: '/nonexistent',
      logger,
    }).catch((e: unknown) => e);
    expect(isAppError(error) && error.code).toBe(ErrorCodes.STATE_UNAVAILABLE);
    expect((error as Error).message).toContain('state.url');
  });
});

describe('auth state on the embedded database', () => {
  const root = mkdtempSync(join(tmpdir(), 'pgmcp-auth-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  scenarios(async () => {
    const db = await openStateDatabase({ url: null, dataDir: join(root, 'data'), logger });
    expect(db.mode).toBe('embedded-started');
    return db;
  });
});
