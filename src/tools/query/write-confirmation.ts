// Single-use nonces that let a previewed write run, on stateless HTTP too: the nonce is
// sealed (it names a hash of the exact statement and params and an expiry); the set of
// used nonces is kept in memory until they expire, and also in the state database when
// instances share one (the ledger's `shared`), so a nonce runs its write once in all.
import { createHash, randomUUID } from 'node:crypto';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { Signer } from '../../core/signed.js';
import type { NonceLedger } from '../../core/used-nonces.js';

const TTL_MS = 5 * 60_000;

export interface WriteConfirmations {
  issue(query: string, params: unknown[]): string;
  /** Accepts a nonce once, for the same statement and params; throws otherwise. */
  redeem(nonce: string, query: string, params: unknown[]): Promise<void>;
}

function digest(query: string, params: unknown[]): string {
  return createHash('sha256')
    .update(JSON.stringify([query, params]))
    .digest('base64url');
}

export function createWriteConfirmations(
  signer: Signer,
  now: () => number = Date.now,
  /** The tool to call again (named in a refusal). */
  tool = 'query_database',
  /** Where a use is also recorded for the other instances (none: this process only). */
  ledger: NonceLedger = { shared: null },
): WriteConfirmations {
  const used = new Map<string, number>(); // id → expiry
  const refuse = (why: string): AppError =>
    new AppError(
      ErrorCodes.WRITE_NOT_ALLOWED,
      `The write was not run: ${why} Call ${tool} without confirm to get a new preview.`,
      {
        category: 'input',
      },
    );
  return {
    issue(query, params) {
      return signer.seal({ w: 1, id: randomUUID(), h: digest(query, params), exp: now() + TTL_MS });
    },
    async redeem(nonce, query, params) {
      const payload = signer.open(nonce) as
        { w?: number; id?: string; h?: string; exp?: number } | undefined;
      if (!payload || payload.w !== 1 || typeof payload.id !== 'string')
        throw refuse('the confirm nonce is not valid.');
      if (!(typeof payload.exp === 'number' && payload.exp > now()))
        throw refuse('the confirm nonce has expired.');
      if (payload.h !== digest(query, params))
        throw refuse('the statement or params differ from the preview.');
      for (const [id, exp] of used) if (exp <= now()) used.delete(id);
      if (used.has(payload.id)) throw refuse('the confirm nonce was already used.');
      const shared = ledger.shared;
      if (shared) {
        // Fails closed: a use that could not be recorded does not run the write.
        const claimed = await shared.claim(payload.id, payload.exp).catch((error: unknown) => {
          throw new AppError(
            ErrorCodes.STATE_UNAVAILABLE,
            `The write was not run: the use of its confirm nonce could not be recorded in the state database, so other instances could not refuse it again. Try the same call later.`,
            { category: 'unavailable', cause: error },
          );
        });
        if (!claimed) throw refuse('the confirm nonce was already used.');
      }
      if (used.has(payload.id)) throw refuse('the confirm nonce was already used.');
      used.set(payload.id, payload.exp);
    },
  };
}
