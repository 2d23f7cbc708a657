import { describe, expect, it } from 'vitest';
import { tracingWanted } from './telemetry.js';

const off = { otlpEndpoint: null, includeSql: false, sqlComment: false };
const on = { ...off, otlpEndpoint: 'http://127.0.0.1:4318' };

describe('tracingWanted', () => {
  it('is off unless an OTLP endpoint is named', () => {
    expect(tracingWanted(off, {})).toBe(false);
    expect(tracingWanted(off, { OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
    expect(tracingWanted(on, {})).toBe(true);
    expect(tracingWanted(off, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(
      tracingWanted(off, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }),
    ).toBe(true);
  });

  it('honours OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none', () => {
    expect(tracingWanted(on, { OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingWanted(on, { OTEL_SDK_DISABLED: 'false' })).toBe(true);
    expect(tracingWanted(on, { OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    expect(tracingWanted(on, { OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
  });
});
