// Opaque, integrity-protected tokens for pagination cursors and input-required request
// state. The client may hold them but cannot forge or alter them.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface Signer {
  seal(payload: unknown): string;
  /** The payload, or undefined when the token is malformed or was tampered with. */
  open(token: unknown): unknown;
}

export function createSigner(secret?: string | null): Signer {
  const key = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  const mac = (body: string): Buffer => createHmac('sha256', key).update(body).digest();
  return {
    seal(payload) {
      const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
      return `${body}.${mac(body).toString('base64url')}`;
    },
    open(token) {
      if (typeof token !== 'string' || token.length > 65536) return undefined;
      const dot = token.indexOf('.');
      if (dot <= 0) return undefined;
      const body = token.slice(0, dot);
      const given = Buffer.from(token.slice(dot + 1), 'base64url');
      const expected = mac(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      try {
        return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
      } catch {
        return undefined;
      }
    },
  };
}
