// The secrets the state database keeps for auth: bearer tokens (API tokens and login sessions),
// kept only as SHA-256 hex, and passwords, kept as scrypt hashes with their own salt and parameters.
// Every comparison of secret-derived bytes is constant-time.
import { hash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** API tokens: `pgmcp_` + 43 base64url characters (32 random bytes). */
export const API_TOKEN_PREFIX = 'pgmcp_';
/** Login sessions: `pgmcps_` + 43 base64url characters. */
export const SESSION_TOKEN_PREFIX = 'pgmcps_';
const SECRET_BYTES = 32;
const SECRET_CHARS = 43; // base64url of 32 bytes, unpadded
/** Characters of the random part kept in the listed prefix: enough to tell tokens apart. */
const DISPLAY_CHARS = 8;

export type BearerKind = 'token' | 'session';

export interface NewSecret {
  /** Shown once, never stored. */
  readonly raw: string;
  /** SHA-256 hex of `raw`: what the state database keeps. */
  readonly hash: string;
  /** `pgmcp_AbCdEfGh`: safe to list and to name the token by. */
  readonly displayPrefix: string;
}

export function newBearerSecret(kind: BearerKind): NewSecret {
  const prefix = kind === 'token' ? API_TOKEN_PREFIX : SESSION_TOKEN_PREFIX;
  const raw = prefix + randomBytes(SECRET_BYTES).toString('base64url');
  return { raw, hash: hashBearer(raw), displayPrefix: raw.slice(0, prefix.length + DISPLAY_CHARS) };
}

/** Longest bearer token accepted: ours are ~50 characters, JWTs a few kilobytes. */
export const MAX_BEARER_LENGTH = 8192;
const BEARER_HEADER = /^Bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i;

/**
 * The token of an `Authorization: Bearer <token>` header, or null when the header is absent,
 * is another scheme, is malformed or is longer than MAX_BEARER_LENGTH. The one parser for the
 * MCP endpoint and /api alike.
 */
export function bearerFromHeader(header: string | undefined): string | null {
  if (typeof header !== 'string' || header.length > MAX_BEARER_LENGTH + 16) return null;
  const token = BEARER_HEADER.exec(header)?.[1];
  return token !== undefined && token.length <= MAX_BEARER_LENGTH ? token : null;
}

export function hashBearer(raw: string): string {
  return hash('sha256', raw, 'hex'); // per authenticated request: the one-shot form
}

const TOKEN_SHAPE = new RegExp(`^${API_TOKEN_PREFIX}[A-Za-z0-9_-]{${SECRET_CHARS}}$`);
const SESSION_SHAPE = new RegExp(`^${SESSION_TOKEN_PREFIX}[A-Za-z0-9_-]{${SECRET_CHARS}}$`);

/** Which kind of bearer `raw` is by its shape, or null when it is neither. */
export function bearerKind(raw: string): BearerKind | null {
  if (TOKEN_SHAPE.test(raw)) return 'token';
  if (SESSION_SHAPE.test(raw)) return 'session';
  return null;
}

/** Whether `value` looks like a display prefix (`pgmcp_` + 1–43 characters). */
export function isDisplayPrefix(value: string): boolean {
  return new RegExp(`^${API_TOKEN_PREFIX}[A-Za-z0-9_-]{1,${SECRET_CHARS}}$`).test(value);
}

/** Constant-time equality of two hex digests (false when the lengths differ). */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

// ---------------------------------------------------------------------------------------------
// Passwords

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** About 32 MiB and ~50–100 ms per hash on a laptop core (OWASP's scrypt baseline is 2^17). */
export const DEFAULT_SCRYPT: ScryptParams = Object.freeze({ N: 32_768, r: 8, p: 1 });
const KEY_BYTES = 32;
const SALT_BYTES = 16;
// Stored hashes come from our own table, but a hostile edit must not make us allocate gigabytes.
const MAX_N = 1 << 20;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.N,
    r: params.r,
    p: params.p,
    maxmem: 256 * params.N * params.r + 1024 * 1024,
  };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashPassword(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params);
  return [
    'scrypt',
    params.N,
    params.r,
    params.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  key: Buffer;
}

function parseHash(stored: string): ParsedHash | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  const valid =
    Number.isInteger(N) &&
    N > 1 &&
    N <= MAX_N &&
    (N & (N - 1)) === 0 &&
    Number.isInteger(r) &&
    r >= 1 &&
    r <= 32 &&
    Number.isInteger(p) &&
    p >= 1 &&
    p <= 16;
  if (!valid) return null;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const key = Buffer.from(parts[5]!, 'base64url');
  if (salt.length === 0 || key.length === 0) return null;
  return { params: { N, r, p }, salt, key };
}

/** Whether `password` matches `stored`; false (never an error) for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.params);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}

/** Whether `stored` was made with weaker parameters than `params` (rehash on next login). */
export function needsRehash(stored: string, params: ScryptParams = DEFAULT_SCRYPT): boolean {
  const parsed = parseHash(stored);
  return (
    !parsed ||
    parsed.params.N < params.N ||
    parsed.params.r < params.r ||
    parsed.params.p < params.p
  );
}

const DUMMY_SALT = Buffer.alloc(SALT_BYTES, 0x5a);

/**
 * The same work verifyPassword does, for a user that does not exist, so the answer takes as
 * long as a wrong password for a real user would.
 */
export async function spendPasswordWork(
  password: string,
  params: ScryptParams = DEFAULT_SCRYPT,
): Promise<void> {
  const key = await derive(password, DUMMY_SALT, params);
  timingSafeEqual(key, key);
}
