import { parse } from 'pg-connection-string';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { driverUrl } from './driver-url.js';
import { databaseNameOf } from './names.js';

afterEach(() => vi.restoreAllMocks());

/** What node-postgres makes of the URL pgmcp hands it: its `ssl` option. */
const sslOf = (url: string): unknown => parse(driverUrl(url)).ssl;

describe('driverUrl: sslmode as libpq reads it', () => {
  it('asks for libpq semantics, keeping the rest of the URL', () => {
    expect(driverUrl('postgres://u:p@h/db')).toBe('postgres://u:p@h/db?uselibpqcompat=true');
    expect(driverUrl('postgres://u:p@h/db?sslmode=require#x')).toBe(
      'postgres://u:p@h/db?sslmode=require&uselibpqcompat=true#x',
    );
    expect(driverUrl('postgres://h/db?uselibpqcompat=true')).toBe(
      'postgres://h/db?uselibpqcompat=true',
    );
  });

  it('require and prefer encrypt without verifying; verify-full verifies', () => {
    expect(sslOf('postgres://h/db?sslmode=require')).toEqual({ rejectUnauthorized: false });
    expect(sslOf('postgres://h/db?sslmode=prefer')).toEqual({ rejectUnauthorized: false });
    expect(sslOf('postgres://h/db?sslmode=verify-full')).toEqual({});
    expect(sslOf('postgres://h/db?sslmode=disable')).toBe(false);
  });

  it('allow connects unencrypted (node-postgres has no retry with SSL)', () => {
    expect(driverUrl('postgres://h/db?sslmode=allow&x=1')).toBe(
      'postgres://h/db?sslmode=disable&x=1&uselibpqcompat=true',
    );
    expect(sslOf('postgres://h/db?sslmode=allow')).toBe(false);
  });

  it('no SECURITY WARNING on stderr, for the pool or the database name', () => {
    const warn = vi.spyOn(process, 'emitWarning');
    for (const mode of ['prefer', 'require', 'verify-full', 'allow', 'disable']) {
      parse(driverUrl(`postgres://h/shop?sslmode=${mode}`));
      expect(databaseNameOf(`postgres://h/shop?sslmode=${mode}`)).toBe('shop');
    }
    expect(warn).not.toHaveBeenCalled();
  });
});
