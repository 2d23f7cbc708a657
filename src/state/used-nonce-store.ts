// Write-confirmation nonces already redeemed, as every instance sharing the state database
// sees them (pgmcp.used_nonces, migration 6). Claiming a nonce is one INSERT that only one
// instance can win; the expired rows are deleted at most once a minute per instance.
import type { UsedNonces } from '../core/used-nonces.js';
import type { StateDb } from './state-db.js';

const CLEANUP_EVERY_MS = 60_000;

export function createUsedNonceStore(
  db: Pick<StateDb, 'query'>,
  now: () => number = Date.now,
): UsedNonces {
  let cleanedAt = -Infinity;
  return {
    async claim(id, expiresAt) {
      if (now() - cleanedAt >= CLEANUP_EVERY_MS) {
        cleanedAt = now();
        await db.query('DELETE FROM pgmcp.used_nonces WHERE expires_at < now()');
      }
      const { rowCount } = await db.query(
        `INSERT INTO pgmcp.used_nonces (id, expires_at)
         VALUES ($1, to_timestamp($2::float8 / 1000))
         ON CONFLICT (id) DO NOTHING`,
        [id, expiresAt],
      );
      return rowCount === 1;
    },
  };
}
