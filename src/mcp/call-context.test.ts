import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../core/principal.js';
import { buildContext, type ContextInput } from './call-context.js';

function input(disconnect?: (retryMs?: number) => boolean): ContextInput {
  return {
    channel: {
      session: null,
      principal: ANONYMOUS,
      inFlight: null,
      notify: () => undefined,
      request: () => Promise.resolve({}),
      ...(disconnect ? { disconnect } : {}),
    },
    principal: ANONYMOUS,
    signal: new AbortController().signal,
    progressToken: undefined,
    logLevel: null,
    clientCapabilities: {},
  };
}

describe('buildContext', () => {
  it('hands handlers nothing beyond CallContext', () => {
    const { ctx } = buildContext(input(() => true));
    expect(Object.keys(ctx).sort()).toEqual([
      'clientSupports',
      'log',
      'principal',
      'progress',
      'requestInput',
      'signal',
      'timing',
    ]);
  });
});
