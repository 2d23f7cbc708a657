import { describe, expect, it } from 'vitest';
import { changedKeys } from './reload.js';

describe('changedKeys', () => {
  it('names the leaves that differ, by dotted path; lists compare whole', () => {
    expect(
      changedKeys(
        { log: { level: 'info' }, http: { tls: { cert: 'a' }, hosts: ['x'] }, same: 1 },
        { log: { level: 'debug' }, http: { tls: { cert: 'a' }, hosts: ['x', 'y'] }, same: 1 },
      ),
    ).toEqual(['log.level', 'http.hosts']);
    expect(changedKeys({ a: { b: 1 } }, { a: { b: 1 } })).toEqual([]);
    expect(changedKeys({ a: null }, { a: { b: 1 } })).toEqual(['a']);
  });
});
