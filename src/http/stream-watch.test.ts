// The cost side of re-checking open streams: one batched re-check per interval for all of
// them, none once no stream is open, one log line per lapsed credential, streams kept open while
// the state database is out of reach, OAuth tokens judged by their exp without a query, and
// opaque OAuth tokens asked about again at the introspection endpoint: no more often than its
// answers are cached, a few at a time, streams kept open while it is out of reach.
// (The end-to-end behaviour, over HTTP with real processes, is test/e2e/stream-credentials.)
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../core/principal.js';
import {
  createStreamWatch,
  MAX_PARALLEL_INTROSPECTIONS,
  MIN_RECHECK_MS,
  type LapseReason,
  type StreamCredential,
} from './stream-watch.js';

const principal = (userId: string, kind: Principal['kind'] = 'token'): Principal => ({
  kind,
  userId,
  tenantId: null,
  roles: [],
  scopes: [],
  claims: {},
});

const stateChecked = (key: string): StreamCredential => ({
  key,
  stateChecked: true,
  expiresAt: null,
  principal: principal(key),
});

function recorder() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { logger, lines };
}

describe('stream watch', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('re-checks every open stream in one call per interval and stops when none is open', async () => {
    const calls: string[][] = [];
    const lapsed = new Map<string, LapseReason>();
    const { logger, lines } = recorder();
    const watch = createStreamWatch({
      intervalMs: 500,
      recheck: {
        lapsedBearers: async (hashes) => {
          calls.push([...hashes]);
          return new Map([...lapsed].filter(([hash]) => hashes.includes(hash)));
        },
      },
      oauthClockSkewSeconds: 0,
      logger,
    });
    const closed: string[] = [];
    const offA1 = watch.watch(stateChecked('a'), (r) => closed.push(`a1:${r}`));
    watch.watch(stateChecked('a'), (r) => closed.push(`a2:${r}`));
    const offB = watch.watch(stateChecked('b'), (r) => closed.push(`b:${r}`));
    expect(watch.size).toBe(3);

    await vi.advanceTimersByTimeAsync(1_500);
    expect(calls).toEqual([
      ['a', 'b'],
      ['a', 'b'],
      ['a', 'b'],
    ]);
    expect(closed).toEqual([]);

    lapsed.set('a', 'revoked');
    await vi.advanceTimersByTimeAsync(500);
    expect(closed).toEqual(['a1:revoked', 'a2:revoked']);
    expect(watch.size).toBe(1);
    const logged = lines.filter((l) => l['reason'] === 'revoked');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ user: 'a', streams: 2 });
    offA1(); // the stream's own close after it lapsed changes nothing
    expect(watch.size).toBe(1);

    calls.length = 0;
    await vi.advanceTimersByTimeAsync(500);
    expect(calls).toEqual([['b']]);
    offB();
    expect(watch.size).toBe(0);
    calls.length = 0;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
    watch.close();
  });

  it('keeps streams open while the re-check fails, and says so once', async () => {
    let down = true;
    const { logger, lines } = recorder();
    const watch = createStreamWatch({
      intervalMs: 0,
      recheck: {
        lapsedBearers: async () => {
          if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          return new Map([['a', 'ended' as const]]);
        },
      },
      oauthClockSkewSeconds: 0,
      logger,
    });
    const closed: LapseReason[] = [];
    watch.watch(stateChecked('a'), (r) => closed.push(r));
    await vi.advanceTimersByTimeAsync(MIN_RECHECK_MS * 4);
    expect(closed).toEqual([]);
    expect(lines.filter((l) => String(l['msg']).includes('out of reach'))).toHaveLength(1);
    down = false;
    await vi.advanceTimersByTimeAsync(MIN_RECHECK_MS);
    expect(closed).toEqual(['ended']);
    watch.close();
  });

  it('closes the streams of an OAuth token at its exp plus the skew, without a query', async () => {
    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
    const exp = Date.now() / 1000 + 2;
    const { logger } = recorder();
    const recheck = { lapsedBearers: vi.fn(async () => new Map<string, LapseReason>()) };
    const watch = createStreamWatch({ intervalMs: 500, recheck, oauthClockSkewSeconds: 1, logger });
    const closed: LapseReason[] = [];
    watch.watch(
      { key: 'jwt', stateChecked: false, expiresAt: (exp + 1) * 1000, principal: principal('u') },
      (r) => closed.push(r),
    );
    await vi.advanceTimersByTimeAsync(2_500);
    expect(closed).toEqual([]);
    await vi.advanceTimersByTimeAsync(500);
    expect(closed).toEqual(['expired']);
    expect(recheck.lapsedBearers).not.toHaveBeenCalled();
    watch.close();
  });

  const introspected = (
    key: string,
    reintrospect: () => Promise<'active' | LapseReason>,
    expiresAt: number | null = null,
  ): StreamCredential => ({
    key,
    stateChecked: false,
    expiresAt,
    reintrospect,
    principal: principal(key, 'oauth'),
  });

  it('asks the introspection endpoint again no more often than its answers are cached', async () => {
    const { logger, lines } = recorder();
    const recheck = { lapsedBearers: vi.fn(async () => new Map<string, LapseReason>()) };
    const introspection = { introspects: () => true, recheck: vi.fn(), cacheMs: 2_000 };
    const watch = createStreamWatch({
      intervalMs: 500,
      recheck,
      oauthClockSkewSeconds: 0,
      introspection,
      logger,
    });
    let answer: 'active' | LapseReason = 'active';
    const asked: string[] = [];
    const closed: string[] = [];
    const ask = (key: string) => async () => {
      asked.push(key);
      return answer;
    };
    // Without an exp, and with one far off: both are asked about.
    watch.watch(introspected('noexp', ask('noexp')), (r) => closed.push(`noexp:${r}`));
    watch.watch(introspected('exp', ask('exp'), Date.now() + 3600_000), (r) =>
      closed.push(`exp:${r}`),
    );
    await vi.advanceTimersByTimeAsync(1_500);
    expect(asked).toEqual([]);
    await vi.advanceTimersByTimeAsync(500);
    expect(asked.sort()).toEqual(['exp', 'noexp']);
    await vi.advanceTimersByTimeAsync(1_500);
    expect(asked).toHaveLength(2);
    answer = 'revoked';
    await vi.advanceTimersByTimeAsync(500);
    expect(asked).toHaveLength(4);
    expect(closed.sort()).toEqual(['exp:revoked', 'noexp:revoked']);
    expect(watch.size).toBe(0);
    expect(lines.filter((l) => l['reason'] === 'revoked')).toHaveLength(2);
    expect(recheck.lapsedBearers).not.toHaveBeenCalled();
    expect(introspection.recheck).not.toHaveBeenCalled(); // the credential's own closure asks
    expect(vi.getTimerCount()).toBe(0);
    watch.close();
  });

  it('asks about a few tokens at a time, and keeps streams open while the endpoint is away', async () => {
    const { logger, lines } = recorder();
    const watch = createStreamWatch({
      intervalMs: 500,
      recheck: null,
      oauthClockSkewSeconds: 0,
      introspection: { introspects: () => true, recheck: vi.fn(), cacheMs: 0 },
      logger,
    });
    let inFlight = 0;
    let most = 0;
    let down = true;
    const asked: string[] = [];
    const ask = (key: string) => async (): Promise<'active' | LapseReason> => {
      asked.push(key);
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 100));
      inFlight--;
      if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:9');
      return key === 't3' ? 'revoked' : 'active';
    };
    const closed: string[] = [];
    for (let i = 0; i < 10; i++) {
      watch.watch(introspected(`t${i}`, ask(`t${i}`)), (r) => closed.push(`t${i}:${r}`));
    }
    await vi.advanceTimersByTimeAsync(500 * 4);
    expect(asked.length).toBeGreaterThanOrEqual(20);
    expect(most).toBe(MAX_PARALLEL_INTROSPECTIONS);
    expect(closed).toEqual([]);
    expect(watch.size).toBe(10);
    const away = lines.filter((l) => String(l['msg']).includes('introspection endpoint'));
    expect(away).toHaveLength(1);
    expect(JSON.stringify(away[0])).toContain('ECONNREFUSED');

    down = false;
    await vi.advanceTimersByTimeAsync(500 * 2);
    expect(closed).toEqual(['t3:revoked']);
    expect(watch.size).toBe(9);
    expect(lines.filter((l) => l['msg'] === 'open streams are re-checked again')).toHaveLength(1);
    watch.close();
  });
});
