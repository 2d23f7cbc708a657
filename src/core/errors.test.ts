import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

  it.each(Object.keys(ErrorCodes))('%s is raised somewhere in src/', (name) => {
    const root = fileURLToPath(new URL('../', import.meta.url));
    const sources = (readdirSync(root, { recursive: true }) as string[])
      .filter(
        (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && f !== join('core', 'errors.ts'),
      )
      .map((f) => readFileSync(join(root, f), 'utf8'));
    expect(sources.some((text) => text.includes(`ErrorCodes.${name}`))).toBe(true);
  });
});
