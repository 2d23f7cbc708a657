// A span per HTTP request (server kind, OpenTelemetry's HTTP conventions), continuing the trace
// the request's W3C `traceparent`/`tracestate` headers name. Registered only when tracing is on.
//
// The span is made active for the route's handler from the last preHandler hook, where Fastify
// calls the handler: the body is read by stream events, which would not carry the context from
// onRequest. What runs before (Host/Origin, authentication, rate limits) stays outside it.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  failSpan,
  incomingContext,
  SpanKind,
  startSpan,
  tracingSettings,
  withContext,
  type Context,
  type Span,
} from '../core/tracing.js';

interface RequestSpan {
  span: Span;
  context: Context;
  ended: boolean;
}

export function registerTracing(app: FastifyInstance): void {
  if (!tracingSettings().on) return;
  const spans = new WeakMap<FastifyRequest, RequestSpan>();
  const end = (req: FastifyRequest, status: number | null): void => {
    const open = spans.get(req);
    if (!open || open.ended) return;
    open.ended = true;
    if (status === null) failSpan(open.span, 'aborted');
    else {
      open.span.setAttribute('http.response.status_code', status);
      if (status >= 500) failSpan(open.span, String(status));
    }
    open.span.end();
  };

  app.addHook('onRequest', (req, _reply, done) => {
    // The route's pattern, not the raw URL: a bounded set of span names.
    const route = req.routeOptions.url;
    const path = req.url.split('?', 1)[0] ?? '';
    const parent = incomingContext(req.headers);
    const started = startSpan(
      route ? `${req.method} ${route}` : req.method,
      {
        'http.request.method': req.method,
        'url.path': path,
        'url.scheme': req.protocol,
        ...(route ? { 'http.route': route } : {}),
      },
      { kind: SpanKind.SERVER, ...(parent ? { parent } : {}) },
    );
    if (started) spans.set(req, { ...started, ended: false });
    done();
  });
  app.addHook('preHandler', (req, _reply, done) => {
    withContext(spans.get(req)?.context ?? null, done);
  });
  app.addHook('onResponse', (req, reply, done) => {
    end(req, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (req, done) => {
    end(req, null);
    done();
  });
}
