import { afterEach, describe, expect, it, vi } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import { createPoolGate } from './pool-gate.js';

describe('the pool gate: a bounded queue in front of the connections', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('grants up to size places at once, then queues, and hands a freed place to the first waiter', async () => {
    const gate = createPoolGate({ size: 2, queueLimit: 5, queueTimeoutMs: 60_000 });
    const a = await gate.acquire();
    await gate.acquire();
    expect(gate.active).toBe(2);
    const order: string[] = [];
    const third = gate.acquire().then((release) => (order.push('third'), release));
    const fourth = gate.acquire().then((release) => (order.push('fourth'), release));
    expect(gate.waiting).toBe(2);
    a();
    a(); // a second call of the same release changes nothing
    (await third)();
    (await fourth)();
    expect(order).toEqual(['third', 'fourth']);
    expect(gate.waiting).toBe(0);
    expect(gate.active).toBe(1);
  });

  it('refuses at once when queueLimit calls already wait: PGMCP212 with Retry-After seconds', async () => {
    const gate = createPoolGate({ size: 1, queueLimit: 1, queueTimeoutMs: 3_500 });
    await gate.acquire();
    void gate.acquire().catch(() => undefined);
    const error = await gate.acquire().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: ErrorCodes.DB_BUSY,
      category: 'unavailable',
      details: { reason: 'queue full', retryAfterSeconds: 4, poolSize: 1, queueLimit: 1 },
    });
    expect((error as Error).message).toMatch(/database\.queueLimit/);
  });

  it('a waiter that gets no place in queueTimeoutMs is refused and leaves the queue', async () => {
    vi.useFakeTimers();
    const gate = createPoolGate({ size: 1, queueLimit: 10, queueTimeoutMs: 200 });
    const held = await gate.acquire();
    const waiting = gate.acquire().catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(200);
    expect(await waiting).toMatchObject({
      code: ErrorCodes.DB_BUSY,
      details: { reason: 'queue wait timed out', retryAfterSeconds: 1 },
    });
    expect(gate.waiting).toBe(0);
    held();
    expect(gate.active).toBe(0);
  });

  it('a waiter whose caller cancels leaves the queue with a cancel', async () => {
    const gate = createPoolGate({ size: 1, queueLimit: 10, queueTimeoutMs: 60_000 });
    await gate.acquire();
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal).catch((e: unknown) => e);
    controller.abort();
    expect(await waiting).toMatchObject({ code: ErrorCodes.DB_CANCELLED });
    expect(gate.waiting).toBe(0);
  });
});
