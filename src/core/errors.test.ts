import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from './errors.js';

describe('error codes', () => {
  const catalogue = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

  it('are unique', () => {
    const codes = Object.values(ErrorCodes);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it.each(Object.entries(ErrorCodes))('%s (%s) is catalogued in docs/errors.md', (name, code) => {
    expect(catalogue).toMatch(new RegExp(`\\|\\s*${code}\\s*\\|\\s*${name}\\s*\\|`));
  });
});
