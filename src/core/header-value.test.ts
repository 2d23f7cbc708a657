import { validateHeaderValue } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isHeaderSafe, quotedParam, safeHeaderValue } from './header-value.js';

describe('safeHeaderValue', () => {
  it('leaves plain ASCII alone', () => {
    const text = 'The bearer token is not valid (unknown, expired or revoked).';
    expect(safeHeaderValue(text)).toBe(text);
  });

  it('gives typographic marks their ASCII forms and drops accents', () => {
    expect(safeHeaderValue('The token’s issuer — “here” … a → b')).toBe(
      `The token's issuer - "here" ... a -> b`,
    );
    expect(safeHeaderValue('Café naïve Ångström')).toBe('Cafe naive Angstrom');
  });

  it('turns control characters into spaces, so no header can be split or cut', () => {
    expect(safeHeaderValue('a\r\nSet-Cookie: x=1\u0000\tb')).toBe('a Set-Cookie: x=1 b');
    expect(safeHeaderValue('a\u2028b\u0085c\u007fd')).toBe('a b c d');
  });

  it('replaces whatever has no ASCII reading, one mark per character', () => {
    expect(safeHeaderValue('日本 🚀 ok')).toBe('?? ? ok');
  });

  it('always yields a value Node writes', () => {
    const samples = ['’', '\u{1F600}', '\r\n', '\u0000', 'ÿ', '\uFFFD', 'x'.repeat(5000), ''];
    for (let code = 0; code < 0x3000; code += 7) samples.push(String.fromCharCode(code));
    for (const sample of samples) {
      const value = safeHeaderValue(`a${sample}b`);
      expect(isHeaderSafe(value), JSON.stringify(sample)).toBe(true);
      expect(() => validateHeaderValue('x-test', value)).not.toThrow();
    }
  });
});

describe('quotedParam', () => {
  it('holds only what RFC 6750 allows inside the quotes', () => {
    expect(quotedParam('must be "Bearer <token>" \\ here’s')).toBe(
      `"must be 'Bearer <token>' / here's"`,
    );
  });
});
