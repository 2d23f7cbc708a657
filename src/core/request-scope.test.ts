import { describe, expect, it } from 'vitest';
import {
  answeringServer,
  currentRequestId,
  noteServer,
  noteServersOf,
  requestIdFrom,
  runInRequestScope,
} from './request-scope.js';

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

  it('notes the database server of a call, inside a request and outside one', async () => {
    // Outside a request (the chat agent's tool call): the call's own note, no request id.
    const alone = await noteServersOf(async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      noteServer('replica:5432');
      return currentRequestId();
    });
    expect(alone.result).toBeNull();
    expect(alone.server()).toBe('replica:5432');
    expect(answeringServer()).toBeNull();
    // Inside one: the request hears of it too (its Server-Timing), keeping its id.
    const inside = await runInRequestScope({ requestId: 'r-2' }, async () => {
      const call = await noteServersOf(async () => {
        noteServer('primary:5432');
        return currentRequestId();
      });
      return { id: call.result, server: call.server(), request: answeringServer() };
    });
    expect(inside).toEqual({ id: 'r-2', server: 'primary:5432', request: 'primary:5432' });
  });
});
