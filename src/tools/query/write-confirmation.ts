// Single-use nonces that let a previewed write run, on stateless HTTP too: the nonce is
// sealed (it names a hash of the exact statement and params and an expiry); the set of
// used nonces is kept in memory until they expire.
import { createHash, randomUUID } from 'node:crypto';
import { AppError, ErrorCodes } from '../../core/errors.js';
import type { Signer } from '../../core/signed.js';

const TTL_MS = 5 * 60_000;

export interface WriteConfirmations {
  issue(query: string, params: unknown[]): string;
  /** Accepts a nonce once, for the same statement and params; throws otherwise. */
  redeem(nonce: string, query: string, params: unknown[]): void;
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
    redeem(nonce, query, params) {
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
      used.set(payload.id, payload.exp);
    },
  };
}
