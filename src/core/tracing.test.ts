import * as api from '@opentelemetry/api';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configureTracing, incomingContext, inSpan, sqlComment, sqlOperation } from './tracing.js';

describe('sqlOperation', () => {
  it.each([
    ['SELECT 1', 'SELECT'],
    ['  \n select * from t', 'SELECT'],
    ['-- why\n/* what */ (SELECT 1) UNION (SELECT 2)', 'SELECT'],
    ['/* a */ /* b */with x as (select 1) select * from x', 'WITH'],
    ['BEGIN READ ONLY', 'BEGIN'],
    ['/* unterminated', null],
    ["'text'", null],
    ['', null],
  ])('%j → %s', (text, operation) => {
    expect(sqlOperation(text)).toBe(operation);
  });

  it('is a bounded word, whatever the text', () => {
    expect(sqlOperation(`${'x'.repeat(40)} 1`)).toBeNull();
    expect(sqlOperation('EXPLAIN ANALYZE SELECT')).toBe('EXPLAIN');
  });
});

describe('trace context and sqlcommenter comments', () => {
  // The W3C propagator and the AsyncLocalStorage context manager, as cli/telemetry.ts registers them.
  beforeAll(() => {
    new NodeTracerProvider().register();
  });
  afterEach(() => configureTracing({ on: false, includeSql: false, sqlComment: false }));

  const traceId = '0af7651916cd43dd8448eb211c80319c';
  const spanId = 'b7ad6b7169203331';

  it('reads a W3C traceparent (and tracestate) from a carrier, only when tracing is on', () => {
    const carrier = { traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'a=b' };
    expect(incomingContext(carrier)).toBeNull();
    configureTracing({ on: true, includeSql: false, sqlComment: false }, api);
    const span = trace.getSpanContext(incomingContext(carrier)!);
    expect(span).toMatchObject({ traceId, spanId, isRemote: true });
    expect(span?.traceState?.get('a')).toBe('b');
  });

  it('ignores a traceparent that is not one', () => {
    configureTracing({ on: true, includeSql: false, sqlComment: false }, api);
    for (const traceparent of [
      `00-${traceId}-${spanId}-01'*/ DROP TABLE t /*`,
      `00-${'0'.repeat(32)}-${spanId}-01`,
      'nonsense',
    ]) {
      expect(incomingContext({ traceparent }), traceparent).toBeNull();
    }
    expect(incomingContext({})).toBeNull();
  });

  it('a comment names the active span by its ids, and only when it is asked for', async () => {
    const active = trace.setSpanContext(context.active(), {
      traceId,
      spanId,
      traceFlags: TraceFlags.SAMPLED,
    });
    const inActive = () => context.with(active, sqlComment);
    expect(inActive()).toBe('');
    configureTracing({ on: true, includeSql: false, sqlComment: false }, api);
    expect(inActive()).toBe('');
    configureTracing({ on: true, includeSql: false, sqlComment: true }, api);
    expect(sqlComment()).toBe('');
    expect(inActive()).toBe(`/*traceparent='00-${traceId}-${spanId}-01'*/`);
  });

  it('runs the work directly when tracing is off', async () => {
    let seen: unknown = 'unset';
    await inSpan('off', {}, async (span) => {
      seen = span;
    });
    expect(seen).toBeNull();
  });
});
