// Streamable HTTP header rules that are MCP's, not HTTP's: kept here so http/ only wires them.
import type { JsonSchema } from '../core/json-schema.js';
import { isObject, RpcCodes, RpcError, type JsonRpcRequest } from './jsonrpc.js';
import { ALL_VERSIONS, META_PROTOCOL_VERSION } from './versions.js';

export type HeaderValue = string | string[] | undefined;
// A header's value, trimmed (the first one if repeated); '' when present but empty.
const one = (value: HeaderValue): string | undefined =>
  (Array.isArray(value) ? value[0] : value)?.trim();

/** A header's value, trimmed; undefined when absent or empty. */
export const headerValue = (value: HeaderValue): string | undefined => one(value) || undefined;

/**
 * Modern era: MCP-Protocol-Version must repeat the _meta version, and Mcp-Method /
 * Mcp-Name must agree with the body. Throws RpcError(-32020).
 */
export function checkModernHeaders(
  request: JsonRpcRequest,
  headers: Record<string, HeaderValue>,
  /** The input schema of a tool, for arguments mirrored into Mcp-Param-* headers. */
  toolSchema?: (name: string) => JsonSchema | undefined,
): void {
  const meta = request.params?.['_meta'];
  const version = isObject(meta) ? meta[META_PROTOCOL_VERSION] : undefined;
  const headerVersion = one(headers['mcp-protocol-version']);
  // A missing _meta version is the envelope's problem (-32602), judged by the dispatcher.
  if (version !== undefined && headerVersion !== version) {
    throw new RpcError(
      RpcCodes.HEADER_MISMATCH,
      headerVersion === undefined
        ? 'The MCP-Protocol-Version header is required and must equal _meta protocolVersion.'
        : `MCP-Protocol-Version header (${headerVersion}) does not match _meta protocolVersion (${String(version)}).`,
    );
  }
  const method = one(headers['mcp-method']);
  if (method !== request.method) {
    throw new RpcError(
      RpcCodes.HEADER_MISMATCH,
      method === undefined
        ? `The Mcp-Method header is required and must equal the body method (${request.method}).`
        : `Mcp-Method header (${method}) does not match the body method (${request.method}).`,
    );
  }
  const params = request.params ?? {};
  const expected =
    request.method === 'resources/read'
      ? params['uri']
      : NAMED.has(request.method)
        ? params['name']
        : TASK_NAMED.has(request.method)
          ? params['taskId']
          : undefined;
  const name = one(headers['mcp-name']);
  if (expected !== undefined && name !== expected) {
    throw new RpcError(
      RpcCodes.HEADER_MISMATCH,
      name === undefined
        ? `The Mcp-Name header is required for ${request.method} and must equal the body (${String(expected)}).`
        : `Mcp-Name header (${name}) does not match the body (${String(expected)}).`,
    );
  }
  if (request.method === 'tools/call' && typeof expected === 'string') {
    const schema = toolSchema?.(expected);
    if (schema) checkMirroredArguments(request, headers, schema);
  }
}

/** Arguments a tool mirrors into headers: `x-mcp-header: "Region"` → Mcp-Param-Region. */
const mirrored = new WeakMap<JsonSchema, [argument: string, header: string][]>();
function mirroredArguments(schema: JsonSchema): [string, string][] {
  let found = mirrored.get(schema);
  if (!found) {
    const properties = isObject(schema['properties']) ? schema['properties'] : {};
    found = Object.entries(properties).flatMap(([name, property]) =>
      isObject(property) && typeof property['x-mcp-header'] === 'string'
        ? [[name, property['x-mcp-header']] as [string, string]]
        : [],
    );
    mirrored.set(schema, found);
  }
  return found;
}

const BASE64_SENTINEL = /^=\?base64\?(.*)\?=$/;
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A header value as text: `=?base64?…?=` is strict Base64 of UTF-8, anything else literal. */
function headerText(value: string): string | null {
  const wrapped = BASE64_SENTINEL.exec(value);
  if (!wrapped) return value;
  const body = wrapped[1] ?? '';
  return STRICT_BASE64.test(body) ? Buffer.from(body, 'base64').toString('utf8') : null;
}

function checkMirroredArguments(
  request: JsonRpcRequest,
  headers: Record<string, HeaderValue>,
  schema: JsonSchema,
): void {
  const args = isObject(request.params?.['arguments']) ? request.params['arguments'] : {};
  for (const [argument, name] of mirroredArguments(schema)) {
    const value = args[argument];
    const raw = one(headers[`mcp-param-${name.toLowerCase()}`]);
    if (value === undefined || value === null) {
      if (raw === undefined) continue;
      throw new RpcError(
        RpcCodes.HEADER_MISMATCH,
        `Mcp-Param-${name} is set but argument ${argument} is absent.`,
      );
    }
    if (raw === undefined) {
      throw new RpcError(
        RpcCodes.HEADER_MISMATCH,
        `The Mcp-Param-${name} header is required: it must repeat argument ${argument}.`,
      );
    }
    const text = headerText(raw);
    if (text === null) {
      throw new RpcError(RpcCodes.HEADER_MISMATCH, `Mcp-Param-${name} holds invalid Base64.`);
    }
    if (text !== String(value)) {
      throw new RpcError(
        RpcCodes.HEADER_MISMATCH,
        `Mcp-Param-${name} does not match argument ${argument}.`,
      );
    }
  }
}

/** Methods whose params.name the Mcp-Name header repeats. */
const NAMED = new Set(['tools/call', 'prompts/get']);
/** Methods whose params.taskId the Mcp-Name header repeats (the tasks extension). */
const TASK_NAMED = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** Legacy era: a present MCP-Protocol-Version must name a version we serve. */
export function checkLegacyVersionHeader(headers: Record<string, HeaderValue>): string | undefined {
  const value = one(headers['mcp-protocol-version']);
  if (value !== undefined && !ALL_VERSIONS.includes(value)) {
    return `Unsupported MCP-Protocol-Version: ${value}. Supported: ${ALL_VERSIONS.join(', ')}.`;
  }
  return undefined;
}
