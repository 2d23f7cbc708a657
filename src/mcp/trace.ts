// A span per MCP request (server kind), named and described by OpenTelemetry's MCP conventions:
// `tools/call query_database`, mcp.method.name, the protocol version (not the session's id: it
// is what a legacy client holds its session by). A client's
// trace continues through pgmcp from the W3C trace context in the request's `_meta`
// (`traceparent`, `tracestate`); the transport's own span (an HTTP request's), when it is not
// the parent, is linked. Names come from the method table and the registry, never from a
// client's text: a span name stays one of a bounded set.
import {
  activeLink,
  failSpan,
  incomingContext,
  inSpan,
  SpanKind,
  tracingSettings,
  type Attributes,
} from '../core/tracing.js';
import type { RequestChannel } from './channel.js';
import { isObject, type JsonRpcRequest } from './jsonrpc.js';
import type { Era, Outcome } from './dispatcher.js';

export interface TraceNames {
  /** Whether the method exists (else the span is named `unknown`). */
  method(name: string): boolean;
  /** Whether a tool, prompt or resource template of this name exists. */
  target(method: string, name: string): boolean;
}

export function traceRequest(
  request: JsonRpcRequest,
  era: Era,
  channel: RequestChannel,
  names: TraceNames,
  answer: () => Promise<Outcome>,
): Promise<Outcome> {
  if (!tracingSettings().on) return answer();
  const params = request.params ?? {};
  const method = names.method(request.method) ? request.method : 'unknown';
  const attributes: Attributes = {
    'mcp.method.name': method,
    'rpc.system': 'jsonrpc',
    'pgmcp.era': era,
  };
  if (typeof request.id === 'string' || typeof request.id === 'number')
    attributes['jsonrpc.request.id'] = String(request.id).slice(0, 128); // a client's own text
  const version = channel.session?.protocolVersion;
  if (version) attributes['mcp.protocol.version'] = version;
  /**
   * The tool or prompt named, once it is known to exist: asked after the answer, since a stdio
   * request may arrive before start-up has filled the registry.
   */
  const named = params['name'];
  const target = (): string | null =>
    typeof named === 'string' && names.target(method, named) ? named : null;
  const early = target();

  const meta = isObject(params['_meta']) ? params['_meta'] : null;
  const parent = meta ? incomingContext(meta) : null;
  const link = parent ? activeLink() : null;
  return inSpan(
    early ? `${method} ${early}` : method,
    attributes,
    async (span) => {
      const outcome = await answer();
      if (span === null) return outcome;
      const known = early ?? target();
      if (known !== null && early === null) span.updateName(`${method} ${known}`);
      if (known !== null && method === 'tools/call') {
        span.setAttribute('gen_ai.tool.name', known);
        span.setAttribute('gen_ai.operation.name', 'execute_tool');
      } else if (known !== null && method === 'prompts/get') {
        span.setAttribute('gen_ai.prompt.name', known);
      }
      const response = outcome.response;
      if ('error' in response) {
        span.setAttribute('rpc.jsonrpc.error_code', response.error.code);
        failSpan(span, String(response.error.code));
      } else if ('result' in response && response.result['isError'] === true) {
        failSpan(span, 'tool_error');
      }
      return outcome;
    },
    {
      kind: SpanKind.SERVER,
      ...(parent ? { parent } : {}),
      ...(link ? { links: [link] } : {}),
    },
  );
}
