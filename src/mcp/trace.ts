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
    attributes['jsonrpc.request.id'] = String(request.id);
  const version = channel.session?.protocolVersion;
  if (version) attributes['mcp.protocol.version'] = version;
  const named = params['name'];
  let target: string | null = null;
  if (typeof named === 'string' && names.target(method, named)) target = named;
  if (target !== null && method === 'tools/call') {
    attributes['gen_ai.tool.name'] = target;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  } else if (target !== null && method === 'prompts/get') attributes['gen_ai.prompt.name'] = target;

  const meta = isObject(params['_meta']) ? params['_meta'] : null;
  const parent = meta ? incomingContext(meta) : null;
  const link = parent ? activeLink() : null;
  return inSpan(
    target ? `${method} ${target}` : method,
    attributes,
    async (span) => {
      const outcome = await answer();
      const response = outcome.response;
      if (span && 'error' in response) {
        span.setAttribute('rpc.jsonrpc.error_code', response.error.code);
        failSpan(span, String(response.error.code));
      } else if (span && 'result' in response && response.result['isError'] === true) {
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
