// Spans, through the OpenTelemetry API only. The SDK (the exporter, the sampler, the propagator)
// is set up by the composition root (cli/telemetry.ts), which turns tracing on here and hands
// over the API module it loaded. Until it does, every helper below runs its work directly and
// nothing of OpenTelemetry is even loaded: tracing that is off costs one boolean test per stage
// (and a stdio server's first answer does not wait for the API's modules).
import type * as OtelApi from '@opentelemetry/api';
import type { Attributes, Context, Link, Span } from '@opentelemetry/api';

export type { Attributes, Context, Span };
export type Api = typeof OtelApi;

/** OpenTelemetry's SpanKind values (the API's enum, without loading it). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2 } as const;
type Kind = (typeof SpanKind)[keyof typeof SpanKind];
const STATUS_ERROR = 2; // SpanStatusCode.ERROR

export interface TracingSettings {
  /** Spans are recorded (an SDK is registered). */
  on: boolean;
  /** PostgreSQL spans carry the statement's text (db.query.text). */
  includeSql: boolean;
  /** A tool call's statements end with a sqlcommenter comment naming the span. */
  sqlComment: boolean;
}

const settings: TracingSettings = { on: false, includeSql: false, sqlComment: false };
let api: Api | null = null;

/** Called by the composition root: on with the API module (after the SDK is registered), or off. */
export function configureTracing(next: TracingSettings, otel: Api | null = null): void {
  Object.assign(settings, next, { on: next.on && otel !== null });
  api = settings.on ? otel : null;
}

export function tracingSettings(): Readonly<TracingSettings> {
  return settings;
}

const tracer = () => api!.trace.getTracer('pgmcp');

export interface SpanOptions {
  kind?: Kind;
  /** The parent; default: the active context. */
  parent?: Context;
  links?: Link[];
}

/**
 * Runs `work` in a span of its own (the active one while it runs), ended when it settles. A
 * failure marks the span with its code only (error.type): an error's message may quote values
 * of the caller's data, which a trace must not carry.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | null) => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  if (!settings.on) return work(null);
  const parent = options.parent ?? api!.context.active();
  const spanOptions = {
    attributes,
    kind: options.kind ?? SpanKind.INTERNAL,
    ...(options.links ? { links: options.links } : {}),
  };
  return tracer().startActiveSpan(name, spanOptions, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failSpan(span, errorType(error));
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A span started now and ended by the caller (one that outlives a call stack: an HTTP request). */
export function startSpan(
  name: string,
  attributes: Attributes,
  options: SpanOptions = {},
): { span: Span; context: Context } | null {
  if (!settings.on) return null;
  const parent = options.parent ?? api!.context.active();
  const span = tracer().startSpan(
    name,
    { attributes, kind: options.kind ?? SpanKind.INTERNAL },
    parent,
  );
  return { span, context: api!.trace.setSpan(parent, span) };
}

/** Runs `work` with `ctx` active (null: as it is). */
export function withContext<T>(ctx: Context | null, work: () => T): T {
  return ctx === null || api === null ? work() : api.context.with(ctx, work);
}

/** Marks a span as failed with a bounded error type (a code, a SQLSTATE, a category). */
export function failSpan(span: Span, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: STATUS_ERROR });
}

/** The code an error is known by: pgmcp's PGMCPnnn, a SQLSTATE, else its class name. */
export function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { code, sqlState } = error as { code?: unknown; sqlState?: unknown };
    if (typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState)) return sqlState;
    if (typeof code === 'string' && /^[0-9A-Za-z_]{1,32}$/.test(code)) return code;
    if (error instanceof Error && /^\w{1,64}$/.test(error.name)) return error.name;
  }
  return 'Error';
}

/**
 * The trace context a carrier (HTTP headers, an MCP request's `_meta`) names, by the registered
 * propagator (W3C traceparent and tracestate): null when tracing is off or it names none.
 */
export function incomingContext(carrier: Record<string, unknown>): Context | null {
  if (!settings.on || api === null) return null;
  const fields: Record<string, string> = {};
  for (const key of ['traceparent', 'tracestate']) {
    const value = carrier[key];
    if (typeof value === 'string') fields[key] = value;
    else if (Array.isArray(value) && typeof value[0] === 'string') fields[key] = value[0];
  }
  if (fields['traceparent'] === undefined) return null;
  const extracted = api.propagation.extract(api.ROOT_CONTEXT, fields);
  return api.trace.getSpanContext(extracted) ? extracted : null;
}

/** Whether a span is active (work outside any request, such as a catalog reload, makes none). */
export function inTrace(): boolean {
  return api !== null && api.trace.getSpan(api.context.active()) !== undefined;
}

/** The active span's context as a link (to keep a transport's span reachable from a trace it is not in). */
export function activeLink(): Link | null {
  if (api === null) return null;
  const span = api.trace.getSpan(api.context.active());
  return span ? { context: span.spanContext() } : null;
}

const HEX = (length: number) => new RegExp(`^[0-9a-f]{${length}}$`);
const TRACE_ID = HEX(32);
const SPAN_ID = HEX(16);

/**
 * The sqlcommenter comment naming the active span (`/*traceparent='00-…-…-01'*\/`), or '' when
 * comments are off or no span is recording. Built from the span's own ids, checked to be hex,
 * never from text a client sent: nothing of a caller's can end the comment early.
 */
export function sqlComment(): string {
  if (!settings.on || !settings.sqlComment || api === null) return '';
  const span = api.trace.getSpan(api.context.active());
  if (!span) return '';
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!TRACE_ID.test(traceId) || !SPAN_ID.test(spanId) || /^0+$/.test(traceId)) return '';
  const flags = (traceFlags & 0xff).toString(16).padStart(2, '0');
  return `/*traceparent='00-${traceId}-${spanId}-${flags}'*/`;
}

/** A statement's operation for a span (`SELECT`, `WITH`, `BEGIN`): its first keyword, or null. */
export function sqlOperation(text: string): string | null {
  let rest = text.slice(0, 4096);
  for (;;) {
    const trimmed = rest.replace(/^[\s(]+/, '');
    if (trimmed.startsWith('--')) rest = trimmed.replace(/^--[^\n]*(\n|$)/, '');
    else if (trimmed.startsWith('/*')) {
      const end = trimmed.indexOf('*/');
      if (end < 0) return null;
      rest = trimmed.slice(end + 2);
    } else {
      rest = trimmed;
      break;
    }
  }
  const word = /^[A-Za-z]{1,16}\b/.exec(rest);
  return word ? word[0].toUpperCase() : null;
}

/**
 * The AI SDK's own telemetry settings (its spans: the call, each step's model call, each tool
 * call), on when tracing is. Prompts and answers stay out of the spans: they are the user's
 * words and the database's values.
 */
export function aiTelemetry(functionId: string): {
  isEnabled: boolean;
  recordInputs: boolean;
  recordOutputs: boolean;
  functionId: string;
} {
  return { isEnabled: settings.on, recordInputs: false, recordOutputs: false, functionId };
}
