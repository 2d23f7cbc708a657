// The record of redeemed write-confirmation nonces in a PostgreSQL state database: a nonce is
// claimed once, whichever instance (store) claims it; expired rows are deleted as claims go on;
// and when the state database cannot be reached, a confirmation is refused (PGMCP601) rather
// than run without the record that keeps it single-use.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSigner } from '../../src/core/signed.js';
import { isAppError } from '../../src/core/errors.js';
import { openStateDatabase, type StateDb } from '../../src/state/state-db.js';
import { createUsedNonceStore } from '../../src/state/used-nonce-store.js';
import { createWriteConfirmations } from '../../src/tools/query/write-confirmation.js';
import { realPostgres, throwawayDatabase, withClient } from '../helpers/postgres.js';

const logger = pino({ level: 'silent' });
const pg = await realPostgres('test/integration/used-nonces.test.ts (shared used nonces)');

describe.skipIf(!pg)('write-confirmation nonces recorded in the state database', () => {
  const state = throwawayDatabase(pg!, 'pgmcp_used_nonces');
  let db: StateDb;

  beforeAll(async () => {
    db = await openStateDatabase({ url: state.url, dataDir: '/nonexistent', logger });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('a nonce is claimed once across stores, and expired rows go', async () => {
    const [a, b] = [createUsedNonceStore(db), createUsedNonceStore(db)];
    const later = Date.now() + 60_000;
    expect(await a.claim('n1', later)).toBe(true);
    expect(await b.claim('n1', later)).toBe(false);
    expect(await a.claim('n1', later)).toBe(false);
    expect(await b.claim('n2', later)).toBe(true);

    await db.query("INSERT INTO pgmcp.used_nonces VALUES ('old', now() - interval '1 second')");
    // A store cleans up on its first claim, then at most once a minute.
    expect(await createUsedNonceStore(db).claim('n3', later)).toBe(true);
    const { rows } = await db.query<{ id: string }>('SELECT id FROM pgmcp.used_nonces ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual(['n1', 'n2', 'n3']);
  });

  it('two processes confirming one nonce: the write is let through once', async () => {
    const signer = createSigner('one-secret');
    const [first, second] = [1, 2].map(() =>
      createWriteConfirmations(signer, Date.now, 'query_database', {
        shared: createUsedNonceStore(db),
      }),
    ) as [ReturnType<typeof createWriteConfirmations>, ReturnType<typeof createWriteConfirmations>];
    const nonce = first.issue('DELETE FROM t', []);
    const outcomes = await Promise.allSettled([
      first.redeem(nonce, 'DELETE FROM t', []),
      second.redeem(nonce, 'DELETE FROM t', []),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(String(refused.reason.message)).toContain('the confirm nonce was already used');
  });

  it('with the state database unreachable, a confirmation is refused, not run unrecorded', async () => {
    const own = await openStateDatabase({ url: state.url, dataDir: '/nonexistent', logger });
    const confirmations = createWriteConfirmations(
      createSigner('one-secret'),
      Date.now,
      'query_database',
      { shared: createUsedNonceStore(own) },
    );
    const nonce = confirmations.issue('DELETE FROM t', []);
    await withClient(pg!.adminUrl, async (c) => {
      const name = new URL(state.url).pathname.slice(1);
      await c.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await c.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
    });
    try {
      const error = await confirmations.redeem(nonce, 'DELETE FROM t', []).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAppError(error) && error.code).toBe('PGMCP601');
      expect(String((error as Error).message)).toContain('The write was not run');
    } finally {
      await withClient(pg!.adminUrl, (c) =>
        c.query(`ALTER DATABASE ${new URL(state.url).pathname.slice(1)} ALLOW_CONNECTIONS true`),
      );
      await own.close().catch(() => undefined);
    }
    // Not recorded here either: once the state database is back, the nonce runs its write.
    const back = createWriteConfirmations(createSigner('one-secret'), Date.now, 'query_database', {
      shared: createUsedNonceStore(db),
    });
    await expect(back.redeem(nonce, 'DELETE FROM t', [])).resolves.toBeUndefined();
  });
});
