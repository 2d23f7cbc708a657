// Every text that can reach a WWW-Authenticate header, written as one: the refusal messages
// (core/refusals.ts) and, as a wide sample of what pgmcp says, the text of every code in the
// error catalogue (docs/errors.md). Each must come out as a header Node writes and a client can
// parse, with the description intact.
import { readFileSync } from 'node:fs';
import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { parseBearerChallenge, RFC6750_TEXT } from '../../test/helpers/challenge.js';
import { ErrorCodes } from '../core/errors.js';
import { claimRefused, Refusals, rolesMissing } from '../core/refusals.js';
import { challenge, type ChallengeKind } from './challenge.js';

const EXTRAS = {
  resourceMetadata: 'http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp',
  scope: 'analyst mcp:admin',
};
const KINDS: ChallengeKind[] = ['invalid_request', 'invalid_token', 'insufficient_scope'];

/** What a client reads back: the header must be writable and parseable first. */
function roundTrip(kind: ChallengeKind, description: string): Record<string, string> {
  const value = challenge(kind, description, EXTRAS);
  expect(() => validateHeaderValue('www-authenticate', value), value).not.toThrow();
  const params = parseBearerChallenge(value);
  expect(params, value).not.toBeNull();
  expect(params!.resource_metadata).toBe(EXTRAS.resourceMetadata);
  expect(params!.scope).toBe(EXTRAS.scope);
  expect(params!.error).toBe(kind);
  expect(params!.error_description).toMatch(RFC6750_TEXT);
  return params!;
}

const refusals: [string, string][] = [
  ...Object.entries(Refusals),
  // Every claim jose checks, and one it never names.
  ...['exp', 'nbf', 'iat', 'iss', 'aud', 'sub', 'typ', 'jti', 'x’"\r\n'].map(
    (claim): [string, string] => [`claimRefused(${JSON.stringify(claim)})`, claimRefused(claim)],
  ),
  ['rolesMissing', rolesMissing(['admin', 'db.reader', 'mcp:write'])],
];

describe('the refusal messages', () => {
  it.each(refusals)('%s is plain ASCII an error_description may hold as it is', (_name, text) => {
    expect(text).toMatch(RFC6750_TEXT);
    expect(text.trim()).toBe(text);
  });

  it.each(refusals)('%s reaches the client unchanged in the challenge', (_name, text) => {
    for (const kind of KINDS) expect(roundTrip(kind, text).error_description).toBe(text);
  });
});

describe('the error catalogue', () => {
  const catalogue = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  const rows = Object.entries(ErrorCodes).map(([name, code]): [string, string] => {
    const row = catalogue.split('\n').find((line) => line.startsWith(`| ${code} `));
    const text = row?.split('|')[3]?.trim() ?? '';
    return [`${code} ${name}`, text];
  });

  it('has a text for every code', () => {
    for (const [name, text] of rows) expect(text, name).not.toBe('');
    // The sample is worth having: it holds what Node refuses in a header.
    expect(rows.some(([, text]) => /[^\x00-\xff]/.test(text))).toBe(true);
  });

  it.each(rows)('%s can be sent as an error_description', (_name, text) => {
    for (const kind of KINDS) roundTrip(kind, text);
  });

  it('never lets a description end the header or open another', () => {
    const params = roundTrip('invalid_token', 'a"\r\nSet-Cookie: s=1, error="x\\');
    expect(params.error_description).toBe("a' Set-Cookie: s=1, error='x/");
  });
});
