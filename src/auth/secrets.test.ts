import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../core/errors.js';
import { ANONYMOUS } from '../core/principal.js';
import { createAuditLog, scrubDetails } from '../state/audit.js';
import { parseLifetime } from './duration.js';
import {
  bearerKind,
  hashBearer,
  hashPassword,
  needsRehash,
  newBearerSecret,
  sameDigest,
  verifyPassword,
} from '../state/secrets.js';

const FAST = { N: 1024, r: 8, p: 1 };

describe('bearer secrets', () => {
  it('are 32 random bytes in base64url behind a prefix that says their kind', () => {
    const token = newBearerSecret('token');
    const session = newBearerSecret('session');
    expect(token.raw).toMatch(/^pgmcp_[A-Za-z0-9_-]{43}$/);
    expect(session.raw).toMatch(/^pgmcps_[A-Za-z0-9_-]{43}$/);
    expect(bearerKind(token.raw)).toBe('token');
    expect(bearerKind(session.raw)).toBe('session');
    expect(bearerKind(`${token.raw}x`)).toBeNull();
    expect(bearerKind('Bearer abc')).toBeNull();
    expect(token.hash).toBe(hashBearer(token.raw));
    expect(token.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(token.displayPrefix).toBe(token.raw.slice(0, 14));
    expect(newBearerSecret('token').raw).not.toBe(token.raw);
  });

  it('compare digests in constant time, false on any difference', () => {
    const a = hashBearer('a');
    expect(sameDigest(a, a)).toBe(true);
    expect(sameDigest(a, hashBearer('b'))).toBe(false);
    expect(sameDigest(a, a.slice(2))).toBe(false);
    expect(sameDigest('', '')).toBe(false);
  });
});

describe('passwords', () => {
  it('are scrypt hashes with their salt and parameters', async () => {
    const stored = await hashPassword('correct horse', FAST);
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    expect(await hashPassword('correct horse', FAST)).not.toBe(stored);
    expect(await verifyPassword('correct horse', stored)).toBe(true);
    expect(await verifyPassword('correct horsE', stored)).toBe(false);
    expect(needsRehash(stored)).toBe(true);
    expect(needsRehash(stored, FAST)).toBe(false);
  });

  it('treat a malformed or absurd stored hash as a mismatch', async () => {
    for (const stored of [
      '',
      'plain',
      'scrypt$3$8$1$c2FsdA$aGFzaA',
      'scrypt$1073741824$8$1$c2FsdA$aGFzaA',
    ]) {
      expect(await verifyPassword('x', stored)).toBe(false);
    }
  });
});

describe('parseLifetime', () => {
  it.each([
    ['90s', 90],
    ['30m', 1800],
    ['12h', 43_200],
    ['30d', 2_592_000],
    ['never', null],
  ])('%s', (text, seconds) => expect(parseLifetime(text)).toBe(seconds));

  it.each(['', '0s', '10', '5w', '-1d', '1.5h'])('rejects %j', (text) => {
    expect(() => parseLifetime(text)).toThrow(
      expect.objectContaining({ code: ErrorCodes.AUTH_INVALID_INPUT }),
    );
  });
});

describe('audit', () => {
  it('scrubs anything that names or looks like a secret', () => {
    const raw = newBearerSecret('token').raw;
    expect(
      scrubDetails({
        password: 'x',
        token: raw,
        session_token: 'y',
        note: raw,
        nested: { secret: 's', ok: 1 },
        token_id: 'id-1',
        name: 'ci',
      }),
    ).toEqual({ nested: { ok: 1 }, token_id: 'id-1', name: 'ci' });
  });

  it('appends JSON lines to audit.file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pgmcp-audit-'));
    try {
      const file = join(dir, 'audit.jsonl');
      const audit = createAuditLog({ db: null, file });
      audit.record({
        event: 'token_created',
        outcome: 'success',
        actor: { kind: 'cli', id: 'ops' },
        details: { name: 'ci' },
      });
      audit.toolCall({
        principal: { ...ANONYMOUS, kind: 'token', userId: 'ci' },
        database: 'shop',
        tool: 'query_database',
        durationMs: 12.4,
        outcome: 'error',
        errorCode: 'PGMCP203',
      });
      await audit.close();
      const lines = readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatchObject({
        event: 'token_created',
        principal_kind: 'cli',
        principal_id: 'ops',
        details: { name: 'ci' },
      });
      expect(lines[1]).toMatchObject({
        event: 'tool_call',
        principal_id: 'ci',
        database: 'shop',
        tool: 'query_database',
        duration_ms: 12,
        outcome: 'error',
        details: { error_code: 'PGMCP203' },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
