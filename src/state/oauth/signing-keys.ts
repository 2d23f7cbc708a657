// The built-in authorization server's signing keys, kept in the state database so every
// instance signs with the same key and publishes the same JWKS. The first start makes one
// (ES256); `pgmcp oauth rotate-keys` makes a new one and retires the old, which stays published
// for a day so the tokens it signed still verify until they expire. Instances pick up a new key
// within KEY_CACHE_MS; a token signed with a key they have not seen yet makes the resource
// server read the set again (unknown kid).
import { randomBytes } from 'node:crypto';
import {
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
} from 'jose';
import type { Queryable } from '../state-db.js';

const ALG = 'ES256';
const KEY_CACHE_MS = 60_000;
/** Retired keys stay published this long: longer than any access token lives. */
const RETIRED_PUBLISHED_HOURS = 24;

export interface SigningKey {
  kid: string;
  alg: string;
  key: CryptoKey;
}

export interface SigningKeys {
  /** The newest active key, made on first use when there is none. */
  current(): Promise<SigningKey>;
  /** Public keys of active and recently retired keys. */
  publicJwks(): Promise<JSONWebKeySet>;
  /** A new key becomes current; the old ones are retired. Returns the new kid. */
  rotate(): Promise<string>;
}

async function newKeyRow(): Promise<{ kid: string; publicJwk: JWK; privateJwk: JWK }> {
  const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true });
  const kid = randomBytes(12).toString('base64url');
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: ALG, use: 'sig' };
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: ALG };
  return { kid, publicJwk, privateJwk };
}

export function createSigningKeys(db: Queryable): SigningKeys {
  let cached: { key: SigningKey; until: number } | null = null;

  const insert = async (): Promise<string> => {
    const row = await newKeyRow();
    await db.query(
      'INSERT INTO pgmcp.oauth_keys (kid, alg, public_jwk, private_jwk) VALUES ($1, $2, $3, $4)',
      [row.kid, ALG, JSON.stringify(row.publicJwk), JSON.stringify(row.privateJwk)],
    );
    return row.kid;
  };

  const newest = async () =>
    (
      await db.query<{ kid: string; alg: string; private_jwk: JWK }>(
        `SELECT kid, alg, private_jwk FROM pgmcp.oauth_keys
          WHERE retired_at IS NULL ORDER BY created_at DESC, kid LIMIT 1`,
      )
    ).rows[0];

  return {
    async current() {
      if (cached && cached.until > Date.now()) return cached.key;
      let row = await newest();
      if (!row) {
        // Two instances starting together may each add one: both are valid, the newest signs.
        await insert();
        row = await newest();
      }
      const key = (await importJWK(row!.private_jwk, row!.alg)) as CryptoKey;
      cached = { key: { kid: row!.kid, alg: row!.alg, key }, until: Date.now() + KEY_CACHE_MS };
      return cached.key;
    },
    async publicJwks() {
      const { rows } = await db.query<{ public_jwk: JWK }>(
        `SELECT public_jwk FROM pgmcp.oauth_keys
          WHERE retired_at IS NULL OR retired_at > now() - make_interval(hours => $1)
          ORDER BY created_at DESC`,
        [RETIRED_PUBLISHED_HOURS],
      );
      return { keys: rows.map((r) => r.public_jwk) };
    },
    async rotate() {
      const kid = await insert();
      await db.query(
        `UPDATE pgmcp.oauth_keys SET retired_at = now() WHERE retired_at IS NULL AND kid <> $1`,
        [kid],
      );
      await db.query(
        `DELETE FROM pgmcp.oauth_keys WHERE retired_at < now() - make_interval(hours => $1)`,
        [RETIRED_PUBLISHED_HOURS * 2],
      );
      cached = null;
      return kid;
    },
  };
}
