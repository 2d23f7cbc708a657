import { describe, expect, it } from 'vitest';
import { currentRequestId, requestIdFrom, runInRequestScope } from './request-scope.js';

describe('request scope', () => {
  it('is what the code of a request reads, across awaits, and nothing outside one', async () => {
    expect(currentRequestId()).toBeNull();
    const seen = await runInRequestScope({ requestId: 'r-1' }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentRequestId();
    });
    expect(seen).toBe('r-1');
    expect(currentRequestId()).toBeNull();
  });

  it('takes a given id only when it is short and plain, else makes one', () => {
    expect(requestIdFrom('abc-123_x.y:z')).toBe('abc-123_x.y:z');
    for (const bad of [undefined, '', 'a b', 'x'.repeat(129), 'line\nbreak', "'; drop"]) {
      expect(requestIdFrom(bad)).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
