import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import { parseHostPort, readFlags } from './flags.js';

describe('parseHostPort', () => {
  it.each([
    ['8080', { port: 8080 }],
    ['0', { port: 0 }],
    [' 65535 ', { port: 65535 }],
    ['0.0.0.0:8080', { host: '0.0.0.0', port: 8080 }],
    ['localhost:3000', { host: 'localhost', port: 3000 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['[::]:80', { host: '::', port: 80 }],
  ])('accepts %j', (input, expected) => {
    expect(parseHostPort(input)).toEqual(expected);
  });

  it.each([
    '',
    'abc',
    'host:',
    ':8080',
    'host:port',
    '::1:8080',
    '[::1]',
    '1.2.3.4:80:90',
    'http://h:80',
    '-1',
    '8080.5',
  ])('rejects %j with CONFIG_INVALID', (input) => {
    const run = () => parseHostPort(input);
    expect(run).toThrow(AppError);
    expect(run).toThrow(/expected \[HOST:\]PORT/);
  });

  it('rejects a port out of range and names the port', () => {
    try {
      parseHostPort('h:70000');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe(ErrorCodes.CONFIG_INVALID);
      expect((error as AppError).details).toEqual({ key: 'http.port' });
      expect((error as AppError).message).toContain('between 0 and 65535');
    }
  });

  it('hints at brackets for bare IPv6', () => {
    expect(() => parseHostPort('::1:8080')).toThrow(/brackets/);
  });
});

describe('readFlags', () => {
  it('maps every flag to its key with the flag as source', () => {
    const values = readFlags({
      http: '0.0.0.0:9000',
      database: 'postgres://h/db',
      dataDir: 'data',
      allowWrites: true,
      logLevel: 'debug',
      config: 'ignored-here.yaml',
      tlsCert: 'cert.pem',
      tlsKey: 'key.pem',
    });
    expect(values.map(({ key, value, source }) => [key, value, source])).toEqual([
      ['transport', 'http', '--http'],
      ['http.host', '0.0.0.0', '--http'],
      ['http.port', 9000, '--http'],
      ['database.url', 'postgres://h/db', '--database'],
      ['embedded.dataDir', 'data', '--data-dir'],
      ['database.allowWrites', true, '--allow-writes'],
      ['log.level', 'debug', '--log-level'],
      ['http.tls.cert', 'cert.pem', '--tls-cert'],
      ['http.tls.key', 'key.pem', '--tls-key'],
    ]);
  });

  it('gives nothing for an empty flag set and for stdio: false', () => {
    expect(readFlags({})).toEqual([]);
    expect(readFlags({ stdio: false })).toEqual([]);
  });

  it('refuses --stdio together with --http', () => {
    expect(() => readFlags({ stdio: true, http: '8080' })).toThrow(/--stdio and --http/);
  });

  it('names --http when its value is junk', () => {
    expect(() => readFlags({ http: 'nope' })).toThrow(
      /^http: expected \[HOST:\]PORT.*\(from --http\)$/,
    );
  });
});
