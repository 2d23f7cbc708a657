import { describe, expect, it } from 'vitest';
import { prebuild, serialize } from './serialize.js';

describe('serialize', () => {
  it('is JSON.stringify, with prebuilt parts spliced in unchanged', () => {
    const tools = prebuild([{ name: 'a', description: 'tab\there "quoted"' }]);
    const message = { jsonrpc: '2.0', id: 7, result: { tools, ttlMs: 5 } };
    expect(serialize(message)).toBe(JSON.stringify(message));
    expect(JSON.parse(serialize([tools, tools]))).toEqual([tools, tools]);
    expect(serialize({ plain: true })).toBe('{"plain":true}');
  });
});
