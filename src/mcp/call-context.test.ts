import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../core/principal.js';
import { buildContext, type ContextInput, type RequestHandle } from './call-context.js';

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

describe('buildContext extend', () => {
  it('hands nothing beyond CallContext to handlers when no extender is given', () => {
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

  it("gives the extender the round and the channel's disconnect, until the call is answered", () => {
    const hints: Array<number | undefined> = [];
    let seen: RequestHandle | undefined;
    const built = buildContext({
      ...input((retryMs) => {
        hints.push(retryMs);
        return true;
      }),
      round: 2,
      extend: (ctx, request) => {
        seen = request;
        return { ...ctx, marker: true } as typeof ctx;
      },
    });
    expect((built.ctx as unknown as { marker: boolean }).marker).toBe(true);
    expect(seen!.round).toBe(2);
    expect(seen!.disconnect(150)).toBe(true);
    built.finish();
    expect(seen!.disconnect(150)).toBe(false);
    expect(hints).toEqual([150]);
  });

  it('reports round 0 and no disconnect where the transport cannot drop a stream', () => {
    let seen: RequestHandle | undefined;
    buildContext({
      ...input(),
      extend: (ctx, request) => {
        seen = request;
        return ctx;
      },
    });
    expect(seen!.round).toBe(0);
    expect(seen!.disconnect()).toBe(false);
  });
});
