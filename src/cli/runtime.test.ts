import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodes } from '../core/errors.js';
import { checkRuntime, NODE20_LAST_DAY, runtimeVerdict } from './runtime.js';

const day = (iso: string): Date => new Date(`${iso}T12:00:00Z`);

describe('runtimeVerdict', () => {
  it('supports the LTS lines 22 and 24, and what comes after', () => {
    for (const version of ['22.0.0', '22.23.3', '24.21.0', '26.1.0']) {
      expect(runtimeVerdict(version, day('2030-01-01'))).toEqual({ kind: 'supported' });
    }
  });

  it('warns on Node 20 up to its last day, naming the day and what to install', () => {
    for (const today of ['2026-11-28', NODE20_LAST_DAY]) {
      const verdict = runtimeVerdict('20.20.2', day(today));
      expect(verdict.kind).toBe('deprecated');
      expect(verdict).toMatchObject({
        message: expect.stringContaining(`until ${NODE20_LAST_DAY}`),
      });
      expect(verdict).toMatchObject({ message: expect.stringContaining('Node 22 or 24') });
    }
  });

  it('refuses Node 20 from the day after, and any Node older than 20 or between', () => {
    expect(runtimeVerdict('20.20.2', day('2027-04-01')).kind).toBe('unsupported');
    for (const version of ['18.20.8', '21.7.3', '16.0.0']) {
      expect(runtimeVerdict(version, day('2026-11-28')).kind).toBe('unsupported');
    }
  });
});

describe('checkRuntime', () => {
  it('throws a configuration AppError (exit 2) on a Node pgmcp does not run on', async () => {
    const error = await checkRuntime('18.20.8', day('2026-11-28')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: ErrorCodes.RUNTIME_UNSUPPORTED,
      category: 'config',
      message: expect.stringContaining('Node 18.20.8 is not supported'),
    });
  });

  it('passes a supported Node silently', async () => {
    await expect(checkRuntime('24.21.0', day('2026-11-28'))).resolves.toBeUndefined();
  });
});
